/**
 * What the approvals service remembers beside its stores, in this process: where each remote
 * question came from (for views and audit rows), and each task's latest action (for the
 * console's task list, which is this process's too). An action's own origin, unredacted
 * arguments and continuation live with the action in its store. Kept bounded: questions are
 * pruned against their store, and the oldest task entries go first.
 *
 * @example
 * ```ts
 * const origins = new OriginBook(maxPending);
 * origins.rememberAction(task.id, action.actionId);
 * origins.latestActionOn(task.id); // action.actionId
 * ```
 */
import type { CallContext } from '../tasks/call-context.js';
import type { MemoryQuestionStore } from './questions.js';

/**
 * Where a question came from (for views, audit rows and pruning).
 *
 * @example
 * ```ts
 * const origin: Origin = { kind: 'question', owner, taskId: task.id, agent: ctx.agentSlug, client, contextId: task.contextId };
 * ```
 */
export interface Origin {
  readonly kind: 'question';
  readonly owner: string;
  readonly taskId: string;
  readonly agent: string;
  readonly client: string;
  readonly contextId: string;
  /** Who called (for the gateway to resume the task as that caller once the person answered). */
  readonly caller?: CallContext['caller'];
}

/**
 * The questions' origins and the latest action per task.
 *
 * @example
 * ```ts
 * origins.prune(now, questions);
 * ```
 */
export class OriginBook {
  /** Where each question came from, for views and audit rows. */
  readonly #origins = new Map<string, Origin>();
  /** taskId → the latest action proposed on it (insertion order = age). */
  readonly #actionByTask = new Map<string, string>();
  /** Above this many entries, the oldest (task entries) or gone (questions) are dropped. */
  readonly #pruneAt: number;

  constructor(pruneAt: number) {
    this.#pruneAt = pruneAt;
  }

  /** Questions whose origin is remembered. */
  get size(): number {
    return this.#origins.size;
  }

  origin(id: string): Origin | undefined {
    return this.#origins.get(id);
  }

  rememberAction(taskId: string, actionId: string): void {
    this.#actionByTask.delete(taskId);
    this.#actionByTask.set(taskId, actionId);
    if (this.#actionByTask.size > this.#pruneAt) {
      const oldest = this.#actionByTask.keys().next().value;
      if (oldest !== undefined) this.#actionByTask.delete(oldest);
    }
  }

  rememberQuestion(questionId: string, origin: Origin): void {
    this.#origins.set(questionId, origin);
  }

  /** The task's latest action id, if any. */
  latestActionOn(taskId: string): string | undefined {
    return this.#actionByTask.get(taskId);
  }

  /**
   * Keeps the question origins bounded: once there are as many as the store may hold, the store
   * is swept and the origins of questions no longer there are dropped.
   */
  prune(now: number, questions: MemoryQuestionStore): void {
    if (this.#origins.size < this.#pruneAt) return;
    questions.sweep(now);
    for (const [id, origin] of this.#origins) {
      if (questions.get(origin.owner, id) === undefined) this.#origins.delete(id);
    }
  }
}
