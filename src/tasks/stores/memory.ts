/**
 * The default task store: bounded, in memory, with an idle TTL.
 *
 * Layout, and why each piece exists:
 * - `entries` (Map by task id) gives O(1) `get`. A task of another owner reads as missing.
 * - `touched`, a linked list in update order, makes TTL expiry O(1) per task: the least
 *   recently updated task is always at its head, so a sweep stops at the first live one.
 * - `terminal`, a linked list of finished tasks in update order, makes eviction O(1): the
 *   victim is its head. (A `Map` used as a queue is not O(1) in V8: deleting from its front
 *   leaves holes that every later `keys().next()` walks over until the table is rehashed.)
 * - `indexes`, per owner: one ordered index per (contextId?, status?) filter combination
 *   ({@link OwnerIndexes}), so that every ListTasks filter combination is answered by exactly
 *   one index that holds only matching tasks: a page is a binary search plus the page itself,
 *   and `totalSize` is a rank query. Nothing ever scans or sorts the whole store. Most contexts
 *   hold a single task (a message without a contextId starts a new one), so a context's indexes
 *   are created only when it gets its second task: until then the owner's `byContext` maps the
 *   context to that task's entry, which answers a contextId-filtered list by itself.
 *
 * A put of an existing task (the service puts each task several times as its status and
 * artifacts change) updates it in place, and that is the hot path. Each task id has one
 * {@link Entry} for its whole life: `entries` is written once when the task arrives and deleted
 * once when it leaves. V8 keeps a deleted Map key as a tombstone until the table is rehashed,
 * so deleting and re-setting the same key on every update made lookups in a large Map walk
 * thousands of dead slots. For the same reason indexes are only dropped when a task leaves
 * the store (eviction, expiry) or its context (which the task service never changes), never
 * because a replacement empties one for a moment, and a replacement does only the index work
 * its change needs: none for a new artifact (same status), a reposition for a new timestamp,
 * a move between the per-state indexes for a new state.
 *
 * @example
 * ```ts
 * const store = new MemoryTaskStore({ maxTasks: 10_000, taskTtlMs: 60 * 60_000 });
 * await store.put('alice', task);
 * await store.get('alice', task.id); // the same object
 * await store.get('bob', task.id); // undefined
 * const page = await store.list('alice', { pageSize: 50 });
 * await store.close();
 * ```
 */
import { A2AError } from '../../protocol/errors.js';
import { isTerminalState } from '../../protocol/model.js';
import type { Task, TaskState } from '../../protocol/model.js';
import type { TaskPage, TaskQuery, TaskStore } from '../store.js';
import { checkTaskQuery, decodePageToken, encodePageToken } from './page-token.js';

/**
 * Tuning for {@link MemoryTaskStore}. Every field is optional.
 *
 * @example
 * ```ts
 * const options: MemoryTaskStoreOptions = { maxTasks: 1_000, taskTtlMs: 5 * 60_000 };
 * ```
 */
export interface MemoryTaskStoreOptions {
  /** Most tasks held at once, over all owners. Default 10 000. */
  maxTasks?: number;
  /** A task not updated (put) for this long is dropped. Default 60 minutes. */
  taskTtlMs?: number;
  /** How often the background sweep drops idle tasks. Default 60 s. */
  sweepIntervalMs?: number;
  /**
   * Clock for the idle TTL, in ms. Defaults to a monotonic clock: only differences between
   * its readings matter, and a wall clock stepping backwards must not extend or cut a TTL.
   */
  now?: () => number;
}

const DEFAULT_MAX_TASKS = 10_000;
const DEFAULT_TTL_MS = 60 * 60_000;
const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
/** The largest delay `setInterval` honours; longer ones silently become 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;
/** Most tasks one timer tick drops, so a sweep never stalls the event loop for long. */
const SWEEP_BATCH = 1_000;

