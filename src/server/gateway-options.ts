/**
 * What `createGateway` (http.ts) takes and what it returns: the options a process or a library
 * user passes in, and the running gateway's handle.
 *
 * @example
 * ```ts
 * const options: GatewayOptions = { logger, store, bus, sharedLimits };
 * const gateway: Gateway = createGateway(config, options);
 * ```
 */
import type { Server } from 'node:http';
import type { AgentBackend } from '../agents/backend.js';
import type { AuditEvent, AuditSink } from '../audit/index.js';
import type { AirlockConfig } from '../config/load.js';
import type { TaskEventBus } from '../tasks/events.js';
import type { TaskService } from '../tasks/service.js';
import type { TaskStore } from '../tasks/store.js';
import type { TaskStoreEvent } from '../tasks/stores/fair-shares.js';
import type { ToolHub } from '../tools/index.js';
import type { SharedLimits } from './limits/shared/index.js';
import type { Logger } from './log.js';
import type { GatewayMetrics } from './metrics/wiring.js';
import type { ReloadOutcome } from './reload/reloader.js';
import type { TlsWatchTiming } from './tls/index.js';

/**
 * What a gateway is made with besides its config.
 *
 * @example
 * ```ts
 * const options: GatewayOptions = { logger: createLogger('info') };
 * ```
 */
export interface GatewayOptions {
  logger: Logger;
  store?: TaskStore;
  /** Where audit rows go; by default the sinks the config names (`audit.file`, `audit.stdout`). */
  auditSink?: AuditSink;
  /**
   * Backends written in code, by agent slug: they replace the configured `backend` of that
   * agent (the card and every guard still come from the config).
   */
  backends?: Readonly<Record<string, AgentBackend>>;
  /**
   * The task event bus, when several replicas share the store (`createPostgresTaskEventBus`,
   * `createRedisTaskEventBus`): streams, subscriptions and cancels then reach tasks running on
   * other replicas. Default: a bus for this process alone. Closed with the gateway.
   */
  bus?: TaskEventBus;
  /**
   * Limits shared by the replicas (`createSharedLimits`): they replace this process's request
   * rate, auth-failure lockout and in-flight caps. Closed with the gateway.
   */
  sharedLimits?: SharedLimits;
  /**
   * The tool servers, connected (`ToolHub.start`, as `airlock serve` does): agents with
   * `allowTools` get their allowed tools through it. Closed with the gateway. Without it no
   * agent gets a tool.
   */
  tools?: ToolHub;
  /** With `server.tls`: how often the certificate files are checked for a change (tests make it short). */
  tlsWatch?: TlsWatchTiming;
  /** Told of every config reload's outcome (applied or refused): the metrics counter. */
  onReload?: (outcome: ReloadOutcome) => void;
}

/**
 * A gateway made by `createGateway`: listen, drain, reload, close.
 *
 * @example
 * ```ts
 * const url = await gateway.listen();
 * await gateway.drain();
 * await gateway.close();
 * ```
 */
export interface Gateway {
  readonly server: Server;
  readonly service: TaskService;
  /** Prometheus metrics (series, the scrape URL once listening), when `metrics` is configured. */
  readonly metrics?: GatewayMetrics | undefined;
  /** Binds the configured host and port; resolves with the base URL. */
  listen(): Promise<string>;
  /**
   * Restart safety: fails every task a previous process left running in a store this process
   * serves alone (SQLite, or PostgreSQL with one replica), with an audit row each
   * (`gateway_restart`). Call once before `listen`. Resolves with how many; 0 for the memory
   * store and whenever a shared bus says other replicas serve the store.
   */
  recoverInterrupted(options?: RecoverOptions): Promise<number>;
  /**
   * Resumes the tasks whose action a person decided and no process used yet: with a durable
   * store, a decision made just before a restart (or on a replica that stopped) still moves its
   * task on. Call once after `listen`. Resolves with how many were handed on; 0 for the memory
   * store.
   */
  resumeDecided(): Promise<number>;
  /**
   * Graceful stop (SIGTERM): refuses new turns (503 + Retry-After) and answers `/readyz` 503 at
   * once, stops accepting connections, and resolves once the running turns have finished or
   * `server.drainSeconds` passed, with how many were still running (`close` fails those).
   */
  drain(): Promise<number>;
  /**
   * Where a task store opened before the gateway (a database store, by `airlock serve`) reports
   * its quota refusals and parked tasks failed by their TTL: each becomes an audit row.
   */
  onStoreEvent(event: TaskStoreEvent): void;
  /**
   * Records a row a part made outside the gateway built (the upstream connector's
   * `a2a.client.*` rows): written to the audit trail and counted by the metrics like the
   * gateway's own. A row that cannot be written goes to the log.
   */
  recordAudit(row: AuditEvent): void;
  /**
   * Reloads the config (SIGHUP): `load` reads the new one; it is refused whole (the running one
   * kept) when it is invalid or changes a key that needs a restart, else clients, tokens, agent
   * allow lists, JWT settings, limits and tool policies apply to new requests at once
   * (src/server/reload/). Running turns and open streams go on.
   */
  reload(load: () => AirlockConfig): ReloadOutcome;
  close(): Promise<void>;
}

/**
 * How `recoverInterrupted` judges a shared bus.
 *
 * @example
 * ```ts
 * await gateway.recoverInterrupted({ evenShared: true }); // the first worker on a SQLite file
 * ```
 */
export interface RecoverOptions {
  /**
   * Fail what the store holds as running even though a shared bus is set: the caller knows no
   * other process serves the store yet (the first `--workers` worker on a SQLite file, which
   * has no turn leases). Default false.
   */
  evenShared?: boolean;
}
