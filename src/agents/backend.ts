/**
 * The agent backend contract. A backend turns one caller message into a stream of events;
 * the executor bridge (`src/tasks/`) turns those events into task state, artifacts and
 * protocol events. Backends never see a dialect, a token or another caller's session.
 *
 * @example
 * ```ts
 * const shout: AgentBackend = {
 *   kind: 'shout',
 *   async *run(turn) {
 *     yield { type: 'text', text: textOf(turn.message).toUpperCase() };
 *     yield { type: 'completed' };
 *   },
 * };
 * ```
 */
import type { Artifact, Message, Part, Task } from '../protocol/model.js';
import { AirlockError } from '../errors/index.js';
import type { OutboundSubject } from '../identity/delegation.js';
import type { TurnToolbox } from './tools.js';

/**
 * The most a `propose-action` continuation may take as JSON (UTF-8 bytes): what the gateway keeps
 * with the action and hands back. A larger one is refused.
 *
 * @example
 * ```ts
 * if (Buffer.byteLength(JSON.stringify(transcript)) > MAX_CONTINUATION_BYTES) yield { type: 'failed', reason: 'too long to park' };
 * ```
 */
export const MAX_CONTINUATION_BYTES = 256 * 1024;

/** What a backend knows about the turn it is asked to run. */
export interface AgentTurn {
  /**
   * Stable per (caller principal, contextId): `a2a-` + SHA-256. Two callers that send the same
   * contextId get two sessions. Backends key any conversation memory by this id.
   */
  readonly sessionId: string;
  readonly taskId: string;
  readonly contextId: string;
  /** The caller's message that started (or resumed) this turn. */
  readonly message: Message;
  /** The task as it stands, history included (read-only snapshot). */
  readonly task: Readonly<Task>;
  /** True when this turn resumes an interrupted (input-required) task. */
  readonly resumed: boolean;
  /** Aborted when the task is canceled or the gateway shuts down. Backends must stop promptly. */
  readonly signal: AbortSignal;
  /**
   * The same as `signal.aborted`, for backends that only ever poll: the executor bridge creates
   * the AbortSignal when a backend first reads `signal`, so polling this instead costs nothing.
   * Optional: a turn built by other code may leave it out, and a copy (`{ ...turn }`) does not
   * carry it; read it through `isAborted`, which falls back on the signal.
   */
  readonly aborted?: boolean;
  /**
   * What a model backend must send instead of the raw text of `message`: `system` as the system
   * (or developer) instruction and `user` as the user turn. `user` holds the caller's text inside
   * the untrusted-content markers under a standing warning; `system` says the request is external
   * and untrusted and that internals stay internal (see `buildInboundPrompt` in `./inbound/`).
   * Set by the gateway on inbound A2A turns. A model backend that finds it absent must build one
   * with `buildInboundPrompt(textOf(message))` rather than send the caller's text as it is.
   * Backends that call no model (echo, writer) ignore it.
   */
  readonly prompt?: { readonly system: string; readonly user: string };
  /**
   * The tools this turn may use, and the one way to call them (`./tools.ts`). Absent or with no
   * offers means none: the backend must offer the model no tool at all, and must never run a
   * tool but through `tools.call` / `tools.runApproved`, whatever its own configuration holds.
   */
  readonly tools?: TurnToolbox;
  /**
   * The conversation of this session before `message`, oldest first, read from the task store
   * (so it lasts as long as the store keeps the tasks): earlier tasks in the same contextId of the
   * same caller, then the earlier messages of this task. Text only. Bounded: at most `maxTurns`
   * user entries (each with the agent entries after it) and `maxChars` characters in all, the
   * newest kept. User entries are the callers' raw text: untrusted, to be framed before a model
   * sees them (`buildInboundPrompt(entry.text).user`). Set by the task service; absent on turns
   * built by other code.
   */
  readonly history?: (limits: SessionHistoryLimits) => Promise<readonly SessionEntry[]>;
  /**
   * Set on the turn that resumes a task after its guarded action was approved by the person
   * (or allowed by the autonomy ladder without asking): the backend may now take exactly this
   * action, once. `args` are the arguments the backend proposed, unredacted.
   */
  readonly approvedAction?: ApprovedAction;
  /**
   * Set on the turn that resumes a task after the person denied its guarded action, or let it
   * expire, when the agent's tools are configured to go on after a refusal (`onDenied: continue`):
   * the backend tells its model the call was refused and carries on.
   */
  readonly deniedAction?: DeniedAction;
  /**
   * The Airlock gateways the caller's request passed, this one last (its hop chain, see
   * `protocol/headers.ts`): what a relay backend sends on with every call of this turn, so that
   * a gateway further on can tell a loop from a peer. Absent on turns built by other code.
   */
  readonly via?: readonly string[];
  /**
   * Who an outbound call made for this turn acts for (`identity/delegation.ts`): a delegated
   * caller with its verified JWT, wrapped, which only a relay's token exchange reveals (to the
   * token endpoint, never to a remote); else `service`. Absent on turns built by other code.
   */
  readonly outboundSubject?: OutboundSubject;
  /**
   * Set on the turn that resumes a task parked on a remote agent's question (`ask-person`):
   * the person's own answer, to send on the remote task instead of the caller's text.
   */
  readonly personAnswer?: PersonAnswer;
}

