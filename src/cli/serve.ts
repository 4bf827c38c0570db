/**
 * `airlock serve`: load the config, publish its agents, print where, run until a signal.
 *
 * @example
 * ```sh
 * airlock serve --config examples/demo.yaml --port 41241
 * ```
 */
import { DEFAULT_LEASE_SECONDS, type AirlockConfig, type ClientEntry } from '../config/airlock-config.js';
import { checkBind, checkInsecureNetwork } from '../config/bind.js';
import { loadConfigFileOffThread } from '../config/off-thread.js';
import { prepareBackends, type PreparedBackends } from '../server/backends.js';
import { createGateway, type Gateway } from '../server/http.js';
import { storeShareOptions } from '../server/store-shares.js';
import { createUpstreams } from '../server/upstreams.js';
import { tapLogger } from '../server/metrics/card-events.js';
import { removeServePid, serveFiles, writeServePid } from '../server/reload/pid-file.js';
import { reloadOnSignal } from '../server/reload/signal.js';
import {
  describeTaskStoreSpec,
  openTaskStore,
  resolveTaskStoreSpec,
  type TaskStoreSpec,
} from '../tasks/stores/index.js';
import type { SharedLimits } from '../server/limits/shared/index.js';
import { createLogger, type Logger, type LogLevel } from '../server/log.js';
import type { TaskEventBus } from '../tasks/events.js';
import { AirlockError, errorCode } from '../errors/index.js';
import { startToolServers } from '../server/tools.js';
import { otlpTarget } from '../telemetry/config.js';
import { startTelemetry } from '../telemetry/setup.js';
import { processInstanceId } from '../client/outbound-transport.js';
import { tokenHints } from '../server/console/token-hints.js';
import type { ToolHub } from '../tools/index.js';
import cluster from 'node:cluster';
import { collectorFields, type CollectorPlan } from './collector.js';
import { reportWorkerListening, runWorkerPrimary, workerAuditFile, workerRole, type WorkerRole } from './workers.js';

export interface ServeOptions {
  config: string;
  host?: string;
  port?: number;
  logLevel?: LogLevel;
  /** Keep tasks durably in SQLite at `<data>/airlock.db` (wins over the config and DATABASE_URL). */
  data?: string;
  /** Gateway processes behind the one port (node:cluster); default 1. See ./workers.ts. */
  workers?: number;
  /** V8's collector for this process and its workers (./collector.ts); logged at start. */
  collector?: Pick<CollectorPlan, 'singleThreaded' | 'workerFlags' | 'reason'>;
  /** Started by ./relaunch.ts: a second stop signal within a second of the first is its echo. */
  supervised?: boolean;
  env?: NodeJS.ProcessEnv;
  /**
   * The config's first load, already under way (`loadConfigFileOffThread(config)`): the CLI
   * starts it before importing this module, so the check's worker loads TypeBox while this
   * thread loads the gateway's modules. Absent: loaded here.
   */
  firstLoad?: Promise<AirlockConfig>;
}

/**
 * The store this process will use, checked against the replica count: several replicas need a
 * store they all share (PostgreSQL). Throws StoreChoiceError with the fix in its message.
 *
 * @example
 * ```ts
 * chooseTaskStore(config, { env: { AIRLOCK_MULTI_REPLICA: '1' } }); // throws: memory is not shared
 * ```
 */
export function chooseTaskStore(
  config: AirlockConfig,
  options: { data?: string; env?: NodeJS.ProcessEnv; workers?: number } = {},
): TaskStoreSpec {
  const env = options.env ?? process.env;
  const spec = resolveTaskStoreSpec({
    configured: config.store,
    ...(options.data !== undefined && { data: options.data }),
    env,
  });
  const workers = options.workers ?? 1;
  if (workers > 1 && spec.type === 'memory') {
    throw new StoreChoiceError(
      `--workers ${workers} needs a store every worker shares, and the memory store is kept inside each process: use --data DIR (with redis.url), DATABASE_URL or store: { type: postgres, url: … }`,
    );
  }
  // SQLite has no cross-process event bus or shared limiter: Redis carries both (docs: "Workers").
  if (workers > 1 && spec.type === 'sqlite' && config.redis === undefined) {
    throw new StoreChoiceError(
      `--workers ${workers} on the SQLite store needs redis.url (task events and per-caller limits shared by the workers), or use PostgreSQL`,
    );
  }
  const multi = isMultiReplica(config, env);
  if (multi && spec.type !== 'postgres') {
    const why = config.replicas > 1 ? `replicas: ${config.replicas}` : 'AIRLOCK_MULTI_REPLICA=1';
    throw new StoreChoiceError(
      `${why} needs a store every replica shares, and the ${spec.type} store is not: set DATABASE_URL or store: { type: postgres, url: … }`,
    );
  }
  return spec;
}

