/**
 * The approval desk: what a person sees and does out of band (the `/approvals` endpoints, the
 * console, `airlock approvals`). Every method takes the person as already authenticated
 * (`userId`, from their own credential — never an agent's token) and is scoped to them: a
 * person sees only the actions waiting for their decision, the tasks of principals they
 * answer for, and the audit rows about those.
 *
 * @example
 * ```ts
 * const waiting = await desk.pending('alice');
 * await desk.decide(waiting[0].actionId, 'alice', 'approve');
 * ```
 */
import { AUTONOMY_LEVEL_INFO, type AutonomyLevel } from './ladder.js';
import type { JsonValue } from './redact.js';
import type { ActionOrigin, ApprovalDecision, ApprovalStatus } from './store.js';

/**
 * One guarded action as a person sees it: redacted arguments, what the level means, and
 * who asked (the client id and agent, never a token).
 */
export interface ApprovalView {
  readonly actionId: string;
  readonly taskId: string;
  readonly contextId: string;
  /** The published agent that proposed it. */
  readonly agent: string;
  /** The client the task belongs to (its configured id, or a JWT's client id). */
  readonly client: string;
  /**
   * The first line of the caller's request that started the turn, scrubbed (secrets, tokens,
   * email addresses) and cut to 200 characters, with invisible and bidi controls escaped; absent
   * when the request had no text. Untrusted: show it as text, never as markup.
   */
  readonly request?: string;
  readonly tool: string;
  /** Redacted: secrets, tokens and email addresses never reach this view. */
  readonly args: JsonValue;
  /**
   * `args` as JSON text (indented) with every invisible or bidi control character written as a
   * `\uXXXX` escape: what a screen shows. `JSON.parse(argsDisplay)` is `args` exactly (see display.ts).
   */
  readonly argsDisplay: string;
  /** Whether `args` hold such characters (then `warnings` says which). */
  readonly hiddenCharacters: boolean;
  /** Lines a person should read before deciding; empty when nothing is odd. */
  readonly warnings: readonly string[];
  readonly level: AutonomyLevel;
  readonly levelName: string;
  readonly levelMeaning: string;
  readonly status: ApprovalStatus;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly decidedAt?: string;
}

/** A task of a principal this person answers for: state and times only, never content. */
export interface PersonTaskView {
  readonly taskId: string;
  readonly contextId: string;
  readonly agent: string;
  readonly client: string;
  readonly state: string;
  /** ISO 8601: when the task was first seen, and its latest change. */
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The pending action on it, if any. */
  readonly actionId?: string;
}

/** One audit row about this person's tasks or decisions (the row as written, ids and codes only). */
export type PersonAuditRow = Readonly<Record<string, string | number | boolean | Readonly<Record<string, number>>>>;

/** A question a remote agent asked (input-required or auth-required) that waits for this person. */
export interface RemoteQuestionView {
  readonly questionId: string;
  /** The inbound task parked on it. */
  readonly taskId: string;
  readonly agent: string;
  /** The registry name of the remote agent that asked. */
  readonly remoteAgent: string;
  readonly remoteTaskId: string;
  readonly remoteContextId: string;
  /** `input-required` or `auth-required`. */
  readonly state: string;
  /** The remote's question, as untrusted text (framed; never interpreted). */
  readonly question: string;
  readonly status: 'pending' | 'answered' | 'expired' | 'consumed';
  readonly createdAt: string;
  readonly expiresAt: string;
}

/**
 * What the out-of-band surfaces call. Errors are `ApprovalError`s with stable codes
 * (`not_found` 404, `not_decider` 403, `already_decided` 409, `expired` 410).
 */
export interface ApprovalDesk {
  /** Actions waiting for this person's decision, oldest first. */
  pending(userId: string): Promise<ApprovalView[]>;
  /** One action, if this person decides it (else `undefined`: never another person's). */
  get(userId: string, actionId: string): Promise<ApprovalView | undefined>;
  /** Approves or denies; writes the audit row (also for a refused attempt). */
  decide(actionId: string, userId: string, decision: ApprovalDecision, remote?: string): Promise<ApprovalView>;
  /** The latest tasks of principals this person answers for, newest first (at most `limit`). */
  recentTasks(userId: string, limit: number): Promise<PersonTaskView[]>;
  /** The latest audit rows about this person's tasks and decisions, newest first. */
  auditTail(userId: string, limit: number): Promise<PersonAuditRow[]>;
  /** Remote agents' questions waiting for this person's answer, oldest first. */
  questions(userId: string): Promise<RemoteQuestionView[]>;
  /** Records this person's answer; the next message on the task sends it on the remote task. */
  answer(questionId: string, userId: string, text: string, remote?: string): Promise<RemoteQuestionView>;
}

/**
 * The level's stable name and meaning, for views.
 *
 * @example
 * ```ts
 * levelView('L4'); // { levelName: 'irreversible_acting', levelMeaning: 'Acts in a way that cannot be taken back …' }
 * ```
 */
export function levelView(level: AutonomyLevel): { levelName: string; levelMeaning: string } {
  const info = AUTONOMY_LEVEL_INFO[level];
  return { levelName: info.name, levelMeaning: info.meaning };
}

/**
 * The task a person's decision or answer was about, and who called it: enough for the gateway to
 * resume the task as that caller.
 *
 * @example
 * ```ts
 * const decided: DecidedTask = { owner: 'client:app::@ops', taskId: 't-1', agent: 'ops', caller: { clientId: 'app', kind: 'client' } };
 * ```
 */
export interface DecidedTask {
  readonly owner: string;
  readonly taskId: string;
  readonly agent: string;
  readonly caller?: ActionOrigin['caller'];
}
