/**
 * Task event buses shared by several replicas: PostgreSQL LISTEN/NOTIFY and Redis pub/sub. Each
 * delivers to its own process's listeners synchronously and fans out to the other replicas;
 * `TaskService` uses their cancel requests to stop a turn that runs on another replica.
 *
 * @example
 * ```ts
 * import { createPostgresTaskEventBus, createRedisTaskEventBus } from './tasks/buses/index.js';
 * const bus = redisUrl ? createRedisTaskEventBus({ url: redisUrl, logger }) : createPostgresTaskEventBus({ url, logger });
 * ```
 */
export { createPostgresTaskEventBus, PostgresTaskEventBus, postgresEventChannel } from './postgres.js';
export type { PostgresTaskEventBusOptions } from './postgres.js';
export { createRedisTaskEventBus, RedisTaskEventBus } from './redis.js';
export type { RedisTaskEventBusOptions } from './redis.js';
export { SharedTaskEventBus } from './shared.js';
export type { BusLogger, SharedBusOptions, SharedBusStats } from './shared.js';
export { BusMessageTooLargeError } from './frames.js';
