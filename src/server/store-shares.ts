/**
 * The fair shares a gateway opens its task store with, from the config: the per-principal
 * quotas (`limits`), a parked TTL at least as long as an approval's (`approvals.ttl`: a task
 * parked on a person's decision must outlive the decision), and where the store's events go
 * (the audit trail). `airlock serve` opens a database store with the same before it makes the
 * gateway.
 *
 * @example
 * ```ts
 * const store = await openTaskStore(spec, { ...storeShareOptions(config, (event) => gateway?.onStoreEvent(event)) });
 * ```
 */
import type { AirlockConfig } from '../config/load.js';
import type { TaskStoreEvent } from '../tasks/stores/fair-shares.js';
import type { OpenTaskStoreOptions } from '../tasks/stores/index.js';

/**
 * The store options that carry the config's fair shares.
 *
 * @example
 * ```ts
 * new MemoryTaskStore({ ...fairSharesFor(config.store, storeShareOptions(config, onStoreEvent)) });
 * ```
 */
export function storeShareOptions(
  config: Pick<AirlockConfig, 'limits' | 'approvals'>,
  onStoreEvent: (event: TaskStoreEvent) => void,
): Pick<
  OpenTaskStoreOptions,
  'maxTasksPerPrincipal' | 'maxParkedTasksPerPrincipal' | 'minParkedTtlMs' | 'onStoreEvent'
> {
  return {
    maxTasksPerPrincipal: config.limits.maxTasksPerPrincipal,
    maxParkedTasksPerPrincipal: config.limits.maxParkedTasksPerPrincipal,
    minParkedTtlMs: config.approvals?.ttlMs ?? 0,
    onStoreEvent,
  };
}
