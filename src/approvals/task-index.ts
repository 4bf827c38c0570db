/**
 * Which pending item (an action or a question) is the latest on each owner's task: owner →
 * taskId → id, in nested maps so that no separator needs escaping. The approval and question
 * stores both answer "what waits on this task" through it, and both look it up owner-scoped.
 *
 * @example
 * ```ts
 * const index = new TaskIndex();
 * index.set('client:bot::bot', 'task-1', actionId);
 * index.get('client:bot::bot', 'task-1'); // actionId
 * ```
 */
export class TaskIndex {
  readonly #byOwner = new Map<string, Map<string, string>>();

  /** The latest id on the owner's task, if any. */
  get(owner: string, taskId: string): string | undefined {
    return this.#byOwner.get(owner)?.get(taskId);
  }

  /** Makes `id` the latest on the owner's task. */
  set(owner: string, taskId: string, id: string): void {
    let tasks = this.#byOwner.get(owner);
    if (tasks === undefined) this.#byOwner.set(owner, (tasks = new Map<string, string>()));
    tasks.set(taskId, id);
  }

  /** Forgets the owner's task, if its latest id is still `id` (a newer item keeps its entry). */
  delete(owner: string, taskId: string, id: string): void {
    const tasks = this.#byOwner.get(owner);
    if (tasks?.get(taskId) !== id) return;
    tasks.delete(taskId);
    if (tasks.size === 0) this.#byOwner.delete(owner);
  }
}
