/**
 * What the task service takes from the policy around it. The service knows nothing of limits,
 * content rules, framing or audit sinks: the caller's admission chain decides whether a turn
 * may start and hands the service a `TurnGrant` (prompt, tools, reply scrubbing, the slot to
 * give back); the server also gives it an observer for lifecycle events and a parking gate,
 * and the service calls them at the right moments of every turn.
 *
 * @example
 * ```ts
 * const service = new TaskService({ store, observe: (event) => console.log(event.type, event.taskId) });
 * const grant: TurnGrant = { inputChars: 5, release() {} };
 * await service.send(ctx, params, grant);
 * ```
 */
import type { ApprovedAction, DeniedAction, PersonAnswer, ProposedAction, RemoteQuestion } from '../agents/backend.js';
import type { TurnToolbox } from '../agents/tools.js';
import type { Part, Task } from '../protocol/model.js';
import type { CallContext } from './call-context.js';
import { AirlockError } from '../errors/index.js';

/** The prompt a model backend sends instead of the caller's raw text. */
export interface TurnPrompt {
  readonly system: string;
  readonly user: string;
}

/** Removes configured secrets from reply text, whole or as it streams. */
export interface ReplyScrubber {
  scrub(text: string): string;
  /** A scrubber for one streamed reply: a secret split across chunks is still caught. */
  stream(): { push(chunk: string): string; flush(): string };
}

/**
 * What admission granted one turn: the caller checked the message and took the turn's slot
 * before calling the service, which gives the grant back (`release`) exactly once, when the
 * turn ends or cannot start.
 *
 * @example
 * ```ts
 * const grant: TurnGrant = { inputChars: text.length, release: () => slots.free(), scrubber };
 * await service.send(ctx, params, grant);
 * ```
 */
/**
 * What a toolbox is built for: who calls which agent, in which task (for the audit rows and the
 * person who decides an acting call).
 *
 * @example
 * ```ts
 * const toolbox = grant.tools?.({ ctx, taskId: task.id, contextId: task.contextId });
 * ```
 */
export interface ToolTurn {
  readonly ctx: CallContext;
  readonly taskId: string;
  readonly contextId: string;
  /** The action the person approved for this turn: the only one `runApproved` runs, exactly as approved. */
  readonly approved?: { readonly actionId: string; readonly tool: string; readonly args: unknown };
}

export interface TurnGrant {
  /** Characters of text in the caller's message (for audit). */
  readonly inputChars: number;
  /** Gives back what the turn held (a concurrency slot). Called once when the turn ends. */
  release(): void;
  /** Built on first read: most backends never look at it. */
  prompt?: () => TurnPrompt;
  /**
   * Builds the toolbox of the turn (the gateway's tool servers under the agent's allow list and
   * the autonomy ladder), once the task exists; absent = no tools.
   */
  tools?: (turn: ToolTurn) => TurnToolbox | undefined;
  /** Applied to every piece of reply text before it is stored or sent. */
  scrubber?: ReplyScrubber;
}

/** Why a task failed or was canceled, as a fixed code (never backend text). */
export type TaskOutcomeReason =
  | 'agent_failed'
  | 'internal_error'
  | 'shutdown'
  | 'canceled_by_client'
  | 'action_refused'
  | 'action_denied'
  | 'action_expired'
  /** The backend's output passed the task's cap (`maxTaskOutputBytes`). */
  | 'output_too_large'
  /** Another replica failed the task while this one stood still past its turn lease. */
  | 'replica_lost';

/**
 * What becomes of a turn that ended with a guarded action or a remote agent's question:
 * - `allow`: a new turn starts at once with the action (ladder levels that need nobody);
 * - `park`: the task moves to input-required with `parts` (the action's data part) until the
 *   person decides; nothing runs meanwhile;
 * - `refuse`: the task fails with `message` (a fixed-code `reason` for audit).
 */
export type ParkOutcome =
  | { readonly kind: 'allow'; readonly action: ApprovedAction }
  | { readonly kind: 'park'; readonly parts: Part[] }
  | { readonly kind: 'refuse'; readonly message: string; readonly reason: 'action_refused' };

