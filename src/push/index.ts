/**
 * Push notifications: webhook configs owned by the principal that made them (`service.ts`),
 * validated when set and before each delivery (`validate.ts`), sent through the guarded
 * outbound client (`webhook.ts`). With the memory store, configs and pending events live in this
 * process (`memory.ts`, `deliver.ts`); with a durable store, in its tables, delivered through
 * its outbox (`outbox-delivery.ts`). Off unless `push.enabled` (`config.ts`).
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
import type { DurablePush } from '../tasks/stores/push-outbox.js';
import { PushDelivery } from './deliver.js';
import { MemoryPushConfigs } from './memory.js';
import { OutboxDelivery, type PushTap } from './outbox-delivery.js';
import { PushService } from './service.js';

export { DEFAULT_PUSH_SETTINGS, pushConfigProblem, type PushSettings } from './config.js';
export { PushDelivery, type PushDeliveryOptions, type WatchedTask } from './deliver.js';
export { MemoryPushConfigs } from './memory.js';
export { MemoryPushOutbox } from './memory-outbox.js';
export { createPushTap, OutboxDelivery, type OutboxDeliveryOptions, type PushTap } from './outbox-delivery.js';
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
  /**
   * A durable store's configs and outbox, with the tap on the bus the task service publishes
   * on (`createPushTap`): delivery then goes through the outbox, and `records`/`bus` are unused.
   */
  durable?: { push: DurablePush; tap: PushTap; onError?: (error: unknown) => void; pollMs?: number };
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
  const ownClient = parts.client === undefined;
  const client = parts.client ?? createGuardedClient({ privateAllow: settings.allowPrivate });
  if (parts.durable !== undefined) return openDurablePush(settings, parts, parts.durable, client, ownClient);
  const records = parts.records ?? new MemoryPushConfigs();
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

/** {@link openPush} with a durable store: configs in its tables, events through its outbox. */
function openDurablePush(
  settings: PushSettings,
  parts: PushParts,
  durable: NonNullable<PushParts['durable']>,
  client: GuardedClient,
  ownClient: boolean,
): PushService & { close(): Promise<void> } {
  const delivery = new OutboxDelivery({
    settings,
    outbox: durable.push.outbox,
    client,
    ...(parts.audit !== undefined && { audit: parts.audit }),
    ...(durable.onError !== undefined && { onError: durable.onError }),
    ...(durable.pollMs !== undefined && { pollMs: durable.pollMs }),
  });
  durable.tap.attach((taskId, event) => delivery.publish(taskId, event));
  delivery.start();
  const service = new PushService({
    settings,
    records: durable.push.configs,
    checkTask: (ctx, taskId) => parts.tasks.get(ctx, taskId, 0),
    inlineStored: (task, configId) => delivery.storedLate(task, configId),
  });
  return Object.assign(service, {
    close: async () => {
      await delivery.close();
      if (ownClient) await client.close();
    },
  });
}