/**
 * A guarded action a backend wants to take. `level` is a rung of the autonomy ladder (`'L1'`–`'L4'`,
 * `1`–`4`, or the level's name such as `'irreversible_acting'`); `args` are shown to the person
 * (redacted) and handed back unredacted in {@link AgentTurn.approvedAction}.
 */
export interface ProposedAction {
  readonly tool: string;
  readonly args?: unknown;
  readonly level: string | number;
}

/** An action the gateway let the backend take (see {@link AgentTurn.approvedAction}). */
export interface ApprovedAction {
  readonly actionId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly level: 'L1' | 'L2' | 'L3' | 'L4';
  /** The person who approved it; absent when the ladder allowed it without asking (L1, L2). */
  readonly approvedBy?: string;
  /** What the backend kept with its proposal (`propose-action`'s `continuation`), handed back as it was. */
  readonly continuation?: unknown;
}

/** A guarded action the person denied, or that expired (see {@link AgentTurn.deniedAction}). */
export interface DeniedAction {
  readonly actionId: string;
  readonly tool: string;
  readonly level: 'L1' | 'L2' | 'L3' | 'L4';
  /** `denied` by the person, or `expired` undecided. */
  readonly outcome: 'denied' | 'expired';
  /** For the model: the action did not run, and why. */
  readonly reason: string;
  /** What the backend kept with its proposal, handed back as it was. */
  readonly continuation?: unknown;
}

/** A remote agent's question as a relay backend hands it to the person (`ask-person`). */
export interface RemoteQuestion {
  readonly question: string;
  /** The registry name of the remote agent, and its task and context. */
  readonly agent: string;
  readonly taskId: string;
  readonly contextId: string;
  readonly state: 'input-required' | 'auth-required';
}

/** The person's answer to a remote agent's question (see {@link AgentTurn.personAnswer}). */
export interface PersonAnswer {
  readonly questionId: string;
  readonly text: string;
  readonly answeredBy: string;
}

/** One earlier message of a session, as {@link AgentTurn.history} returns it. */
export interface SessionEntry {
  readonly role: 'user' | 'agent';
  readonly text: string;
}

/** How much of a session {@link AgentTurn.history} returns. */
export interface SessionHistoryLimits {
  /** User entries (with the agent entries after each); 0 returns nothing. */
  readonly maxTurns: number;
  /** Characters over all entries; the oldest entries go first, then the head of the oldest kept. */
  readonly maxChars: number;
}

/**
 * What a backend yields. A turn is a sequence of progress events ended by exactly one
 * outcome (`completed`, `input-required`, `rejected`, `failed`), or a single `message`
 * (a direct reply with no task). Anything after the outcome is ignored.
 */
