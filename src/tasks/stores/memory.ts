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
 * - `owners`: per owner, its entries (a linked list) and, from its first ListTasks on, one
 *   ordered index per (contextId?, status?) filter combination (`memory/indexes.ts`), so that
 *   every filter combination is answered by exactly one index that holds only matching tasks: a
 *   page is a binary search plus the page itself, and `totalSize` is a rank query. Nothing ever
 *   scans or sorts the whole store. The indexes are built from the owner's entries when it
 *   first lists (about 1 µs a task, once), or when it reaches `INDEX_AT_TASKS` tasks (so that no
 *   list waits for a build of more), and kept until its last task leaves: most callers never
 *   list, and keeping them at every put cost 2–3 µs a task in process. Most contexts hold a
 *   single task (a message without a contextId starts a new one), so a context's indexes are
 *   created only when it gets its second task: until then the owner's `byContext` maps the
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
 * A finished task is kept as its JSON text, one flat string ({@link heldFormOf}): it stays
 * for minutes while the young-generation collector runs every few hundred milliseconds, and the
 * task's object tree copied and promoted by each collection was most of that collection's pause.
 * A read of a finished task (get, a page) parses it again: 3–6 µs for an echo task here.
 *
 * A put at the cap allocates little: the entry just evicted becomes the new task's
 * ({@link Entry.reuse}), index inserts at the newest end and removals at either end push, pop
 * or shift rather than splice, and `put` returns one shared settled promise instead of
 * being `async` (see `put`).
 *
 * The pieces live beside this file: `memory/entries.ts` (an entry and what its owner has),
 * `memory/indexes.ts` (the ListTasks indexes), `memory/sorted-index.ts`, `memory/linked-list.ts`,
 * `memory/pages.ts` (ListTasks), `memory/bytes.ts` (a task's size) and `memory/shares.ts`
 * (per-principal quotas, the eviction order, the bytes bound and the parked tasks' TTL).
 *
 * @example
 * ```ts
 * const store = new MemoryTaskStore({ maxTasks: 10_000, taskTtlMs: 60 * 60_000 });
 * await store.put('alice', task);
 * await store.get('alice', task.id); // the object put; an equal copy once the task is finished
 * await store.get('bob', task.id); // undefined
 * const page = await store.list('alice', { pageSize: 50 });
 * await store.close();
 * ```
 */
import { isTerminalState } from '../../protocol/model.js';
import type { Task, TaskState } from '../../protocol/model.js';
import type { TaskPage, TaskQuery, TaskStore } from '../store.js';
import { heldBytes } from './memory/bytes.js';
import { Entry, heldFormOf, newOwnerTasks, type HeldTask, type OwnerTasks, type Share } from './memory/entries.js';
import { addToIndexes, INDEX_AT_TASKS, indexesOf, reindex, removeFromIndexes } from './memory/indexes.js';
import { LinkedList } from './memory/linked-list.js';
import { readPage, readSingle } from './memory/pages.js';
import type { SortedIndex } from './memory/sorted-index.js';
import type { MemoryFairShareLimits } from './memory/limits.js';
import { FairShares } from './memory/shares.js';
import { checkTaskQuery, decodePageToken, statusMsOf } from './page-token.js';
import {
  checkRetention,
  DEFAULT_MAX_TASKS,
  DEFAULT_SWEEP_BATCH,
  DEFAULT_SWEEP_INTERVAL_MS,
  DEFAULT_TTL_MS,
} from './retention.js';

/**
 * Tuning for {@link MemoryTaskStore}. Every field is optional; the per-principal quotas, the
 * bytes bound, the parked TTL and `onEvent` are documented on {@link MemoryFairShareLimits}.
 *
 * @example
 * ```ts
 * const options: MemoryTaskStoreOptions = { maxTasks: 1_000, taskTtlMs: 5 * 60_000 };
 * ```
 */
export interface MemoryTaskStoreOptions extends MemoryFairShareLimits {
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

/**
 * The quota defaults and the event type live with the fair shares (`memory/limits.ts`).
 *
 * @example
 * ```ts
 * import { DEFAULT_PARKED_TTL_MS, type MemoryStoreEvent } from './memory.js';
 * ```
 */
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_PARKED_TASKS_PER_PRINCIPAL,
  DEFAULT_MAX_TASKS_PER_PRINCIPAL,
  DEFAULT_PARKED_TTL_MS,
  type MemoryStoreEvent,
} from './memory/limits.js';

const STORE_NAME = 'MemoryTaskStore';
/** Most tasks one timer tick drops, so a sweep never stalls the event loop for long. */
const SWEEP_BATCH = DEFAULT_SWEEP_BATCH;
/** What every successful put returns: one settled promise, shared (see `put`). */
const SETTLED: Promise<void> = Promise.resolve();

/**
 * A bounded in-memory {@link TaskStore}. See the module comment for the data layout.
 *
 * Complexity (n = tasks in the store, k = tasks in the queried index, p = page size,
 * B = index chunk size, 256): `get` O(1); `put` O(1) for an owner that has never listed; once it
 * has, `put` of a new task O(log n + B) for its four index insertions (two while its context has
 * no other task; O(n/B) more on the rare chunk split or merge) plus, at capacity, one eviction of
 * the same cost, and `put` of an existing task O(1) when its status is unchanged, otherwise
 * O(log n + B) for the indexes its new timestamp or state moves it in; `list` O(log k + p)
 * (and O(k log k) once, on an owner's first list, to build its indexes of k < 1,024 tasks),
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
  /** Per-principal quotas, the bytes bound and the parked TTL (see `memory/shares.ts`). */
  private readonly shares: FairShares;
  private readonly readClock: () => number;
  private readonly entries = new Map<string, Entry>();
  private readonly touched = new LinkedList<Entry>();
  private readonly terminal = new LinkedList<Entry>();
  /** Owner → its entries and, once it has listed, its indexes; here exactly while it has a task. */
  private readonly owners = new Map<string, OwnerTasks>();
  /** The entry detached last, kept for the next new task (at the cap, the one that evicted it). */
  private spare: Entry | undefined = undefined;
  private lastClockMs = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.maxTasks = options.maxTasks ?? DEFAULT_MAX_TASKS;
    this.taskTtlMs = options.taskTtlMs ?? DEFAULT_TTL_MS;
    const sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    checkRetention(STORE_NAME, { maxTasks: this.maxTasks, taskTtlMs: this.taskTtlMs, sweepIntervalMs });
    // Built once: the store's put and sweep call through it without allocating.
    this.shares = new FairShares(this.maxTasks, options, {
      count: () => this.entries.size,
      firstExpired: (nowMs) => this.firstExpired(nowMs),
      firstFinished: () => this.terminal.first(),
      evict: (entry) => this.detach(entry),
      replace: (entry, task, statusMs, nowMs) => {
        const held = heldFormOf(task);
        this.replace(entry, task, held, statusMs, nowMs, heldBytes(task, held));
      },
    });
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
   * The bytes charged against `maxBytes` (approximate JSON size of every task held).
   *
   * @example
   * ```ts
   * metrics.gauge('airlock_task_store_bytes', store.bytes);
   * ```
   */
  get bytes(): number {
    return this.shares.bytes;
  }

  /**
   * Creates or replaces a task. A new task is refused (CapacityError, naming the quota) when its
   * principal holds `maxTasksPerPrincipal` tasks none of which is finished, or
   * `maxParkedTasksPerPrincipal` parked ones, or when the store is full (count or bytes) of
   * unfinished, unexpired tasks; a replacement is never refused.
   *
   * @throws Error if the id already belongs to another owner (a bug in the caller: task
   *   ids are generated server-side and never shared); TaskStoreInputError `invalid_timestamp`
   *   if the status timestamp is not a date.
   * @example
   * ```ts
   * await store.put(owner, { ...task, status: { state: 'completed', timestamp: new Date().toISOString() } });
   * ```
   */
  put(owner: string, task: Task): Promise<void> {
    // Not `async`: the work is synchronous, and an async function allocates a promise per call
    // (and, with async hooks on, as under OpenTelemetry or node:test, tracks it), which cost
    // more than the put itself. A settled promise can be shared; failures still reject.
    try {
      this.putNow(owner, task);
      return SETTLED;
    } catch (error) {
      // putNow throws only Errors (CapacityError among them), as an async put would reject with.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private putNow(owner: string, task: Task): void {
    const nowMs = this.clock();
    const existing = this.liveEntry(task.id, nowMs);
    if (existing !== undefined && existing.owner !== owner) {
      // Deliberately vague: the message may be logged, and owner keys are principals.
      throw new Error('MemoryTaskStore: a task id cannot move to another owner');
    }
    // Parsed before anything changes, so that a bad timestamp leaves the store unchanged.
    const statusMs = statusMsOf(task, STORE_NAME);
    // Encoded before anything changes too: a task that cannot be encoded leaves the store as it was.
    const held = heldFormOf(task);
    const bytes = heldBytes(task, held);
    if (existing !== undefined) {
      this.replace(existing, task, held, statusMs, nowMs, bytes);
      // A replacement that grew the store past its bytes gives back finished tasks, never itself.
      this.shares.shedBytes(existing);
    } else {
      // Room first: an eviction may drop this owner's or this context's indexes.
      const share = this.shares.makeRoom(owner, nowMs, bytes);
      this.attach(owner, share, task, held, statusMs, nowMs, bytes);
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
    return entry !== undefined && entry.owner === owner ? entry.readTask() : undefined;
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
    // Drop everything expired first so that neither the page nor totalSize counts it, and fail
    // parked tasks past their TTL so that a status filter sees them as failed.
    const nowMs = this.clock();
    this.shares.failParked(nowMs, Number.POSITIVE_INFINITY);
    this.dropExpired(nowMs, Number.POSITIVE_INFINITY);
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
    const nowMs = this.clock();
    return this.shares.failParked(nowMs, limit) + this.dropExpired(nowMs, limit);
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

  /**
   * The entry for an id unless it has expired, in which case it is dropped on the spot; a parked
   * task past its TTL is failed first (and so reads as failed).
   */
  private liveEntry(taskId: string, nowMs: number): Entry | undefined {
    const entry = this.entries.get(taskId);
    if (entry === undefined) return undefined;
    if (this.isExpired(entry, nowMs)) {
      this.detach(entry);
      return undefined;
    }
    if (this.shares.isParkedTooLong(entry, nowMs)) this.shares.failParkedEntry(entry, nowMs);
    return entry;
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
    const tasks = this.owners.get(owner);
    if (tasks === undefined) return undefined;
    const owned = indexesOf(tasks);
    const group = contextId === undefined ? owned : owned.byContext.get(contextId);
    if (group instanceof Entry) return state === undefined || group.state === state ? group : undefined;
    return state === undefined ? group?.all : group?.byState.get(state);
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
  private attach(
    owner: string,
    share: Share,
    task: Task,
    held: HeldTask,
    statusMs: number,
    nowMs: number,
    bytes: number,
  ): void {
    let owned = this.owners.get(owner);
    if (owned === undefined) {
      owned = newOwnerTasks();
      this.owners.set(owner, owned);
    }
    let entry = this.spare;
    if (entry === undefined) entry = new Entry(owner, task, held, statusMs, nowMs, owned);
    else {
      this.spare = undefined;
      entry.reuse(owner, task, held, statusMs, nowMs, owned);
    }
    entry.share = share;
    entry.bytes = bytes;
    this.shares.attached(entry);
    this.entries.set(entry.id, entry);
    this.touched.append(entry.touchedNode);
    if (isTerminalState(entry.state)) this.terminal.append(entry.terminalNode);
    owned.entries.append(entry.ownerNode);
    owned.count += 1;
    if (owned.indexes === undefined && owned.count >= INDEX_AT_TASKS) indexesOf(owned);
    else addToIndexes(entry);
  }

  /**
   * Updates a stored task in place. Its entry stays in `entries` untouched, its list nodes
   * are moved rather than replaced, and it moves only in the indexes its change affects.
   */
  private replace(entry: Entry, task: Task, held: HeldTask, statusMs: number, nowMs: number, bytes: number): void {
    entry.hold(held);
    const { contextId } = task;
    const { state } = task.status;
    entry.touchedMs = nowMs;
    this.touched.moveToEnd(entry.touchedNode);
    this.shares.replaced(entry, state, bytes);
    if (isTerminalState(state)) {
      if (entry.terminalNode.linked) this.terminal.moveToEnd(entry.terminalNode);
      else this.terminal.append(entry.terminalNode);
    } else if (entry.terminalNode.linked) this.terminal.unlink(entry.terminalNode);
    reindex(entry, contextId, state, statusMs);
  }

  /** Drops a task from the store: the only place an owner's or a context's indexes go. */
  private detach(entry: Entry): void {
    this.entries.delete(entry.id);
    this.touched.unlink(entry.touchedNode);
    this.terminal.unlink(entry.terminalNode);
    this.shares.detached(entry);
    removeFromIndexes(entry);
    const { owned } = entry;
    owned.entries.unlink(entry.ownerNode);
    owned.count -= 1;
    if (owned.count === 0) this.owners.delete(entry.owner);
    // Nothing refers to it anymore: the next new task takes it over (see `Entry.reuse`).
    this.spare = entry;
  }
}
