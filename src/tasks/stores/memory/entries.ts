/**
 * The memory store's entries, what each owner has in the store (its entries, and its ListTasks
 * indexes once it has listed), and the form a task is held in. The index moves are in
 * `indexes.ts`; see `memory.ts` for why the layout is what it is.
 *
 * @example
 * ```ts
 * const owned = newOwnerTasks();
 * const entry = new Entry('alice', task, heldFormOf(task), statusMs, nowMs, owned);
 * owned.entries.append(entry.ownerNode);
 * ```
 */
import { taskJson } from '../../../protocol/model-json.js';
import { isTerminalState } from '../../../protocol/model.js';
import type { Task, TaskState } from '../../../protocol/model.js';
import { LinkedList, ListNode } from './linked-list.js';
import type { SortedIndex, SortKey } from './sorted-index.js';

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
 * What one owner has in the store, kept while it has a task there: its entries in arrival order,
 * and its ListTasks indexes, built from those entries on its first list (`indexesOf` in
 * `indexes.ts`) and kept up to date from then on. Most callers never list, and keeping four
 * sorted indexes and a map of contexts current at every put cost 2–3 µs a task in process.
 *
 * @example
 * ```ts
 * const owned = newOwnerTasks();
 * owned.indexes; // undefined until the owner lists
 * ```
 */
export interface OwnerTasks {
  readonly entries: LinkedList<Entry>;
  /** How many entries `entries` holds. */
  count: number;
  indexes: OwnerIndexes | undefined;
}

/**
 * An owner's record with no task and no indexes yet.
 *
 * @example
 * ```ts
 * owners.set(owner, newOwnerTasks());
 * ```
 */
export function newOwnerTasks(): OwnerTasks {
  return { entries: new LinkedList<Entry>(), count: 0, indexes: undefined };
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
   * core, docs/PERFORMANCE-LOG.md), and at most two bytes per UTF-16 unit where UTF-8 takes up to three
   * (the store charges units, `memory/bytes.ts`). The price: a parse per read (a get, a page). Made
   * by {@link heldFormOf}.
   */
  private held: HeldTask;
  contextId: string;
  state: TaskState;
  statusMs: number;
  touchedMs: number;
  /**
   * What its owner has in the store, and its context's index group: held so that a put looks
   * neither up. The context has no group (`undefined`) while this is its only task and it was
   * never shared, and while its owner has no indexes.
   */
  owned: OwnerTasks;
  context: IndexGroup | undefined = undefined;
  /** Allocated once: an update moves them rather than allocating new ones. */
  readonly touchedNode: ListNode<Entry>;
  readonly terminalNode: ListNode<Entry>;
  /** In its owner's list of entries (`OwnerTasks.entries`). */
  readonly ownerNode: ListNode<Entry>;
  /** In its principal's own list of finished tasks (eviction within its quota). */
  readonly shareTerminalNode: ListNode<Entry>;
  /** In the store's list of parked (input- or auth-required) tasks, for their idle TTL. */
  readonly parkedNode: ListNode<Entry>;
  /** The approximate JSON size of the task (see `taskBytes`), measured once per put. */
  bytes = 0;
  /** Its principal's share of the store (set when the store attaches the entry). */
  share: Share | undefined = undefined;

  constructor(owner: string, task: Task, held: HeldTask, statusMs: number, nowMs: number, owned: OwnerTasks) {
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
    this.ownerNode = new ListNode<Entry>(this);
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
  reuse(owner: string, task: Task, held: HeldTask, statusMs: number, nowMs: number, owned: OwnerTasks): void {
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
