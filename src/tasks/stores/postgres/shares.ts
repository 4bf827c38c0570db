/**
 * The PostgreSQL store's fair shares: a new task's principal counted, and its own oldest finished
 * tasks evicted when it is at its task quota, in one statement (one round trip, on the
 * owner/state list index); and the sweep's step that fails parked tasks idle for the parked TTL
 * (on the `tasks_parked` index of migration 2). The decisions are `../fair-shares.ts`'s, shared
 * with every store.
 *
 * Cost: the count reads the principal's tasks (≤ its quota), so it is made only near a quota:
 * `ShareBounds` keeps an upper bound per principal from its last count plus this replica's
 * creations and parked writes since, counted again once it is a second old (other replicas'
 * writes are not seen here). At its quota a principal gives up a tenth of it at once. A count
 * adds the principal's admitted new tasks whose rows the group commit has not written yet, and
 * runs with no batch in flight (`GroupCommit.exclusive`), so that each task is counted once.
 *
 * Replicas: a principal creating tasks on several replicas at once may hold more than its
 * quota by what the others create within that second (its rate limit bounds it); nothing is
 * ever evicted for another principal.
 *
 * @example
 * ```ts
 * const sql = shareStatementsFor('"public"');
 * const evicted = await admitShare(query, sql, bounds, limits, owner, expiredBefore, commits);
 * ```
 */
import type { ClientBase, QueryResult, QueryResultRow } from 'pg';
import type { Task } from '../../../protocol/model.js';
import { ownerRangeOf, quotaRefusal, shareDecision, type ResolvedFairShares } from '../fair-shares.js';
import type { ShareBounds } from '../share-bounds.js';
import { principalOfOwner } from '../principal.js';

const TERMINAL = `state IN ('completed', 'failed', 'canceled', 'rejected')`;
/** Written as the partial index `tasks_parked` is, so that the planner can use it. */
const PARKED = `state IN ('input-required', 'auth-required')`;

/**
 * The texts of the share statements for one schema.
 *
 * @example
 * ```ts
 * const { admit, parkedIdle } = shareStatementsFor('"airlock"');
 * ```
 */
export interface ShareStatements {
  /** $1 low, $2 high, $3 tail, $4 expiredBefore, $5 maxTasksPerPrincipal, $6 maxParked, $7 admitted new tasks not yet written. */
  readonly admit: string;
  /** $1 parkedBefore, $2 expiredBefore, $3 limit; rows locked (SKIP LOCKED) in the sweep's transaction. */
  readonly parkedIdle: string;
}

/**
 * Builds the share statements' texts (the schema is quoted by the caller).
 *
 * @example
 * ```ts
 * const sql = shareStatementsFor(quoteIdentifier(schema));
 * ```
 */
