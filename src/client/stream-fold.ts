/**
 * The fold of a streamed answer into one task: each event applied as it arrives (a snapshot
 * replaces the task, a status update its status, an artifact update adds, appends to or replaces
 * one artifact). Linear in the events: artifacts are found by id through an index, and an
 * appended chunk's parts are pushed onto the artifact the fold owns — no copy of the parts seen
 * so far, no scan of the artifacts, per event. (The reply text is joined once, from the parts,
 * when the result is built.)
 *
 * @example
 * ```ts
 * const fold = new StreamFold(undefined, false);
 * for await (const event of events) if (event.kind !== 'message') fold.add(event);
 * fold.task; // the task as the stream left it
 * ```
 */
import type { Artifact, StreamEvent, Task } from '../protocol/model.js';
import { CallFailure } from './call-failure.js';

/** The events a task is folded from (a direct message is not about a task). */
export type TaskStreamEvent = Exclude<StreamEvent, { kind: 'message' }>;

/**
 * One streamed task, folded event by event. `followUp`: the task was named by the caller, so
 * every event must be about it (and a task created by a first update starts as `unknown`, not
 * `submitted`). An event about another task is `invalid_response`.
 *
 * @example
 * ```ts
 * const fold = new StreamFold({ id: 't1', contextId: 'c1', status, artifacts: [], history: [] }, true);
 * fold.add({ kind: 'status-update', taskId: 't1', contextId: 'c1', status: { state: 'completed', timestamp } });
 * ```
 */
export class StreamFold {
  #task: Task | undefined;
  readonly #followUp: boolean;
  /** Index in `#task.artifacts` by artifact id; the artifacts (and their parts arrays) are the fold's own. */
  readonly #byId = new Map<string, number>();

  constructor(initial: Task | undefined, followUp: boolean) {
    this.#followUp = followUp;
    if (initial !== undefined) this.#adopt(initial);
  }

  /** The task so far (`undefined` before the first event about one). Owned by the fold: read it, don't keep it across `add`. */
  get task(): Task | undefined {
    return this.#task;
  }

  /** Applies one event and returns the task. Throws `CallFailure('invalid_response')` for another task's event. */
  add(event: TaskStreamEvent): Task {
    const current = this.#task;
    const eventTaskId = event.kind === 'task' ? event.task.id : event.taskId;
    if (current !== undefined && eventTaskId !== current.id) {
      throw new CallFailure('invalid_response', { detail: 'the remote answered about another task' });
    }
    if (event.kind === 'task') {
      // A snapshot: authoritative for everything it holds.
      return this.#adopt(event.task);
    }
    const task: Task =
      current ??
      this.#adopt({
        id: event.taskId,
        contextId: event.contextId,
        status: { state: this.#followUp ? 'unknown' : 'submitted', timestamp: new Date(0).toISOString() },
        artifacts: [],
        history: [],
      });
    if (task.contextId === '') task.contextId = event.contextId;
    if (event.kind === 'status-update') {
      task.status = event.status;
      return task;
    }
    const incoming = event.artifact;
    const index = this.#byId.get(incoming.artifactId);
    if (index === undefined) {
      this.#byId.set(incoming.artifactId, task.artifacts.length);
      task.artifacts.push(own(incoming));
    } else if (event.append === true) {
      const parts = task.artifacts[index]!.parts;
      for (const part of incoming.parts) parts.push(part);
    } else {
      task.artifacts[index] = own(incoming);
    }
    return task;
  }

  /** Takes a snapshot as the task: its artifacts copied once (so appends never touch the event's arrays), indexed by id. */
  #adopt(snapshot: Task): Task {
    const artifacts = snapshot.artifacts.map(own);
    this.#byId.clear();
    // The first artifact of an id wins the index, as a search from the start would find it.
    for (let i = artifacts.length - 1; i >= 0; i--) this.#byId.set(artifacts[i]!.artifactId, i);
    this.#task = { ...snapshot, artifacts };
    return this.#task;
  }
}

/** A copy of an artifact whose parts array the fold may push onto. */
function own(artifact: Artifact): Artifact {
  return { ...artifact, parts: [...artifact.parts] };
}
