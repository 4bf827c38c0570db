/**
 * The ListTasks indexes of an owner's tasks: one ordered index per filter combination (every
 * task, by state, by context, by context and state), built from the owner's entries on its first
 * list ({@link indexesOf}), or when it reaches {@link INDEX_AT_TASKS} tasks, and from then on
 * moved at each put, doing only the work a change needs. Until then a put moves nothing here:
 * every function below is a no-op on an owner without indexes.
 *
 * @example
 * ```ts
 * owned.entries.append(entry.ownerNode);
 * addToIndexes(entry); // nothing until the owner has listed
 * const { all } = indexesOf(owned); // built now, kept from here on
 * ```
 */
import type { TaskState } from '../../../protocol/model.js';
import { Entry, type IndexGroup, type OwnerIndexes, type OwnerTasks } from './entries.js';
import { SortedIndex } from './sorted-index.js';

/**
 * An owner that holds this many tasks gets its indexes built even if it has never listed, and
 * kept from then on. A build blocks the event loop while it runs: about 1 µs a task once the code
 * is warm (0.11 s for 100,000 tasks), 5–14 µs a task the first time in a process. So an owner
 * allowed a large share pays it before its tasks pile up, never at a list of a hundred thousand;
 * the default share (1,000 tasks) stays below it, so its first list builds at most 1,000.
 *
 * @example
 * ```ts
 * if (owned.indexes === undefined && owned.count >= INDEX_AT_TASKS) indexesOf(owned);
 * ```
 */
export const INDEX_AT_TASKS = 1_024;

/**
 * The owner's indexes, built from its entries if it has none yet: n inserts for its n tasks,
 * once; the store keeps them current from then on, until the owner's last task leaves.
 *
 * @example
 * ```ts
 * const page = readPage(indexesOf(owned).all, 50, undefined, undefined);
 * ```
 */
export function indexesOf(owned: OwnerTasks): OwnerIndexes {
  if (owned.indexes !== undefined) return owned.indexes;
  const indexes: OwnerIndexes = { all: new SortedIndex(), byState: new Map(), byContext: new Map() };
  owned.indexes = indexes;
  for (const entry of owned.entries) addToIndexes(entry);
  return indexes;
}

function addToGroup(group: IndexGroup, entry: Entry): void {
  group.all.insert(entry);
  stateIndexFor(group, entry.state).insert(entry);
}

/**
 * Puts an entry (whose contextId is set) into its context: as the context's only task if it
 * is the first, otherwise into the context's group, creating the group (and moving the
 * context's single task into it) when this is the second task.
 */
function joinContext(indexes: OwnerIndexes, entry: Entry): void {
  const { byContext } = indexes;
  const slot = byContext.get(entry.contextId);
  if (slot === undefined) {
    entry.context = undefined;
    byContext.set(entry.contextId, entry);
    return;
  }
  let group: IndexGroup;
  if (slot instanceof Entry) {
    group = { all: new SortedIndex(), byState: new Map() };
    addToGroup(group, slot);
    slot.context = group;
    byContext.set(entry.contextId, group);
  } else {
    group = slot;
  }
  entry.context = group;
  addToGroup(group, entry);
}

/** Takes an entry out of its context; drops the context's slot if it was its last task. */
function leaveContext(indexes: OwnerIndexes, entry: Entry): void {
  const { context } = entry;
  if (context === undefined) {
    indexes.byContext.delete(entry.contextId);
    return;
  }
  context.all.remove(entry);
  stateIndex(context, entry.state).remove(entry);
  if (context.all.size === 0) indexes.byContext.delete(entry.contextId);
  entry.context = undefined;
}

/**
 * The group's index for a state, created if it is the first task in that state.
 *
 * @example
 * ```ts
 * stateIndexFor(indexes, 'working').insert(entry);
 * ```
 */
export function stateIndexFor(group: IndexGroup, state: TaskState): SortedIndex<Entry> {
  let index = group.byState.get(state);
  if (index === undefined) {
    index = new SortedIndex();
    group.byState.set(state, index);
  }
  return index;
}

/**
 * The group's index for the state of a task it holds.
 *
 * @throws Error if it is missing: the indexes are corrupt.
 * @example
 * ```ts
 * stateIndex(indexes, entry.state).remove(entry);
 * ```
 */
export function stateIndex(group: IndexGroup, state: TaskState): SortedIndex<Entry> {
  const index = group.byState.get(state);
  if (index === undefined) throw new Error('MemoryTaskStore: index missing for a stored task');
  return index;
}

/**
 * Into its owner's indexes, if the owner has them: every task, by state, and its context's (see
 * {@link joinContext}).
 *
 * @example
 * ```ts
 * owned.entries.append(entry.ownerNode);
 * addToIndexes(entry);
 * ```
 */
export function addToIndexes(entry: Entry): void {
  const { indexes } = entry.owned;
  if (indexes === undefined) return;
  addToGroup(indexes, entry);
  joinContext(indexes, entry);
}

/**
 * Out of its owner's indexes, if the owner has them; drops its context's slot if that was its
 * last task. The owner's stay.
 *
 * @example
 * ```ts
 * removeFromIndexes(entry);
 * ```
 */
export function removeFromIndexes(entry: Entry): void {
  const { indexes } = entry.owned;
  if (indexes === undefined) return;
  indexes.all.remove(entry);
  stateIndex(indexes, entry.state).remove(entry);
  leaveContext(indexes, entry);
}

/**
 * Moves a stored entry to the index positions of its task's new context, state and status
 * timestamp, doing only the index work the change needs: none when neither changed (a new
 * artifact, the common update), a reposition for a new timestamp, a move between the per-state
 * indexes for a new state.
 *
 * @example
 * ```ts
 * entry.hold(heldFormOf(task));
 * reindex(entry, task.contextId, task.status.state, statusMs);
 * ```
 */
export function reindex(entry: Entry, contextId: string, state: TaskState, statusMs: number): void {
  const { indexes } = entry.owned;
  if (indexes === undefined) {
    // An owner that has never listed: the fields are all there is to move.
    entry.contextId = contextId;
    entry.state = state;
    entry.statusMs = statusMs;
    return;
  }
  if (contextId !== entry.contextId) {
    // Not expected (the task service keeps a task's context): the general, slower path.
    removeFromIndexes(entry);
    entry.contextId = contextId;
    entry.state = state;
    entry.statusMs = statusMs;
    addToIndexes(entry);
    return;
  }
  const timeChanged = statusMs !== entry.statusMs;
  const stateChanged = state !== entry.state;
  // The common update, a new artifact chunk: the sort key and the filters are unchanged.
  if (!timeChanged && !stateChanged) return;
  const { context } = entry;
  if (timeChanged) {
    indexes.all.remove(entry);
    context?.all.remove(entry);
  }
  // Removed with the old key, re-inserted with the new one.
  stateIndex(indexes, entry.state).remove(entry);
  if (context !== undefined) stateIndex(context, entry.state).remove(entry);
  entry.statusMs = statusMs;
  entry.state = state;
  if (timeChanged) {
    indexes.all.insert(entry);
    context?.all.insert(entry);
  }
  stateIndexFor(indexes, state).insert(entry);
  if (context !== undefined) stateIndexFor(context, state).insert(entry);
}
