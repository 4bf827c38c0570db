/**
 * Airlock as a library: run the gateway in your own process, write your own agent backend,
 * or use the protocol layer (the canonical model and the v1.0 / v0.3 codecs) on its own.
 *
 * @example
 * ```ts
 * import { createGateway, parseConfig, createLogger } from 'a2a-airlock';
 *
 * const config = parseConfig(yamlText, process.env);
 * const gateway = createGateway(config, { logger: createLogger('info') });
 * console.log(await gateway.listen()); // http://127.0.0.1:41241
 * ```
 */
// One error root: every error Airlock throws extends AirlockError and carries a stable `code`.
export { AirlockError, errorCode, isAirlockError } from './errors/index.js';
export * from './protocol/index.js';
export type {
  AgentBackend,
  AgentEvent,
  AgentTurn,
  BackendContext,
  BackendLog,
  SessionEntry,
  SessionHistoryLimits,
} from './agents/backend.js';
export { BackendConfigError, isAborted, pause, sleep, textOf } from './agents/backend.js';
export {
  createBackend,
  loadBackend,
  type BackendConfig,
  type BackendLoadContext,
  type DeferredBackendConfig,
} from './agents/registry.js';
export { loadModuleBackend, type ModuleBackendExport } from './agents/module/index.js';
export { checkAgentEvent } from './agents/module/events.js';
export {
  createOpenAiBackend,
  OpenAiTurnError,
  type OpenAiBackendConfig,
  type OpenAiFailureCode,
} from './agents/openai/index.js';
export { createCommandBackend } from './agents/command/index.js';
export { createEchoBackend } from './agents/echo.js';
export { createWriterBackend } from './agents/writer.js';
export { createConformanceBackend } from './agents/conformance.js';
export { TaskService, withHistory, type CallContext, type TaskServiceOptions } from './tasks/service.js';
export type { TaskStore, TaskQuery, TaskPage } from './tasks/store.js';
export { MemoryTaskStore, type MemoryTaskStoreOptions } from './tasks/stores/memory.js';
export { LocalTaskEventBus, type TaskEventBus, type TaskEventListener } from './tasks/events.js';
// The durable stores load their drivers only when opened (openTaskStore imports them on demand).
export {
  describeTaskStoreSpec,
  migrateTaskStore,
  openTaskStore,
  redactDatabaseUrl,
  resolveTaskStoreSpec,
  sqliteSpecForDataDir,
  type OpenTaskStoreOptions,
  type RetentionSpec,
  type TaskStoreSpec,
} from './tasks/stores/index.js';
export {
  isStoreUnavailable,
  StoreSchemaError,
  StoreUnavailableError,
  TaskStoreInputError,
} from './tasks/stores/errors.js';
export type { SqliteTaskStore } from './tasks/stores/sqlite.js';
export type { PostgresTaskStore } from './tasks/stores/postgres.js';
export { failedByRestart, RESTART_FAILURE_TEXT } from './tasks/service.js';
export { deriveSessionId, OUTBOUND_ID_PREFIX } from './tasks/session.js';
export { loadConfigFile, parseConfig, type AirlockConfig, type ClientEntry } from './config/load.js';
export { loadConfigFileOffThread } from './config/off-thread.js';
export { ConfigError } from './config/errors.js';
export { generateToken } from './config/tokens.js';
export { createGateway, type Gateway, type GatewayOptions } from './server/http.js';
// Agent tools: MCP tool servers under the ladder (docs/TOOLS.md); `airlock serve` starts them itself.
export { startToolServers } from './server/tools.js';
export { ToolHub, ToolPinStore, ToolServerError, type ToolHubOptions, type ToolsConfig } from './tools/index.js';
export {
  BackendSetupError,
  prepareBackends,
  type PrepareBackendsOptions,
  type PreparedBackends,
} from './server/backends.js';
export { createLogger, silentLogger, type Logger, type LogLevel } from './server/log.js';
/**
 * Trace export (OpenTelemetry over OTLP/HTTP): `airlock serve` starts it before the gateway; an
 * embedder does the same, once per process, and shuts it down after `gateway.close()`.
 *
 * @example
 * ```ts
 * const telemetry = await startTelemetry(otlpTarget(config.telemetry, process.env), { instanceId: 'gw-1' });
 * const gateway = createGateway(config, { logger });
 * // … on shutdown
 * await gateway.close();
 * await telemetry.shutdown();
 * ```
 */
export { startTelemetry, TELEMETRY_OFF, type Telemetry, type TelemetryOptions } from './telemetry/setup.js';
export { otlpTarget, TelemetryConfigError, type OtlpTarget, type TelemetrySettings } from './telemetry/config.js';
/**
 * Prometheus metrics: a gateway whose config has `metrics` makes its own (`gateway.metrics`,
 * served on a listener of its own). `createSeries` gives a fresh registry with every series
 * registered (never prom-client's global one), for an embedder that serves or merges it
 * itself; `tapLogger` feeds the card trust events of an upstream connector into them.
 *
 * @example
 * ```ts
 * const gateway = createGateway(config, { logger });
 * const text = await gateway.metrics?.series.registry.metrics(); // exposition text
 * const series = createSeries({ defaultMetrics: false });
 * ```
 */
export { createSeries, type GaugeSources, type MetricSeries } from './server/metrics/series.js';
export { openMetrics, type GatewayMetrics } from './server/metrics/wiring.js';
export { tapLogger } from './server/metrics/card-events.js';
export { Authenticator, type AuthOutcome, type Credentials, type Principal } from './server/auth/index.js';
export {
  CapacityError,
  type ReplyScrubber,
  type TaskLifecycleEvent,
  type TaskObserver,
  type TurnGrant,
  type TurnPrompt,
} from './tasks/policy.js';
export { HOP_HEADER } from './protocol/headers.js';
export * from './content/index.js';
export * from './agents/inbound/index.js';
export * from './audit/index.js';
export * from './client/index.js';
export * from './net/index.js';
export * from './trust/index.js';
