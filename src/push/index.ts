/**
 * Push notifications: webhook configs owned by the principal that made them (`service.ts`),
 * validated when set and before each delivery (`validate.ts`), delivered through the guarded
 * outbound client (`deliver.ts`), kept in memory (`memory.ts`) until the durable stores keep
 * them. Off unless `push.enabled` (`config.ts`).
 *
 * @example
 * ```ts
 * const push = config.push.enabled ? openPush(config.push, { tasks: service, bus }) : undefined;
 * ```
 */
import type { AuditEvent } from '../audit/events.js';
import { createGuardedClient, type GuardedClient } from '../net/client.js';
import type { TaskEventBus } from '../tasks/events.js';
import type { TaskService } from '../tasks/service.js';
import type { PushConfigRecords } from '../tasks/stores/push-records.js';
import type { PushSettings } from './config.js';
import { PushDelivery } from './deliver.js';
import { MemoryPushConfigs } from './memory.js';
import { PushService } from './service.js';

export { DEFAULT_PUSH_SETTINGS, PushSchema, pushConfigProblem, type PushSettings } from './config.js';
export { PushDelivery, type PushDeliveryOptions, type WatchedTask } from './deliver.js';
export { MemoryPushConfigs } from './memory.js';
export { PushService, type PushDialect, type PushServiceOptions } from './service.js';
export { checkPushConfig, checkWebhookUrl, type PushUrlPolicy } from './validate.js';

/**
 * What {@link openPush} wires together.
 *
 * @example
 * ```ts
 * const parts: PushParts = { tasks: service, bus, audit: (row) => sink.write(row) };
 * ```
 */
export interface PushParts {
  tasks: Pick<TaskService, 'get'>;
  /** The bus the task service publishes on; without one, configs are kept but nothing is sent. */
  bus?: TaskEventBus;
  records?: PushConfigRecords;
  audit?: (event: AuditEvent) => void;
  /** Default: a guarded client whose private allowlist is `push.allowPrivate`. */
  client?: GuardedClient;
}

/**
 * The gateway's push service and its delivery: ownership through the task service's own lookup
 * (another caller's task is TaskNotFound), records in `records` or in memory.
 *
 * @example
 * ```ts
 * const push = openPush(config.push, { tasks: service, bus }); // then RpcRouteOptions.push
 * await push.close();
 * ```
 */
export function openPush(settings: PushSettings, parts: PushParts): PushService & { close(): Promise<void> } {
  const records = parts.records ?? new MemoryPushConfigs();
  const ownClient = parts.client === undefined;
  const client = parts.client ?? createGuardedClient({ privateAllow: settings.allowPrivate });
  const delivery =
    parts.bus === undefined
      ? undefined
      : new PushDelivery({
          settings,
          records,
          bus: parts.bus,
          client,
          ...(parts.audit !== undefined && { audit: parts.audit }),
        });
  const service = new PushService({
    settings,
    records,
    checkTask: (ctx, taskId) => parts.tasks.get(ctx, taskId, 0),
    watch: (ctx, taskId) =>
      delivery?.watch({
        taskId,
        agent: ctx.agentSlug,
        ...(ctx.caller !== undefined && { client: ctx.caller.clientId }),
      }),
  });
  return Object.assign(service, {
    close: async () => {
      await delivery?.close();
      if (ownClient) await client.close();
    },
  });
}