export function shareStatementsFor(schema: string): ShareStatements {
  const tasks = `${schema}.tasks`;
  return {
    // Counts and, when the principal is at its task quota and has room to make, evicts its own
    // oldest finished tasks: the DELETE runs only when shareDecision would say `evict`.
    admit: `WITH mine AS (
        SELECT id, state, updated_at FROM ${tasks}
        WHERE owner >= $1 AND owner < $2 AND strpos(substr(owner, $3::int), '@') = 0 AND updated_at > $4
      ), counts AS (
        SELECT count(*) + $7::bigint AS tasks,
               count(*) FILTER (WHERE ${PARKED}) AS parked,
               count(*) FILTER (WHERE ${TERMINAL}) AS finished
        FROM mine
      ), victims AS (
        -- SKIP LOCKED: a row another replica is evicting (or a put is writing) is not waited for.
        SELECT id FROM ${tasks}
        WHERE owner >= $1 AND owner < $2 AND strpos(substr(owner, $3::int), '@') = 0 AND updated_at > $4
          AND ${TERMINAL}
        ORDER BY updated_at
        LIMIT CASE WHEN (SELECT tasks FROM counts) < $5::bigint THEN 0
          ELSE GREATEST((SELECT tasks FROM counts) - $5::bigint + 1, ceil($5::bigint / 10.0)::bigint) END
        FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM ${tasks} WHERE id IN (SELECT id FROM victims)
          AND (SELECT parked FROM counts) < $6::bigint
          AND (SELECT finished FROM counts) >= (SELECT tasks FROM counts) - $5::bigint + 1
        RETURNING 1
      )
      SELECT tasks, parked, finished, (SELECT count(*) FROM gone) AS evicted FROM counts`,
    parkedIdle: `SELECT id, owner, body FROM ${tasks}
      WHERE ${PARKED} AND updated_at <= $1 AND updated_at > $2
      ORDER BY updated_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
  };
}

type Query = <Row extends QueryResultRow>(name: string, text: string, values: unknown[]) => Promise<QueryResult<Row>>;

/**
 * The group commit as the shares see it (`GroupCommit`): admitted new tasks are counted until
 * their rows are written, and a count runs with no batch in flight.
 *
 * @example
 * ```ts
 * const queue: UnwrittenTasks = commits;
 * ```
 */
export interface UnwrittenTasks {
  admitted(principal: string): void;
  exclusive<T>(principal: string, work: (unwritten: number) => Promise<T>): Promise<T>;
}

/**
 * Admits a new task of `owner` under its principal's share (see the module comment); returns how
 * many of its own finished tasks went to make room.
 *
 * @throws CapacityError naming the quota (nothing evicted), reported through `limits.onEvent`;
 *   StoreUnavailableError (from `query`) if the database is unavailable.
 * @example
 * ```ts
 * if ((await admitShare(query, sql, bounds, limits, owner, expiredBefore, commits)) > 0) totals.clear();
 * ```
 */
export async function admitShare(
  query: Query,
  sql: ShareStatements,
  bounds: ShareBounds,
  limits: ResolvedFairShares,
  owner: string,
  expiredBefore: number,
  queue: UnwrittenTasks,
): Promise<number> {
  const principal = principalOfOwner(owner);
  // One count per principal at a time in this process: the creations that arrive meanwhile wait
  // for it and are then admitted on its bound (a burst at the quota makes one count, not fifty).
  for (;;) {
    if (bounds.admits(principal, limits, Date.now())) {
      bounds.created(principal);
      queue.admitted(principal);
      return 0;
    }
    const counting = bounds.counting(principal);
    if (counting === undefined) break;
    await counting;
  }
  let done = (): void => undefined;
  bounds.countStarted(principal, new Promise<void>((resolve) => (done = resolve)));
  try {
    const evicted = await queue.exclusive(principal, (unwritten) =>
      countAndEvict(query, sql, bounds, limits, owner, principal, expiredBefore, unwritten),
    );
    queue.admitted(principal);
    return evicted;
  } finally {
    bounds.countEnded(principal);
    done();
  }
}

async function countAndEvict(
  query: Query,
  sql: ShareStatements,
  bounds: ShareBounds,
  limits: ResolvedFairShares,
  owner: string,
  principal: string,
  expiredBefore: number,
  unwritten: number,
): Promise<number> {
  const nowMs = Date.now();
  const range = ownerRangeOf(principal);
  const result = await query<{ tasks: string; parked: string; finished: string; evicted: string }>(
    'airlock_task_share_admit',
    sql.admit,
    [
      range.low,
      range.high,
      range.tail,
      expiredBefore,
      limits.maxTasksPerPrincipal,
      limits.maxParkedPerPrincipal,
      unwritten,
    ],
  );
  const row = result.rows[0];
  const counts = {
    tasks: Number(row?.tasks ?? 0),
    parked: Number(row?.parked ?? 0),
    finished: Number(row?.finished ?? 0),
  };
  const decision = shareDecision(counts, limits);
  if (decision.kind === 'refuse') {
    bounds.counted(principal, counts.tasks, counts.parked, nowMs);
    throw quotaRefusal(decision.quota, limits, owner);
  }
  const evicted = Number(row?.evicted ?? 0);
  bounds.counted(principal, counts.tasks - evicted + 1, counts.parked, nowMs);
  return evicted;
}

/**
 * Up to `limit` parked tasks idle since `parkedBefore`, still live, locked for the caller's transaction.
 *
 * @example
 * ```ts
 * const idle = await parkedIdle(client, sql, now - parkedTtlMs, expiredBefore, room);
 * ```
 */
export async function parkedIdle(
  client: ClientBase,
  sql: ShareStatements,
  parkedBefore: number,
  expiredBefore: number,
  limit: number,
): Promise<{ owner: string; task: Task }[]> {
  const result = await client.query<{ owner: string; body: string }>(sql.parkedIdle, [
    parkedBefore,
    expiredBefore,
    limit,
  ]);
  return result.rows.map((row) => ({ owner: row.owner, task: JSON.parse(row.body) as Task }));
}
