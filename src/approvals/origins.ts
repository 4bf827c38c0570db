/**
 * What the approvals service remembers beside its two stores: where each action and question came
 * from (for views and audit rows), the arguments a backend proposed before redaction (it gets
 * them back when the approval is used), and each task's latest action (for the console). Kept
 * bounded by pruning against the stores.
 *
 * @example
 * ```ts
 * const origins = new OriginBook(maxPending);
 * origins.rememberAction(action.actionId, origin, proposal.args ?? {});
 * const args = origins.takeArgs(action.actionId) ?? action.args;
 * ```
 */
import type { CallContext } from '../tasks/call-context.js';
import type { MemoryQuestionStore } from './questions.js';
import type { MemoryApprovalStore } from './store.js';

/**
 * Where an action or question came from (for views, audit rows and pruning).
 *
 * @example
 * ```ts
 * const origin: Origin = { kind: 'action', owner, taskId: task.id, agent: ctx.agentSlug, client, contextId: task.contextId };
 * ```
 */
export interface Origin {
  readonly kind: 'action' | 'question';
  readonly owner: string;
  readonly taskId: string;
  readonly agent: string;
  readonly client: string;
  readonly contextId: string;
  /** Who called (for the gateway to resume the task as that caller once the person decided). */
  readonly caller?: CallContext['caller'];
}

/**
 * The origins, unredacted arguments and latest action per task.
 *
 * @example
 * ```ts
 * origins.prune(now, actions, questions);
 * ```
 */
export class OriginBook {
  /**
   * What the backend proposed, unredacted, and what it kept to go on (its continuation), until
   * the approval is used or the action is denied (it gets them back).
   */
  readonly #originalArgs = new Map<string, { readonly args: unknown; readonly continuation?: unknown }>();
  /** Where each action / question came from, for views and audit rows. */
  readonly #origins = new Map<string, Origin>();
  /** taskId → the latest action proposed on it (for the console's task list). */
  readonly #actionByTask = new Map<string, string>();
  /** Above this many remembered origins, the ones whose action or question is gone are dropped. */
  readonly #pruneAt: number;

  constructor(pruneAt: number) {
    this.#pruneAt = pruneAt;
  }

  /** Actions and questions whose origin is remembered. */
  get size(): number {
    return this.#origins.size;
  }

  origin(id: string): Origin | undefined {
    return this.#origins.get(id);
  }

  rememberAction(actionId: string, origin: Origin, args: unknown, continuation?: unknown): void {
    this.#originalArgs.set(actionId, continuation === undefined ? { args } : { args, continuation });
    this.#origins.set(actionId, origin);
    this.#actionByTask.set(origin.taskId, actionId);
  }

  rememberQuestion(questionId: string, origin: Origin): void {
    this.#origins.set(questionId, origin);
  }

  /** The task's latest action id, if any. */
  latestActionOn(taskId: string): string | undefined {
    return this.#actionByTask.get(taskId);
  }

  /** The unredacted arguments of an action and its continuation, forgotten as they are handed out. */
  take(actionId: string): { readonly args: unknown; readonly continuation?: unknown } | undefined {
    const kept = this.#originalArgs.get(actionId);
    this.#originalArgs.delete(actionId);
    return kept;
  }

  /**
   * Keeps what this book holds bounded: once it holds as many origins as the stores may hold
   * records, the stores are swept and the origins (and unredacted arguments) of actions and
   * questions no longer there are dropped.
   */
  prune(now: number, actions: MemoryApprovalStore, questions: MemoryQuestionStore): void {
    if (this.#origins.size < this.#pruneAt) return;
    void actions.sweep(now);
    questions.sweep(now);
    for (const [id, origin] of this.#origins) {
      const alive =
        origin.kind === 'action' ? actions.peek(id) !== undefined : questions.get(origin.owner, id) !== undefined;
      if (alive) continue;
      this.#origins.delete(id);
      this.#originalArgs.delete(id);
      if (this.#actionByTask.get(origin.taskId) === id) this.#actionByTask.delete(origin.taskId);
    }
  }
}
