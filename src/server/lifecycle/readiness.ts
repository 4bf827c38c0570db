/**
 * `GET /readyz`: whether this gateway should get traffic. Not ready while it drains, or while
 * its task store does not answer (a read of one row, at most once a second: the probe costs the
 * store nothing measurable and a flood of probes cannot hammer it). `/healthz` stays liveness.
 *
 * @example
 * ```ts
 * const readiness = createReadiness({ drain, store });
 * const { ready, reason } = await readiness(); // { ready: true } or { ready: false, reason: 'draining' }
 * ```
 */
import type { TaskStore } from '../../tasks/store.js';
import type { Drain } from './drain.js';

/**
 * A readiness answer.
 *
 * @example
 * ```ts
 * const answer: Readiness = { ready: false, reason: 'store_unavailable' };
 * ```
 */
export interface Readiness {
  readonly ready: boolean;
  readonly reason?: 'draining' | 'store_unavailable';
}

const STORE_PROBE_TTL_MS = 1_000;
const STORE_PROBE_TIMEOUT_MS = 2_000;
/** An id no task has (task ids are UUIDs), under an owner no principal has. */
const PROBE_OWNER = 'airlock:readyz';
const PROBE_ID = 'readyz-probe';

/**
 * The readiness check of a gateway (see the module comment).
 *
 * @example
 * ```ts
 * router({ …, readiness: createReadiness({ drain, store }) });
 * ```
 */
export function createReadiness(options: {
  readonly drain: Pick<Drain, 'draining'>;
  readonly store: Pick<TaskStore, 'get'>;
  readonly now?: () => number;
}): () => Promise<Readiness> {
  const now = options.now ?? Date.now;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let storeUp: Promise<boolean> = Promise.resolve(true);
  const probe = async (): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('store probe timed out')), STORE_PROBE_TIMEOUT_MS);
      });
      await Promise.race([options.store.get(PROBE_OWNER, PROBE_ID), timeout]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  };
  return async () => {
    if (options.drain.draining) return { ready: false, reason: 'draining' };
    if (now() - checkedAt >= STORE_PROBE_TTL_MS) {
      checkedAt = now();
      storeUp = probe();
    }
    return (await storeUp) ? { ready: true } : { ready: false, reason: 'store_unavailable' };
  };
}
