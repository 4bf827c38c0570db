/**
 * The memory store's entries and the per-owner indexes they sit in: one ordered index per
 * ListTasks filter combination (every task, by state, by context, by context and state), and
 * the few moves a put makes in them. See `memory.ts` for why the layout is what it is.
 *
 * @example
 * ```ts
 * const owned: OwnerIndexes = { all: new SortedIndex(), byState: new Map(), byContext: new Map() };
 * const entry = new Entry('alice', task, heldFormOf(task), statusMs, nowMs, owned);
 * addToIndexes(entry);
 * ```
 */
import { taskJson } from '../../../protocol/model-json.js';
import { isTerminalState } from '../../../protocol/model.js';
import type { Task, TaskState } from '../../../protocol/model.js';
import { ListNode, type LinkedList } from './linked-list.js';
import { SortedIndex, type SortKey } from './sorted-index.js';

/**
 * An ordered index of tasks, and one per state: the owner's, or the owner's in one context.
 *
 * @example
 * ```ts
 * const group: IndexGroup = { all: new SortedIndex(), byState: new Map() };
 * ```
 */
export interface IndexGroup {
  readonly all: SortedIndex<Entry>;
  /** Created on first use; kept (possibly empty) while the group exists, at most one per state. */
  readonly byState: Map<TaskState, SortedIndex<Entry>>;
}

/**
 * One owner's indexes, one per combination of the contextId and status filters. Kept while
 * the owner has a task. A context maps to its only task's entry until it gets a second task,
 * and from then on to its own group, which stays until the context's last task leaves (a
 * group is never turned back into a single entry, so a context does not flip back and forth).
 * A context's slot is dropped when its last task leaves the store (or, on the general path,
 * moves to another context): one per context would otherwise leak.
 *
 * @example
 * ```ts
 * const owned: OwnerIndexes = { all: new SortedIndex(), byState: new Map(), byContext: new Map() };
 * ```
 */
export interface OwnerIndexes extends IndexGroup {
  readonly byContext: Map<string, IndexGroup | Entry>;
}

/**
 * One principal's share of the memory store: how many tasks it holds, how many of them are
 * parked (input- or auth-required), and its finished tasks, least recently updated first (the
 * ones it gives up first when it is over its quota or the store is full). Kept while it has a
 * task in the store.
 *
 * @example
 * ```ts
 * const share: Share = { key: 'client:a::a', tasks: 0, parked: 0, terminal: new LinkedList() };
 * ```
 */
export interface Share {
  readonly key: string;
  tasks: number;
  parked: number;
  readonly terminal: LinkedList<Entry>;
}

/**
 * One stored task, for the whole time its id is in the store. The fields the indexes sort
 * and group by are copied out of the task at put time, so that a caller mutating the task
 * by mistake cannot corrupt an index; they change only together with the index positions.
 *
 * @example
 * ```ts
 * const entry = new Entry(owner, task, heldFormOf(task), statusMs, nowMs, owned);
 * ```
 */
export class Entry implements SortKey {
  id: string;
  owner: string;
  /**
   * The task as put while it can still change; once it is finished, its JSON text. A finished
   * task stays until it is evicted or expires, long enough to be copied by every young-generation
   * collection it lives through and then promoted: as an object tree, those copies were most of
   * what a collection moved. One flat string is one object to copy and, once promoted, a leaf the
   * marker does not scan; the object tree of the task dies young. A string rather than a UTF-8
   * buffer of its own: no `ArrayBuffer` to allocate and sweep per task (3 µs a request less on one
   * core, docs/PERFORMANCE.md), and at most two bytes per UTF-16 unit where UTF-8 takes up to three
   * (the store charges units, `memory/bytes.ts`). The price: a parse per read (a get, a page). Made
   * by {@link heldFormOf}.
   */
  private held: HeldTask;
  contextId: string;
  state: TaskState;
  statusMs: number;
  touchedMs: number;
  /**
   * Its owner's indexes, and its context's: held so that a put looks neither up. The context
   * has no group (`undefined`) while this is its only task and it was never shared.
   */
  owned: OwnerIndexes;
  context: IndexGroup | undefined = undefined;
  /** Allocated once: an update moves them rather than allocating new ones. */
  readonly touchedNode: ListNode<Entry>;
  readonly terminalNode: ListNode<Entry>;
  /** In its principal's own list of finished tasks (eviction within its quota). */
  readonly shareTerminalNode: ListNode<Entry>;
  /** In the store's list of parked (input- or auth-required) tasks, for their idle TTL. */
  readonly parkedNode: ListNode<Entry>;
  /** The approximate JSON size of the task (see `taskBytes`), measured once per put. */
  bytes = 0;
  /** Its principal's share of the store (set when the store attaches the entry). */
  share: Share | undefined = undefined;

