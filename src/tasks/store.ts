/**
 * The task store contract. Every method is scoped by the owner's principal key: a task that
 * belongs to someone else is indistinguishable from a missing one. Implementations:
 * `stores/memory.ts` (bounded, the default), `stores/sqlite.ts` and `stores/postgres.ts`
 * (durable; see `stores/index.ts`). `get` and `list` may return copies or the stored objects:
 * callers never mutate either.
 *
 * @example
 * ```ts
 * await store.put(owner, task);
 * const same = await store.get(owner, task.id);   // the task
 * const none = await store.get(other, task.id);   // undefined
 * ```
 */
import type { ApprovalRecords } from './stores/approval-records.js';
import type { DurablePush } from './stores/push-outbox.js';
import type { TurnLeases } from './stores/leases.js';
import type { Task, TaskState } from '../protocol/model.js';

export interface TaskQuery {
  contextId?: string;
  status?: TaskState;
  /** 1..100. */
  pageSize: number;
  /** Opaque cursor from a previous page (validated by the store; a bad one throws A2AError INVALID_PARAMS). */
  pageToken?: string;
  /** Epoch ms: only tasks whose status timestamp is at or after this. */
  statusTimestampAfter?: number;
}

export interface TaskPage {
  /** Newest status timestamp first (ties broken by id, descending). */
  tasks: Task[];
  /** `''` on the last page. */
  nextPageToken: string;
  /** How many tasks match the filters in all pages. */
  totalSize: number;
}

/**
 * What the writer knows about a put that the store may not: whether the task is new.
 *
 * @example
 * ```ts
 * await store.put(owner, task, CREATED);
 * ```
 */
export interface PutOptions {
  /**
   * The task's first put: its principal's share is checked now (the database stores cannot tell
   * a new task from an update without a read; the memory store can, and ignores this).
   */
  readonly created?: boolean;
}

/**
 * The options of a new task's first put.
 *
 * @example
 * ```ts
 * await store.put(owner, task, CREATED); // may throw CapacityError naming the caller's quota
 * ```
 */
export const CREATED: PutOptions = Object.freeze({ created: true });

export interface TaskStore {
  /**
   * Creates or replaces a task. The stored object must not be mutated afterwards by the
   * caller: the service writes a new object for every change. A new task (`options.created`)
   * over its principal's share is refused with a CapacityError naming the quota.
   */
  put(owner: string, task: Task, options?: PutOptions): Promise<void>;
  get(owner: string, taskId: string): Promise<Task | undefined>;
  list(owner: string, query: TaskQuery): Promise<TaskPage>;
  /**
   * Restart safety, for a store one process serves alone (SQLite; PostgreSQL with one replica):
   * replaces every unexpired task still `submitted` or `working` with `settle(task, owner)`, and
   * returns how many. Called once at startup, before serving: such tasks belong to a process
   * that is gone. Absent where nothing survives a restart (memory); never called when several
   * replicas share the store (their running tasks are not a dead process's).
   */
  failRunning?(settle: (task: Task, owner: string) => Task): Promise<number>;
  /**
   * Where a durable store keeps the actions waiting for a person (SQLite, PostgreSQL), so that
   * they outlive the process and any replica can decide them. Absent in the memory store: the
   * approvals service then keeps them in its own memory.
   */
  readonly approvals?: ApprovalRecords;
  /**
   * Where a durable store keeps push configs and the push outbox (SQLite, PostgreSQL), so that
   * pending webhooks outlive the process and replicas share them. Absent in the memory store.
   */
  readonly push?: DurablePush;
  /**
   * Turn leases, in a store several replicas share (PostgreSQL): how a surviving replica learns
   * that the replica running a turn died (see stores/leases.ts). Absent in memory and SQLite.
   */
  readonly leases?: TurnLeases;
  /** Frees timers and connections. */
  close(): Promise<void>;
}