/** Several processes serve this config: `replicas` above 1, or AIRLOCK_MULTI_REPLICA=1. */
function isMultiReplica(config: AirlockConfig, env: NodeJS.ProcessEnv): boolean {
  return config.replicas > 1 || env.AIRLOCK_MULTI_REPLICA === '1';
}

/**
 * What replicas share besides the store: task events (so a subscription or a cancel on one
 * replica reaches a task running on another) and the rate limit, lockout and in-flight caps —
 * through Redis when `redis.url` is set, else through the PostgreSQL store's database. Loaded only
 * here, so that one process never loads the Redis client or the shared limiters.
 */
async function openReplicaSharing(
  config: AirlockConfig,
  spec: Extract<TaskStoreSpec, { type: 'postgres' | 'sqlite' }>,
  logger: Logger,
): Promise<{ bus: TaskEventBus; limits: SharedLimits }> {
  const { createSharedLimits } = await import('../server/limits/shared/index.js');
  const redis = config.redis;
  // SQLite workers reach here only with redis.url set (chooseTaskStore refuses otherwise).
  const pg =
    spec.type === 'postgres'
      ? { pgUrl: spec.url, ...(spec.schema !== undefined && { schema: spec.schema }) }
      : undefined;
  if (redis === undefined && pg === undefined)
    throw new StoreChoiceError('the SQLite store is shared only through redis.url');
  // Only the bus in use is loaded: a PostgreSQL deployment never loads the Redis client.
  const bus =
    redis !== undefined
      ? (await import('../tasks/buses/redis.js')).createRedisTaskEventBus({ url: redis.url, logger })
      : (await import('../tasks/buses/postgres.js')).createPostgresTaskEventBus({
          url: pg!.pgUrl,
          ...(pg!.schema !== undefined && { schema: pg!.schema }),
          logger,
        });
  try {
    const limits = await createSharedLimits(
      redis !== undefined ? { redisUrl: redis.url } : pg!,
      config.limits,
      // A dead replica's in-flight slots run out within two thirds of its turn leases: before
      // another replica can fail its tasks (a turn lease is renewed every third of its TTL).
      { logger, leaseTtlMs: Math.floor(((config.store.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 2000) / 3) },
    );
    const worker = workerRole()?.index;
    logger.info({
      event: 'replica_sharing',
      through: redis !== undefined ? 'redis' : 'postgres',
      replicas: config.replicas,
      ...(worker !== undefined && { worker }),
    });
    return { bus, limits };
  } catch (error) {
    await bus.close?.();
    throw error;
  }
}

/** The configured store cannot serve this deployment (several replicas on an unshared store). */
export class StoreChoiceError extends AirlockError {
  readonly code = 'store_not_shared';
  constructor(message: string) {
    super(message);
  }
}

export async function serve(options: ServeOptions): Promise<void> {
  const role = workerRole(options.env ?? process.env);
  // The schema check runs in a worker thread, so TypeBox never enters this (serving) isolate.
  // Each worker keeps its own audit chain: the JSONL sink has one writer per file.
  const withWorkerAuditFile = (loaded: AirlockConfig): AirlockConfig => {
    if (role !== undefined && loaded.audit.file !== undefined) {
      loaded.audit.file = workerAuditFile(loaded.audit.file, role.index);
    }
    return loaded;
  };
  const load = async (): Promise<AirlockConfig> => withWorkerAuditFile(await loadConfigFileOffThread(options.config));
  const config = await (options.firstLoad?.then(withWorkerAuditFile) ?? load());
  if (options.host !== undefined) {
    config.server.host = options.host;
    checkBind(config.server, '--host');
    checkInsecureNetwork(config.server);
  }
  if (options.port !== undefined) config.server.port = options.port;
  const logger = createLogger(options.logLevel ?? 'info');
  const workers = role?.count ?? options.workers ?? 1;
  if (workers > 1 && cluster.isPrimary) {
    // The store is checked before anything is forked: a refusal is one line from this process.
    const chosen = chooseTaskStore(config, {
      workers,
      ...(options.data !== undefined && { data: options.data }),
      ...(options.env !== undefined && { env: options.env }),
    });
    await runWorkerPrimary({
      workers,
      nodeFlags: options.collector?.workerFlags ?? [],
      ...(options.collector !== undefined && { gc: options.collector }),
      config: options.config,
      drainSeconds: config.server.drainSeconds,
      firstAlone: chosen.type === 'sqlite',
      logger,
    });
    return;
  }
  // Trace export before anything serves: the SDK is loaded only when an endpoint is configured.
  const telemetry = await startTelemetry(otlpTarget(config.telemetry, options.env ?? process.env), {
    instanceId: config.server.instanceId ?? processInstanceId(),
  });
  if (telemetry.enabled) logger.info({ event: 'trace_export_started' });
  const spec = chooseTaskStore(config, {
    workers,
    ...(options.data !== undefined && { data: options.data }),
    ...(options.env !== undefined && { env: options.env }),
  });
  // The store reports quota refusals and parked tasks it failed to the gateway made below.
  const late: { gateway?: Gateway } = {};
  let stopping = false;
  // Each worker of N > 1 is a replica: the store's bus, limits and leases (or Redis) are shared.
  const replicated = workers > 1 || isMultiReplica(config, options.env ?? process.env);
  const store =
    spec.type === 'memory'
      ? undefined
      : await openTaskStore(spec, {
          ...storeShareOptions(config, (event) => late.gateway?.onStoreEvent(event)),
          sharedFile: replicated,
          onBackgroundError: (error) =>
            logger.warn({
              event: 'store_background_failed',
              error: error instanceof Error ? error.message : String(error),
            }),
        });
  const shared = spec.type !== 'memory' && replicated ? await openReplicaSharing(config, spec, logger) : undefined;
  const upstreams =
    config.upstreams === undefined
      ? undefined
      : await createUpstreams(config.upstreams, {
          // Card pin and signature events also feed the metrics, once the gateway exists.
          logger: tapLogger(logger, (record) => late.gateway?.metrics?.cardEvent(record)),
          // Upstream calls are audited (and counted) as the outbound client's are.
          audit: (row) => late.gateway?.recordAudit(row),
          ...(config.server.instanceId !== undefined && { instanceId: config.server.instanceId }),
        });
  let backends: PreparedBackends;
  let tools: ToolHub | undefined;
  try {
    // Tool servers start at boot: a required one that fails stops serve here, naming it.
    tools = await startToolServers(config, logger, options.env ?? process.env);
    backends = await prepareBackends(config, {
      logger,
      ...(upstreams !== undefined && { upstream: upstreams.backendFor }),
    });
  } catch (error) {
    await tools?.close();
    await upstreams?.close();
    await store?.close();
    await shared?.bus.close?.();
    await shared?.limits.close();
    throw error;
  }
  const gateway = createGateway(config, {
    logger,
    backends: backends.bySlug,
    ...(store !== undefined && { store }),
    ...(shared !== undefined && { bus: shared.bus, sharedLimits: shared.limits }),
    ...(tools !== undefined && { tools }),
  });
  late.gateway = gateway;
  // SIGHUP (or `airlock reload`) re-reads the config (src/server/reload/signal.ts). The flags win
  // over the file on every load, as at start.
  const files = serveFiles(options.config);
  reloadOnSignal({
    gateway,
    files,
    logger,
    stopping: () => stopping,
    load: async () => {
      const next = await load();
      if (options.host !== undefined) next.server.host = options.host;
      if (options.port !== undefined) next.server.port = options.port;
      return next;
    },
  });
  // `airlock reload` finds this process by its pid file (0600), removed on exit; written before
  // the banner, so whoever sees the banner finds it. With workers the primary's pid is written.
  if (role === undefined) {
    await writeServePid(files, options.config).then(
      () => process.once('exit', () => removeServePid(files)),
      (error: unknown) =>
        logger.warn({ event: 'pid_file_not_written', error: (error as NodeJS.ErrnoException).code ?? 'unknown' }),
    );
  }
  // The first SQLite worker starts alone (./workers.ts): what the store holds as running was left
  // by an earlier run, since SQLite has no turn leases to tell.
  await gateway.recoverInterrupted({ evenShared: role?.first === true && spec.type === 'sqlite' });
  const url = await gateway.listen();
  if (role === undefined || role.first) {
    process.stdout.write(banner(config, url, describeTaskStoreSpec(spec)) + workersLine(role));
  }
  reportWorkerListening(url);
  logger.info({
    event: 'listening',
    url,
    ...(role !== undefined && { worker: role.index, pid: process.pid }),
    agents: config.agents.length,
    clients: config.clients.length,
    store: describeTaskStoreSpec(spec),
    ...(options.collector !== undefined && collectorFields(options.collector)),
  });
  const metricsUrl = gateway.metrics?.url;
  if (metricsUrl !== undefined) {
    process.stdout.write(`metrics: ${metricsUrl}\n`);
    logger.info({ event: 'metrics_listening', url: metricsUrl });
  }
  // Decisions made before a restart (or on a replica that stopped) move their tasks on now.
  await gateway.resumeDecided().catch((error: unknown) => {
    logger.warn({ event: 'decided_actions_not_resumed', error: errorCode(error) });
  });

  let stoppedAt = 0;
  const stop = (signal: string): void => {
    if (stopping) {
      // The same stop, sent to the whole service and passed on by the supervisor (./relaunch.ts).
      if (options.supervised === true && Date.now() - stoppedAt < ECHO_WINDOW_MS) return;
      // A second signal while draining: the person means it.
      process.exit(1);
    }
    stopping = true;
    stoppedAt = Date.now();
    logger.info({ event: 'stopping', signal, drainSeconds: config.server.drainSeconds });
    // Draining takes up to drainSeconds; closing (store writes, audit file) gets 5 s more.
    const force = setTimeout(() => process.exit(1), config.server.drainSeconds * 1000 + 5000);
    force.unref();
    gateway
      .drain()
      .then(() => gateway.close())
      .then(() => backends.close())
      .then(() => upstreams?.close())
      // Spans of the drained requests leave before the process does.
      .then(() => telemetry.shutdown())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  // A worker's signals come from the primary (SIGTERM to drain); a terminal's Ctrl-C reaches the
  // whole process group, and the primary turns it into that SIGTERM.
  process.on('SIGINT', () => (role === undefined ? stop('SIGINT') : undefined));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** How long after a supervised gateway's first stop signal another counts as its echo. */
const ECHO_WINDOW_MS = 1000;

/** The banner's line about the workers, printed by the first. */
function workersLine(role: WorkerRole | undefined): string {
  if (role === undefined) return '';
  return `  ${role.count} workers on this port (node:cluster); the primary (pid ${process.ppid}) owns the signals\n`;
}

/** What a person needs to start: where the cards are and one call that works. */
export function banner(config: AirlockConfig, url: string, store?: string): string {
  const publicBase = config.server.publicUrl ?? url;
  const lines = [`airlock listening on ${url}`];
  const tls = config.server.tls;
  if (tls !== undefined) {
    lines.push(
      `  TLS 1.2+ with ${tls.certFile} (reloaded when it changes); client certificates: ${tls.clientCertificates}`,
    );
  }
  if (store !== undefined && store !== 'memory') lines.push(`  tasks kept in ${store}`);
  const width = Math.max(...config.agents.map((agent) => agent.slug.length));
  for (const agent of config.agents) {
    const card = `${publicBase}${config.server.basePath}/${agent.slug}/.well-known/agent-card.json`;
    const isDefault =
      agent.slug === config.server.defaultAgent ? `  (also ${publicBase}/.well-known/agent-card.json)` : '';
    lines.push(`  card ${agent.slug.padEnd(width)}  ${card}${isDefault}`);
  }
  if (config.signing !== undefined) {
    const kids = config.signing.keys.map((key) => key.kid).join(', ');
    lines.push(`  cards signed by ${kids}; public keys at ${publicBase}/.well-known/jwks.json`);
  }
  const client = config.clients[0];
  const agent = client === undefined ? undefined : config.agents.find((entry) => client.agents.has(entry.slug));
  if (client !== undefined && agent !== undefined) {
    const endpoint = `${publicBase}${config.server.basePath}/${agent.slug}`;
    const token = tokenExpression(client);
    if (client.tokenOrigin.kind === 'file' && client.tokenOrigin.generated) {
      lines.push(`  generated a token for client "${client.id}" in ${client.tokenOrigin.path} (mode 0600)`);
    }
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hello' }] },
      },
    });
    lines.push('try it:');
    lines.push(
      `  curl -s ${endpoint} -H "Authorization: Bearer ${token}" -H 'Content-Type: application/json' -d '${body}'`,
    );
    lines.push(`  AIRLOCK_TOKEN="${token}" npx airlock call ${endpoint} "hello"`);
    if (config.server.rest) {
      lines.push(
        `  curl -s ${endpoint}/ask -H "Authorization: Bearer ${token}" -H 'Content-Type: application/json' -d '{"message":"hello"}'`,
      );
    }
  }
  if (config.approvals !== undefined) {
    lines.push(
      config.approvals.console
        ? `approvals: the console at ${publicBase}/console (each person signs in with their own token)`
        : `approvals: ${publicBase}/approvals (or npx airlock approvals list --url ${publicBase})`,
    );
    // The same words as the console's sign-in page (token-hints.ts).
    for (const hint of tokenHints(config.approvals.people)) lines.push(`  person ${hint.person}: token ${hint.where}`);
  }
  if (config.audit.file !== undefined) {
    lines.push(`audit log: ${config.audit.file}  (check it with: npx airlock audit verify ${config.audit.file})`);
  }
  return `${lines.join('\n')}\n`;
}

/** A shell expression that yields the token, so the banner never prints the token itself. */
function tokenExpression(client: ClientEntry): string {
  switch (client.tokenOrigin.kind) {
    case 'env':
      return `$${client.tokenOrigin.name}`;
    case 'file':
      return `$(cat ${client.tokenOrigin.path})`;
    case 'inline':
      return '<the token of client ' + client.id + '>';
  }
}