  constructor(owner: string, task: Task, held: HeldTask, statusMs: number, nowMs: number, owned: OwnerIndexes) {
    this.id = task.id;
    this.owner = owner;
    this.held = held;
    this.contextId = task.contextId;
    this.state = task.status.state;
    this.statusMs = statusMs;
    this.touchedMs = nowMs;
    this.owned = owned;
    this.touchedNode = new ListNode<Entry>(this);
    this.terminalNode = new ListNode<Entry>(this);
    this.shareTerminalNode = new ListNode<Entry>(this);
    this.parkedNode = new ListNode<Entry>(this);
  }

  /**
   * The stored task: the object put while it is unfinished; once finished, a copy parsed from its
   * JSON (a few µs for an echo task: call it once per read).
   *
   * @example
   * ```ts
   * const task = entry.readTask();
   * ```
   */
  readTask(): Task {
    const { held } = this;
    return typeof held === 'string' ? (JSON.parse(held) as Task) : held;
  }

  /**
   * Keeps a new version of its task, in the form {@link heldFormOf} made of it.
   *
   * @example
   * ```ts
   * entry.hold(heldFormOf(task));
   * ```
   */
  hold(held: HeldTask): void {
    this.held = held;
  }

  /**
   * Makes a detached entry (in no list, index or map) a new task's, keeping its list nodes. An
   * entry lives long enough to leave V8's young generation, so one dropped at every eviction
   * is old-generation garbage; the store hands the entry it has just evicted to the task that
   * took its place instead.
   *
   * @example
   * ```ts
   * spare.reuse(owner, task, heldFormOf(task), statusMs, nowMs, owned);
   * ```
   */
  reuse(owner: string, task: Task, held: HeldTask, statusMs: number, nowMs: number, owned: OwnerIndexes): void {
    this.id = task.id;
    this.owner = owner;
    this.held = held;
    this.contextId = task.contextId;
    this.state = task.status.state;
    this.statusMs = statusMs;
    this.touchedMs = nowMs;
    this.owned = owned;
    this.context = undefined;
    this.bytes = 0;
    this.share = undefined;
  }
}

/**
 * What an entry keeps of a task (see `Entry.held`): the task itself, or its JSON once finished.
 *
 * @example
 * ```ts
 * const held: HeldTask = heldFormOf(task);
 * ```
 */
export type HeldTask = Task | string;

/**
 * The form an entry keeps a task in: a finished task's JSON text, any other task as it is. Made
 * before the store changes anything, so that a task that cannot be encoded leaves the store as
 * it was.
 *
 * @example
 * ```ts
 * entry.hold(heldFormOf(task));
 * ```
 */
export function heldFormOf(task: Task): HeldTask {
  return isTerminalState(task.status.state) ? taskJson(task) : task;
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
function joinContext(entry: Entry): void {
  const { byContext } = entry.owned;
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
function leaveContext(entry: Entry): void {
  const { context } = entry;
  if (context === undefined) {
    entry.owned.byContext.delete(entry.contextId);
    return;
  }
  context.all.remove(entry);
  stateIndex(context, entry.state).remove(entry);
  if (context.all.size === 0) entry.owned.byContext.delete(entry.contextId);
  entry.context = undefined;
}

/**
 * The group's index for a state, created if it is the first task in that state.
 *
 * @example
 * ```ts
 * stateIndexFor(entry.owned, 'working').insert(entry);
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
 * stateIndex(entry.owned, entry.state).remove(entry);
 * ```
 */
export function stateIndex(group: IndexGroup, state: TaskState): SortedIndex<Entry> {
  const index = group.byState.get(state);
  if (index === undefined) throw new Error('MemoryTaskStore: index missing for a stored task');
  return index;
}

/**
 * Into the indexes of its filters: every task, by state, and its context's (see {@link joinContext}).
 *
 * @example
 * ```ts
 * addToIndexes(new Entry(owner, task, heldFormOf(task), statusMs, nowMs, owned));
 * ```
 */
export function addToIndexes(entry: Entry): void {
  addToGroup(entry.owned, entry);
  joinContext(entry);
}

/**
 * Out of its indexes; drops its context's slot if that was its last task. The owner's stay.
 *
 * @example
 * ```ts
 * removeFromIndexes(entry);
 * ```
 */
export function removeFromIndexes(entry: Entry): void {
  const { owned } = entry;
  owned.all.remove(entry);
  stateIndex(owned, entry.state).remove(entry);
  leaveContext(entry);
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
  const { owned, context } = entry;
  if (timeChanged) {
    owned.all.remove(entry);
    context?.all.remove(entry);
  }
  // Removed with the old key, re-inserted with the new one.
  stateIndex(owned, entry.state).remove(entry);
  if (context !== undefined) stateIndex(context, entry.state).remove(entry);
  entry.statusMs = statusMs;
  entry.state = state;
  if (timeChanged) {
    owned.all.insert(entry);
    context?.all.insert(entry);
  }
  stateIndexFor(owned, state).insert(entry);
  if (context !== undefined) stateIndexFor(context, state).insert(entry);
}
