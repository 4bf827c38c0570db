/**
 * ListTasks for the two database stores (SQLite, PostgreSQL): the checks, the keyset bound, the
 * reused `totalSize` and the page token are the same for both; only reading the rows is the
 * engine's ({@link ReadTaskRows}).
 *
 * @example
 * ```ts
 * return listStoredTasks(owner, query, {
 *   totals, taskTtlMs, clock: () => this.clock(), expiredBefore: () => this.expiredBefore(),
 *   read: (shape, filters, bound, limit, withCount) => readRows(shape, filters, bound, limit, withCount),
 * });
 * ```
 */
import type { Task, TaskState } from '../../protocol/model.js';
import type { TaskPage, TaskQuery } from '../store.js';
import { filterShapeOf, MAX_ID_BYTES, MAX_OWNER_BYTES, type FilterShape, type TotalSizeCache } from './durable.js';
import {
  checkTaskQuery,
  decodePageToken,
  encodePageToken,
  isStorableKey,
  listBound,
  statusFloorMs,
  type TaskSortKey,
} from './page-token.js';

/**
 * The filters of one list query, as the statements take them.
 *
 * @example
 * ```ts
 * const filters: ListFilters = { owner: 'alice', floorMs: statusFloorMs(undefined), expiredBefore: now - ttlMs };
 * ```
 */
export interface ListFilters {
  readonly owner: string;
  readonly contextId?: string;
  readonly state?: TaskState;
  /** The smallest matching status timestamp ({@link statusFloorMs}). */
  readonly floorMs: number;
  /** Rows whose `updated_at` is at or before this have expired. */
  readonly expiredBefore: number;
}

/**
 * One stored task of a page, as the engine read it.
 *
 * @example
 * ```ts
 * const row: StoredTaskRow = { id: 'task-1', statusMs: 1767225600000, body: '{"id":"task-1",…}' };
 * ```
 */
export interface StoredTaskRow {
  readonly id: string;
  readonly statusMs: number;
  /** The task as JSON. */
  readonly body: string;
}

/**
 * What the engine read for one list: the page (up to `limit` rows below the bound, newest
 * first) and, when asked, the count of every matching row with the oldest `updated_at` among
 * them (`null` when nothing matched), from the same snapshot.
 *
 * @example
 * ```ts
 * const read: TaskRowsRead = { rows, count: { total: 12, oldest: 1767225600000 } };
 * ```
 */
export interface TaskRowsRead {
  readonly rows: readonly StoredTaskRow[];
  readonly count?: { readonly total: number; readonly oldest: number | null };
}

/**
 * Reads one page below `bound` in list order, with the count when `withCount`.
 *
 * @example
 * ```ts
 * const read: ReadTaskRows = async (shape, filters, bound, limit, withCount) => ({ rows: [] });
 * ```
 */
export type ReadTaskRows = (
  shape: FilterShape,
  filters: ListFilters,
  bound: TaskSortKey,
  limit: number,
  withCount: boolean,
) => Promise<TaskRowsRead> | TaskRowsRead;

/**
 * What {@link listStoredTasks} needs from the store.
 *
 * @example
 * ```ts
 * const source: StoredTaskList = { totals, taskTtlMs, clock, expiredBefore, read };
 * ```
 */
export interface StoredTaskList {
  readonly totals: TotalSizeCache;
  readonly taskTtlMs: number;
  /** The store's clock: whole ms, never backwards. */
  readonly clock: () => number;
  /** The expiry bound now. */
  readonly expiredBefore: () => number;
  readonly read: ReadTaskRows;
}

/**
 * One page of the owner's live tasks, newest status timestamp first (ties: id descending), with
 * `totalSize`. Keys no row can hold read as an empty list; a count is reused while the owner's
 * tasks do not change (see {@link TotalSizeCache}).
 *
 * @throws A2AError INVALID_PARAMS for a malformed `pageToken`, `pageSize` or `statusTimestampAfter`.
 * @example
 * ```ts
 * const page = await listStoredTasks(owner, { pageSize: 20, status: 'completed' }, source);
 * ```
 */
export async function listStoredTasks(owner: string, query: TaskQuery, source: StoredTaskList): Promise<TaskPage> {
  checkTaskQuery(query);
  const after = query.pageToken ? decodePageToken(query.pageToken, MAX_ID_BYTES) : undefined;
  const { contextId, status } = query;
  if (!isStorableKey(owner, MAX_OWNER_BYTES) || (contextId !== undefined && !isStorableKey(contextId, MAX_ID_BYTES))) {
    return { tasks: [], nextPageToken: '', totalSize: 0 };
  }
  const shape = filterShapeOf(contextId, status);
  const filters: ListFilters = {
    owner,
    ...(contextId !== undefined && { contextId }),
    ...(status !== undefined && { state: status }),
    floorMs: statusFloorMs(query.statusTimestampAfter),
    expiredBefore: source.expiredBefore(),
  };
  const { totals } = source;
  const now = source.clock();
  const generation = totals.generation(owner);
  const countKey = [shape, contextId ?? null, status ?? null, filters.floorMs];
  const cached = totals.get(owner, generation, countKey, now);
  const { rows, count } = await source.read(shape, filters, listBound(after), query.pageSize + 1, cached === undefined);
  const totalSize = cached ?? count?.total ?? 0;
  if (cached === undefined) {
    const oldest = count?.oldest ?? null;
    totals.set(owner, generation, countKey, totalSize, now, oldest === null ? Infinity : oldest + source.taskTtlMs);
  }
  const more = rows.length > query.pageSize;
  const shown = more ? rows.slice(0, query.pageSize) : rows;
  const last = shown[shown.length - 1];
  return {
    tasks: shown.map((row) => JSON.parse(row.body) as Task),
    nextPageToken: more && last !== undefined ? encodePageToken({ statusMs: last.statusMs, id: last.id }) : '',
    totalSize,
  };
}