/**
 * A bounded in-memory {@link TaskStore}. See the module comment for the data layout.
 *
 * Complexity (n = tasks in the store, k = tasks in the queried index, p = page size,
 * B = index chunk size, 256): `get` O(1); `put` of a new task O(log n + B) for its four index
 * insertions (two while its context has no other task; O(n/B) more on the rare chunk split or merge) plus, at capacity, one eviction
 * of the same cost; `put` of an existing task O(1) when its status is unchanged, otherwise
 * O(log n + B) for the indexes its new timestamp or state moves it in; `list` O(log k + p),
 * plus O(k/B) to count `totalSize` when `statusTimestampAfter` is set, plus dropping tasks
 * that expired since the last sweep (amortised O(1) each: every task is dropped at most
 * once); `sweep` O(dropped).
 *
 * @example
 * ```ts
 * const store = new MemoryTaskStore({ maxTasks: 2 });
 * await store.put('alice', doneTask);
 * await store.put('alice', workingTask);
 * await store.put('alice', anotherTask); // evicts doneTask, the oldest finished task
 * ```
 */
export class MemoryTaskStore implements TaskStore {
  private readonly maxTasks: number;
  private readonly taskTtlMs: number;
  private readonly readClock: () => number;
  private readonly entries = new Map<string, Entry>();
  private readonly touched = new LinkedList<Entry>();
  private readonly terminal = new LinkedList<Entry>();
  /** Owner → that owner's indexes; an owner is here exactly while it has a task in the store. */
  private readonly indexes = new Map<string, OwnerIndexes>();
  private lastClockMs = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.maxTasks = options.maxTasks ?? DEFAULT_MAX_TASKS;
    this.taskTtlMs = options.taskTtlMs ?? DEFAULT_TTL_MS;
    const sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    checkOptions(this.maxTasks, this.taskTtlMs, sweepIntervalMs);
    this.readClock = options.now ?? (() => performance.now());
    // unref: an idle store must not keep the process alive.
    this.timer = setInterval(() => this.sweep(), sweepIntervalMs).unref();
  }

  /**
   * How many tasks are held, counting expired ones the sweep has not dropped yet.
   *
   * @example
   * ```ts
   * metrics.gauge('airlock_tasks', store.size);
   * ```
   */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Creates or replaces a task. A new task is refused (A2AError INTERNAL) only when the
   * store is full of unfinished, unexpired tasks; a replacement is never refused.
   *
   * @throws Error if the id already belongs to another owner (a bug in the caller: task
   *   ids are generated server-side and never shared), or if the status timestamp is not a date.
   * @example
   * ```ts
   * await store.put(owner, { ...task, status: { state: 'completed', timestamp: new Date().toISOString() } });
   * ```
   */
  async put(owner: string, task: Task): Promise<void> {
    const nowMs = this.clock();
    const existing = this.liveEntry(task.id, nowMs);
    if (existing !== undefined && existing.owner !== owner) {
      // Deliberately vague: the message may be logged, and owner keys are principals.
      throw new Error('MemoryTaskStore: a task id cannot move to another owner');
    }
    // Parsed before anything changes, so that a bad timestamp leaves the store unchanged.
    const statusMs = statusMsOf(task);
    if (existing !== undefined) {
      this.replace(existing, task, statusMs, nowMs);
    } else {
      // Room first: an eviction may drop this owner's or this context's indexes.
      this.makeRoom(nowMs);
      this.attach(owner, task, statusMs, nowMs);
    }
  }

  /**
   * The stored task, or `undefined` if it is missing, expired, or another owner's.
   *
   * @example
   * ```ts
   * const task = await store.get(owner, 'task-1');
   * if (task === undefined) throw new A2AError('TASK_NOT_FOUND');
   * ```
   */
  async get(owner: string, taskId: string): Promise<Task | undefined> {
    const entry = this.liveEntry(taskId, this.clock());
    return entry !== undefined && entry.owner === owner ? entry.task : undefined;
  }

  /**
   * One page of the owner's tasks, newest status timestamp first (ties: id descending).
   *
   * @throws A2AError INVALID_PARAMS for a malformed `pageToken`, `pageSize` or `statusTimestampAfter`.
   * @example
   * ```ts
   * let page = await store.list(owner, { pageSize: 50, contextId: 'ctx-1' });
   * while (page.nextPageToken !== '') {
   *   page = await store.list(owner, { pageSize: 50, contextId: 'ctx-1', pageToken: page.nextPageToken });
   * }
   * ```
   */
  async list(owner: string, query: TaskQuery): Promise<TaskPage> {
    checkTaskQuery(query);
    const cursor = query.pageToken ? decodePageToken(query.pageToken) : undefined;
    // Drop everything expired first so that neither the page nor totalSize counts it.
    this.dropExpired(this.clock(), Number.POSITIVE_INFINITY);
    const index = this.indexFor(owner, query.contextId, query.status);
    if (index instanceof Entry) return readSingle(index, query.statusTimestampAfter, cursor);
    // An index may be empty (a state every task has left): it reads like a missing one.
    if (index === undefined) return { tasks: [], nextPageToken: '', totalSize: 0 };
    return readPage(index, query.pageSize, query.statusTimestampAfter, cursor);
  }

  /**
   * Drops up to `limit` tasks idle for longer than the TTL, oldest first; returns how many.
   * The timer calls it with a bounded batch; it is public for tests and for operators who
   * want memory back now.
   *
   * @example
   * ```ts
   * const dropped = store.sweep();
   * ```
   */
  sweep(limit: number = SWEEP_BATCH): number {
    return this.dropExpired(this.clock(), limit);
  }

  /**
   * Stops the sweep timer. The tasks stay readable; nothing expires in the background anymore.
   *
   * @example
   * ```ts
   * await store.close();
   * ```
   */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Never runs backwards, even if the injected clock does: the `touched` list must stay
   * sorted by time for the sweep to stop at its first live entry.
   */
  private clock(): number {
    this.lastClockMs = Math.max(this.lastClockMs, this.readClock());
    return this.lastClockMs;
  }

  private isExpired(entry: Entry, nowMs: number): boolean {
    return nowMs - entry.touchedMs >= this.taskTtlMs;
  }

  /** The entry for an id unless it has expired, in which case it is dropped on the spot. */
  private liveEntry(taskId: string, nowMs: number): Entry | undefined {
    const entry = this.entries.get(taskId);
    if (entry === undefined || !this.isExpired(entry, nowMs)) return entry;
    this.detach(entry);
    return undefined;
  }

  /**
   * The one index that answers a ListTasks filter combination, if the owner has it; for a
   * context holding a single task, that task's entry if it matches the state filter.
   */
  private indexFor(
    owner: string,
    contextId: string | undefined,
    state: TaskState | undefined,
  ): SortedIndex<Entry> | Entry | undefined {
    const owned = this.indexes.get(owner);
    const group = contextId === undefined ? owned : owned?.byContext.get(contextId);
    if (group instanceof Entry) return state === undefined || group.state === state ? group : undefined;
    return state === undefined ? group?.all : group?.byState.get(state);
  }

  /** Evicts until a new task fits: finished tasks first (least recently updated), then expired ones. */
  private makeRoom(nowMs: number): void {
    while (this.entries.size >= this.maxTasks) {
      const victim = this.terminal.first() ?? this.firstExpired(nowMs);
      if (victim === undefined) throw new A2AError('INTERNAL', 'Task store is full; try again later');
      this.detach(victim);
    }
  }

  /** The least recently updated task, if it has expired; if it has not, no task has. */
  private firstExpired(nowMs: number): Entry | undefined {
    const oldest = this.touched.first();
    return oldest !== undefined && this.isExpired(oldest, nowMs) ? oldest : undefined;
  }

  private dropExpired(nowMs: number, limit: number): number {
    let dropped = 0;
    for (let entry = this.firstExpired(nowMs); entry !== undefined && dropped < limit;) {
      this.detach(entry);
      dropped++;
      entry = this.firstExpired(nowMs);
    }
    return dropped;
  }

  /** Stores a task whose id is not in the store. */
  private attach(owner: string, task: Task, statusMs: number, nowMs: number): void {
    let owned = this.indexes.get(owner);
    if (owned === undefined) {
      owned = { all: new SortedIndex(), byState: new Map(), byContext: new Map() };
      this.indexes.set(owner, owned);
    }
    const entry = new Entry(owner, task, statusMs, nowMs, owned);
    this.entries.set(entry.id, entry);
    this.touched.append(entry.touchedNode);
    if (isTerminalState(entry.state)) this.terminal.append(entry.terminalNode);
    addToIndexes(entry);
  }

  /**
   * Updates a stored task in place. Its entry stays in `entries` untouched, its list nodes
   * are moved rather than replaced, and it moves only in the indexes its change affects.
   */
  private replace(entry: Entry, task: Task, statusMs: number, nowMs: number): void {
    entry.task = task;
    entry.touchedMs = nowMs;
    this.touched.moveToEnd(entry.touchedNode);
    const { contextId } = task;
    const { state } = task.status;
    const wasTerminal = entry.terminalNode.linked;
    if (isTerminalState(state)) {
      if (wasTerminal) this.terminal.moveToEnd(entry.terminalNode);
      else this.terminal.append(entry.terminalNode);
    } else if (wasTerminal) {
      this.terminal.unlink(entry.terminalNode);
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

  /** Drops a task from the store: the only place an owner's or a context's indexes go. */
  private detach(entry: Entry): void {
    this.entries.delete(entry.id);
    this.touched.unlink(entry.touchedNode);
    this.terminal.unlink(entry.terminalNode);
    removeFromIndexes(entry);
    if (entry.owned.all.size === 0) this.indexes.delete(entry.owner);
  }
}

// ---------------------------------------------------------------------------------------------
// Entries and their indexes

/** An ordered index of tasks, and one per state: the owner's, or the owner's in one context. */
interface IndexGroup {
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
 */
interface OwnerIndexes extends IndexGroup {
  readonly byContext: Map<string, IndexGroup | Entry>;
}

/**
 * One stored task, for the whole time its id is in the store. The fields the indexes sort
 * and group by are copied out of the task at put time, so that a caller mutating the task
 * by mistake cannot corrupt an index; they change only together with the index positions.
 */
class Entry implements SortKey {
  readonly id: string;
  readonly owner: string;
  task: Task;
  contextId: string;
  state: TaskState;
  statusMs: number;
  touchedMs: number;
  /**
   * Its owner's indexes, and its context's: held so that a put looks neither up. The context
   * has no group (`undefined`) while this is its only task and it was never shared.
   */
  readonly owned: OwnerIndexes;
  context: IndexGroup | undefined = undefined;
  /** Allocated once: an update moves them rather than allocating new ones. */
  readonly touchedNode: ListNode<Entry>;
  readonly terminalNode: ListNode<Entry>;

  constructor(owner: string, task: Task, statusMs: number, nowMs: number, owned: OwnerIndexes) {
    this.id = task.id;
    this.owner = owner;
    this.task = task;
    this.contextId = task.contextId;
    this.state = task.status.state;
    this.statusMs = statusMs;
    this.touchedMs = nowMs;
    this.owned = owned;
    this.touchedNode = new ListNode<Entry>(this);
    this.terminalNode = new ListNode<Entry>(this);
  }
}

function statusMsOf(task: Task): number {
  const statusMs = Date.parse(task.status.timestamp);
  if (!Number.isFinite(statusMs)) {
    throw new Error('MemoryTaskStore: task.status.timestamp is not a date');
  }
  return statusMs;
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

/** The group's index for a state, created if it is the first task in that state. */
function stateIndexFor(group: IndexGroup, state: TaskState): SortedIndex<Entry> {
  let index = group.byState.get(state);
  if (index === undefined) {
    index = new SortedIndex();
    group.byState.set(state, index);
  }
  return index;
}

/** The group's index for the state of a task it holds. */
function stateIndex(group: IndexGroup, state: TaskState): SortedIndex<Entry> {
  const index = group.byState.get(state);
  if (index === undefined) throw new Error('MemoryTaskStore: index missing for a stored task');
  return index;
}

/** Into the indexes of its filters: every task, by state, and its context's (see {@link joinContext}). */
function addToIndexes(entry: Entry): void {
  addToGroup(entry.owned, entry);
  joinContext(entry);
}

/** Out of its indexes; drops its context's slot if that was its last task. The owner's stay. */
function removeFromIndexes(entry: Entry): void {
  const { owned } = entry;
  owned.all.remove(entry);
  stateIndex(owned, entry.state).remove(entry);
  leaveContext(entry);
}

// ---------------------------------------------------------------------------------------------
// Listing and page tokens

/**
 * Walks the index downwards from just below the cursor. One item past the page is peeked
 * at so that the last page gets `''` rather than a token leading to an empty page.
 */
function readPage(
  index: SortedIndex<Entry>,
  pageSize: number,
  floorMs: number | undefined,
  cursor: SortKey | undefined,
): TaskPage {
  const totalSize =
    floorMs === undefined ? index.size : index.countFrom(index.lowerBound({ statusMs: floorMs, id: '' }));
  const start = cursor === undefined ? index.end() : index.lowerBound(cursor);
  const page: Entry[] = [];
  let more = false;
  for (const entry of index.descendingBefore(start)) {
    if (floorMs !== undefined && entry.statusMs < floorMs) break;
    if (page.length === pageSize) {
      more = true;
      break;
    }
    page.push(entry);
  }
  const last = page[page.length - 1];
  return {
    tasks: page.map((entry) => entry.task),
    nextPageToken: more && last !== undefined ? encodePageToken(last) : '',
    totalSize,
  };
}

/**
 * {@link readPage} for a context holding a single task that matches the state filter: a page
 * size is at least 1, so the page is that task or nothing, and there is never a next page.
 */
function readSingle(entry: Entry, floorMs: number | undefined, cursor: SortKey | undefined): TaskPage {
  const matches = floorMs === undefined || entry.statusMs >= floorMs;
  const shown = matches && (cursor === undefined || compareKeys(entry, cursor) < 0);
  return { tasks: shown ? [entry.task] : [], nextPageToken: '', totalSize: matches ? 1 : 0 };
}

function checkOptions(maxTasks: number, taskTtlMs: number, sweepIntervalMs: number): void {
  if (!Number.isSafeInteger(maxTasks) || maxTasks < 1) {
    throw new RangeError('MemoryTaskStore: maxTasks must be a positive integer');
  }
  if (!(taskTtlMs > 0)) throw new RangeError('MemoryTaskStore: taskTtlMs must be positive');
  if (!(sweepIntervalMs > 0 && sweepIntervalMs <= MAX_TIMER_MS)) {
    throw new RangeError(`MemoryTaskStore: sweepIntervalMs must be in (0, ${MAX_TIMER_MS}]`);
  }
}

// ---------------------------------------------------------------------------------------------
// Ordered index

/** The list order: status timestamp, then id. Task ids are unique, so no two keys are equal. */
interface SortKey {
  readonly statusMs: number;
  readonly id: string;
}

function compareKeys(a: SortKey, b: SortKey): number {
  if (a.statusMs !== b.statusMs) return a.statusMs < b.statusMs ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** First position in a sorted array whose key is ≥ `key`. */
function lowerBoundIn(items: readonly SortKey[], key: SortKey): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(items[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A place between items: before `chunks[chunk][offset]`. */
interface Position {
  readonly chunk: number;
  readonly offset: number;
}

/** Target chunk size: chunks split above twice this and merge below a quarter of it. */
const CHUNK_LOAD = 256;

/**
 * An ascending sorted list kept as a list of sorted chunks (the "sorted containers" layout).
 * A plain sorted array would make every insert or removal an O(n) move; with chunks it is
 * O(log n + B), a rank query is O(n/B), and a walk from any position is O(1) per item.
 * Tasks are usually added with the newest timestamp, i.e. at the end, which is the cheap case.
 */
class SortedIndex<T extends SortKey> {
  private readonly chunks: T[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  insert(item: T): void {
    const last = this.chunks.length - 1;
    if (last < 0) {
      this.chunks.push([item]);
    } else {
      const at = Math.min(this.chunkFor(item), last);
      const chunk = this.chunks[at]!;
      chunk.splice(lowerBoundIn(chunk, item), 0, item);
      if (chunk.length > 2 * CHUNK_LOAD) this.chunks.splice(at + 1, 0, chunk.splice(CHUNK_LOAD));
    }
    this.count++;
  }

  /** Removes an item, found by its key: the key must not have changed since it was inserted. */
  remove(item: T): void {
    const at = this.chunkFor(item);
    const chunk = this.chunks[at];
    const offset = chunk === undefined ? 0 : lowerBoundIn(chunk, item);
    if (chunk?.[offset] !== item) throw new Error('SortedIndex: item not found; the index is corrupt');
    chunk.splice(offset, 1);
    this.count--;
    this.rebalance(at);
  }

  /** Where `key` would be inserted: every item before it is smaller. */
  lowerBound(key: SortKey): Position {
    const at = this.chunkFor(key);
    const chunk = this.chunks[at];
    return { chunk: at, offset: chunk === undefined ? 0 : lowerBoundIn(chunk, key) };
  }

  end(): Position {
    return { chunk: this.chunks.length, offset: 0 };
  }

  /** How many items are at or after a position. */
  countFrom(position: Position): number {
    let count = 0;
    for (let at = position.chunk; at < this.chunks.length; at++) count += this.chunks[at]!.length;
    return count - position.offset;
  }

  /** The items before a position, largest first. Do not modify the index while iterating. */
  *descendingBefore(position: Position): Generator<T> {
    let offset = position.offset - 1;
    for (let at = position.chunk; at >= 0; at--) {
      const chunk = this.chunks[at];
      if (chunk !== undefined) for (; offset >= 0; offset--) yield chunk[offset]!;
      offset = (this.chunks[at - 1]?.length ?? 0) - 1;
    }
  }

  /** The first chunk whose largest item is ≥ `key`; `chunks.length` if there is none. */
  private chunkFor(key: SortKey): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid]!;
      if (compareKeys(chunk[chunk.length - 1]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Keeps chunks from shrinking into many tiny ones, which would make rank queries slow. */
  private rebalance(at: number): void {
    const chunk = this.chunks[at]!;
    if (chunk.length === 0) {
      this.chunks.splice(at, 1);
      return;
    }
    if (chunk.length >= CHUNK_LOAD / 4 || this.chunks.length === 1) return;
    const left = at + 1 < this.chunks.length ? at : at - 1;
    const merged = this.chunks[left]!.concat(this.chunks[left + 1]!);
    if (merged.length <= 2 * CHUNK_LOAD) this.chunks.splice(left, 2, merged);
    else this.chunks.splice(left, 2, merged.slice(0, merged.length >>> 1), merged.slice(merged.length >>> 1));
  }
}

// ---------------------------------------------------------------------------------------------
// Doubly linked list

/** A list node, owned by its value for life and linked into at most one list at a time. */
class ListNode<T> {
  readonly value: T;
  prev: ListNode<T> | undefined = undefined;
  next: ListNode<T> | undefined = undefined;
  /** Whether it is in a list: unlinking a node twice is a no-op rather than a corrupted list. */
  linked = false;

  constructor(value: T) {
    this.value = value;
  }
}

/**
 * Insertion-ordered, with O(1) append, unlink, move to the end and first: the queues for
 * expiry and eviction. The caller allocates the nodes, so that moving costs no allocation.
 */
class LinkedList<T> {
  private head: ListNode<T> | undefined;
  private tail: ListNode<T> | undefined;

  first(): T | undefined {
    return this.head?.value;
  }

  /** Links a node that is in no list at the end. */
  append(node: ListNode<T>): void {
    if (node.linked) throw new Error('LinkedList: node is already linked');
    node.prev = this.tail;
    node.next = undefined;
    node.linked = true;
    if (this.tail === undefined) this.head = node;
    else this.tail.next = node;
    this.tail = node;
  }

  /** Unlinks a node of this list; does nothing if it is not linked. */
  unlink(node: ListNode<T>): void {
    if (!node.linked) return;
    if (node.prev === undefined) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) this.tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = undefined;
    node.next = undefined;
    node.linked = false;
  }

  /** Makes a node of this list its last one. */
  moveToEnd(node: ListNode<T>): void {
    if (node === this.tail) return;
    this.unlink(node);
    this.append(node);
  }
}