export type AgentEvent =
  /** Progress note; the task is (still) working. */
  | { type: 'working'; text?: string }
  /**
   * A chunk of the reply text, streamed as artifact-update events with `append`.
   * `last: true` marks the final chunk of the reply (sets `lastChunk`).
   */
  | { type: 'text'; text: string; last?: boolean }
  /** A whole artifact, any part kinds (our own agents may send files and data). */
  | { type: 'artifact'; artifact: Omit<Artifact, 'artifactId'> & { artifactId?: string } }
  /** A direct reply with no task. Only valid as the first and only event of a turn. */
  | { type: 'message'; parts: Part[] }
  | { type: 'completed'; text?: string }
  | { type: 'input-required'; question: string }
  | { type: 'rejected'; reason: string }
  | { type: 'failed'; reason: string }
  /**
   * Ends the turn with a guarded action for the gateway to decide: allowed at once (L1, L2:
   * a new turn starts with `approvedAction`), parked for the person (L3, L4: the task moves to
   * input-required until approved), or refused (the task fails with the reason).
   */
  | {
      type: 'propose-action';
      action: ProposedAction;
      /**
       * What the backend needs to go on after the decision (its model transcript): JSON, kept by
       * the gateway with the action (at most 256 KiB as JSON) and handed back in
       * `approvedAction.continuation` / `deniedAction.continuation`. Never shown to the person.
       */
      continuation?: unknown;
    }
  /**
   * Ends the turn with a remote agent's question for the person (relay backends). With
   * approvals configured the task parks until the person answers; otherwise it is an ordinary
   * input-required with the question as its text.
   */
  | { type: 'ask-person'; remote: RemoteQuestion };

export interface AgentBackend {
  /** The backend type name from config, for logs and audit. */
  readonly kind: string;
  run(turn: AgentTurn): AsyncIterable<AgentEvent>;
  /**
   * Optional fast path for a backend whose events never wait (no I/O, no timers): the same
   * events as `run`, as a synchronous iterable. When it is present the executor bridge uses it
   * instead of `run` and applies ready events without a round trip through the event loop.
   */
  runSync?(turn: AgentTurn): Iterable<AgentEvent>;
  /** Frees what the backend holds (connections, child processes); called when the gateway closes. */
  close?(): Promise<void>;
  /**
   * A task that waits for input (no turn running, so no signal to abort) was canceled by its
   * caller: a backend holding something for it elsewhere (an upstream task) lets it go. Called
   * after the cancel is stored; its failure is logged, never the caller's.
   */
  cancelInterrupted?(task: { readonly sessionId: string; readonly taskId: string }): Promise<void>;
}

/** Structured log lines from a backend (JSON in the gateway's log); never message content or secrets. */
export type BackendLog = (
  level: 'debug' | 'info' | 'warn' | 'error',
  event: string,
  fields: Readonly<Record<string, string | number | boolean>>,
) => void;

/** What the gateway gives a backend when it creates it. */
export interface BackendContext {
  /** The agent's slug, for log lines. */
  readonly agent?: string;
  readonly log?: BackendLog;
  /** The environment `passEnv` and `${VAR}` read (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * With approvals configured, a remote agent's question goes to the person, never to the
   * caller's model: a relay backend ends the turn with `ask-person` (not `input-required`) when
   * its remote agent asks (input-required or auth-required), sends only
   * {@link AgentTurn.personAnswer} on the remote task, and never the caller's own reply.
   */
  readonly askPerson?: boolean;
}

/**
 * A backend's configuration cannot work (a program that is not there, a module without a
 * backend export): found when the gateway starts, never on a caller's request.
 */
export class BackendConfigError extends AirlockError {
  readonly code = 'backend_config_invalid';
  constructor(message: string) {
    super(message);
  }
}

/**
 * True once the turn was canceled: `turn.aborted` when the turn has it, else `turn.signal.aborted`.
 *
 * @example
 * ```ts
 * if (isAborted(turn)) return;
 * ```
 */
export function isAborted(turn: AgentTurn): boolean {
  return turn.aborted ?? turn.signal.aborted;
}

/** The text of a message's text parts, joined by newlines. */
export function textOf(message: Message): string {
  let out = '';
  for (const part of message.parts) {
    if (part.kind === 'text') out = out.length === 0 ? part.text : `${out}\n${part.text}`;
  }
  return out;
}

/**
 * Waits `ms`, or less when the turn is canceled. Resolves `false` on cancellation so that a
 * backend can end quietly: an abort is the expected way for a turn to stop, not a failure.
 *
 * @example
 * ```ts
 * if (!(await pause(20, turn.signal))) return;
 * ```
 */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, signal);
    return true;
  } catch (error) {
    if (signal.aborted) return false;
    throw error;
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when aborted first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