/**
 * What a message on an interrupted task does when the task is parked on the person:
 * - `not_parked`: an ordinary resume (the task asked the caller, not the person);
 * - `repark`: nobody decided yet; the caller's message is not a decision, nothing runs, and
 *   the caller gets the task as it is;
 * - `resume`: the approval (or the person's answer) was consumed, once; the turn runs with it;
 *   or the action was denied or expired and the agent goes on without it (`denied`);
 * - `fail`: denied or expired; the task fails with `message`.
 */
export type ResumeOutcome =
  | { readonly kind: 'not_parked' }
  | { readonly kind: 'repark' }
  | {
      readonly kind: 'resume';
      readonly action?: ApprovedAction;
      readonly answer?: PersonAnswer;
      /** Denied or expired, and the agent goes on (`actions.onDenied: continue`) with its continuation. */
      readonly denied?: DeniedAction;
    }
  | { readonly kind: 'fail'; readonly message: string; readonly reason: 'action_denied' | 'action_expired' };

/**
 * Where turns that need a person go (src/approvals/gate.ts). `ask`, and `propose` over the
 * memory store, are synchronous, so a backend whose events are all ready (`runSync`) still ends
 * its turn in one step; `propose` over a durable store answers once the action is recorded (the
 * turn then ends when it does), and `resume` may wait for a store.
 */
export interface ParkingGate {
  /**
   * A turn of `task` (owned by `owner`) ended with a proposed action, and what the backend keeps
   * to go on after the decision (handed back in `approvedAction` / `deniedAction`).
   */
  propose(
    ctx: CallContext,
    owner: string,
    task: Task,
    action: ProposedAction,
    continuation?: unknown,
  ): ParkOutcome | Promise<ParkOutcome>;
  /** A turn ended with a remote agent's question for the person. */
  ask(ctx: CallContext, owner: string, task: Task, question: RemoteQuestion): ParkOutcome;
  /** A message arrived on `task`, which is interrupted (input-required or auth-required). */
  resume(ctx: CallContext, owner: string, task: Task): Promise<ResumeOutcome>;
  /** The task was canceled while parked: what waited on the person is withdrawn. */
  withdraw(owner: string, taskId: string): void;
}

/** One step of a task's life, for audit: ids and counts, never content. */
export interface TaskLifecycleEvent {
  type: 'submitted' | 'completed' | 'input-required' | 'rejected' | 'failed' | 'canceled';
  ctx: CallContext;
  taskId: string;
  contextId: string;
  inputChars: number;
  /** Characters of reply text so far (artifacts' and status message's text parts). */
  outputChars: number;
  reason?: TaskOutcomeReason;
}

export type TaskObserver = (event: TaskLifecycleEvent) => void;

/**
 * Too many turns are running (in total, or for this caller): the caller should come back
 * after `retryAfterSeconds`. The server answers 503 with Retry-After.
 *
 * @example
 * ```ts
 * throw new CapacityError(1); // answered 503 with Retry-After: 1
 * ```
 */
export class CapacityError extends AirlockError {
  readonly code = 'CAPACITY_EXCEEDED';
  readonly retryAfterSeconds: number;
  /**
   * The quota the caller is over, when the refusal is about its own share (e.g.
   * `limits.maxTasksPerPrincipal`): the message names it and the setting, and the audit row
   * carries the reason code. Absent for a gateway-wide refusal.
   */
  readonly quota: CapacityQuota | undefined;

  constructor(retryAfterSeconds: number, message?: string, quota?: CapacityQuota) {
    super(message ?? 'Too many tasks are running (yours, or on this gateway); try again shortly');
    this.retryAfterSeconds = retryAfterSeconds;
    this.quota = quota;
  }
}

/**
 * Which share a {@link CapacityError} is about: the caller's stored tasks, its parked tasks, or
 * the whole store (count or bytes) when no principal can make room.
 *
 * @example
 * ```ts
 * const quota: CapacityQuota = 'task_quota';
 * ```
 */
export type CapacityQuota = 'task_quota' | 'parked_quota' | 'task_store_full';

/** Characters of reply text in a task: artifacts' text parts and the status message's. */
export function replyChars(task: Task): number {
  let chars = 0;
  for (const artifact of task.artifacts) {
    for (const part of artifact.parts) if (part.kind === 'text') chars += part.text.length;
  }
  const message = task.status.message;
  if (message !== undefined) for (const part of message.parts) if (part.kind === 'text') chars += part.text.length;
  return chars;
}
