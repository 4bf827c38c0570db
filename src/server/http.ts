/**
 * The gateway: wiring only. It opens the store and the audit trail, builds the task service,
 * the limiters and the admission steps (src/server/admission/), and hands them to the routes
 * (src/server/routes/); the router (routes/router.ts) says which path goes where.
 *
 * @example
 * ```ts
 * const gateway = createGateway(config, { logger });
 * const url = await gateway.listen();
 * ```
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentBackend } from '../agents/backend.js';
import type { AuditSink } from '../audit/index.js';
import type { AirlockConfig } from '../config/load.js';
import { failedByRestart, TaskService } from '../tasks/service.js';
import { LocalTaskEventBus, type TaskEventBus } from '../tasks/events.js';
import type { TaskStore } from '../tasks/store.js';
import type { ToolHub } from '../tools/index.js';
import type { DecidedTask } from '../approvals/gate.js';
import type { TaskStoreEvent } from '../tasks/stores/fair-shares.js';
import { MemoryTaskStore } from '../tasks/stores/memory.js';
import { fairSharesFor, memoryBounds } from '../tasks/stores/index.js';
import { createClientAuthentication } from './admission/authenticate.js';
import { compose } from './admission/compose.js';
import { awaitContinue } from './admission/continue.js';
import { createNetworkGate } from './admission/gate.js';
import { createInFlightStep, createTurnGrants } from './admission/in-flight.js';
import { createLockout, monotonicNow } from './admission/lockout.js';
import { createOriginStep } from './admission/origin.js';
import { createRateStep } from './admission/rate.js';
import { createStreamSlotStep } from './admission/stream-slot.js';
import type { AdmittedInbound, AgentInbound } from './admission/inbound.js';
import type { DialectVersion } from '../protocol/dialect.js';
import type { TurnCandidate } from './admission/turn.js';
import { createMetadataStep } from './admission/metadata.js';
import { createTurnContentStep } from './admission/turn-content.js';
import { openApprovals } from './approvals/wiring.js';
import { Authenticator } from './auth/index.js';
import { CardCache, cardBaseUrl, hostForUrl } from './cards.js';
import { parseTrustedProxies } from './gate/client-address.js';
import { processInstanceId } from '../client/outbound-transport.js';
import { InboundAudit, openAuditSinks } from './inbound-audit.js';
import { AuthFailureLimiter, RateLimiter, type AuthFailureLockout, type RequestRateLimit } from './limits/index.js';
import type { SharedLimits } from './limits/shared/index.js';
import type { Logger } from './log.js';
import { publishAgents } from './published-agents.js';
import { toolboxBuilders } from './tools.js';
import { storeShareOptions } from './store-shares.js';
import { createDrainStep, Drain } from './lifecycle/drain.js';
import { createReadiness } from './lifecycle/readiness.js';
import { createDecidedResume } from './resume-decided.js';
import { refuse, sendJson } from './respond/response.js';
import { createAskRoute } from './routes/ask.js';
import { createDocumentRoutes } from './routes/documents.js';
import { createHttpJsonRoute } from './routes/http-json.js';
import { createRpcRoute } from './routes/jsonrpc.js';
import { openPush } from '../push/index.js';
import { createRouter } from './routes/router.js';

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
}

export interface Gateway {
  readonly server: Server;
  readonly service: TaskService;
  /** Binds the configured host and port; resolves with the base URL. */
  listen(): Promise<string>;
  /**
   * Restart safety: fails every task a previous process left running in a store this process
   * serves alone (SQLite, or PostgreSQL with one replica), with an audit row each
   * (`gateway_restart`). Call once before `listen`. Resolves with how many; 0 for the memory
   * store and whenever a shared bus says other replicas serve the store.
   */
  recoverInterrupted(): Promise<number>;
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
  close(): Promise<void>;
}

export function createGateway(config: AirlockConfig, options: GatewayOptions): Gateway {
  const { logger, bus, sharedLimits } = options;
  if (options.store === undefined && config.store.type !== 'memory') {
    // A database store is opened (and migrated) asynchronously, before the gateway is made.
    throw new Error(`store ${config.store.type}: open it with openTaskStore() and pass it as options.store`);
  }
  // Every store tells the audit trail of its quota refusals and of parked tasks it failed; a
  // database store opened before the gateway reaches it through `gateway.onStoreEvent`.
  const onStoreEvent = (event: TaskStoreEvent): void => {
    if (event.type === 'refused') audit.storeRefused(event.owner, event.quota);
    else audit.restartFailed(event.owner, event.task, 'parked_ttl');
  };
  const store: TaskStore =
    options.store ??
    new MemoryTaskStore({
      maxTasks: config.store.maxTasks,
      taskTtlMs: config.store.taskTtlMinutes * 60_000,
      ...(config.store.type === 'memory' && memoryBounds(config.store)),
      ...fairSharesFor(config.store, storeShareOptions(config, onStoreEvent)),
    });
  const configuredSink = options.auditSink ?? openAuditSinks(config.audit);
  let port = config.server.port;
  const auth = Authenticator.fromConfig(config, { logger });
  const rates: RequestRateLimit = sharedLimits?.rate ?? new RateLimiter({ limit: config.limits.requestsPerMinute });
  const authFailures: AuthFailureLockout =
    sharedLimits?.authFailures ?? new AuthFailureLimiter({ limit: config.limits.authFailuresPerMinute });
  // With approvals on, the console's audit tail sees every row too (the person's own ones only).
  const audit = new InboundAudit(
    config.approvals === undefined
      ? configuredSink
      : {
          write: (event) => {
            configuredSink?.write(event);
            approvals.desk.observeAuditRow(event);
          },
          close: () => configuredSink?.close(),
        },
    logger,
  );
  // A person's decision resumes the parked task (resume-decided.ts), once the service exists.
  const decided: { resume?: (task: DecidedTask) => void } = {};
  const approvals = openApprovals({
    config,
    audit,
    auth,
    authFailures,
    logger,
    port: () => port,
    onDecided: (task) => decided.resume?.(task),
    ...(store.approvals !== undefined && { records: store.approvals }),
  });
  const observe = approvals.observe(audit.taskObserver());
  // Push delivery listens on the bus the service publishes on: with push on, one is made here.
  const taskBus = bus ?? (config.push.enabled ? new LocalTaskEventBus() : undefined);
  const service = new TaskService({
    store,
    logger: (level, event, fields) => logger[level]({ event, ...fields }),
    ...(observe !== undefined && { observe }),
    ...(taskBus !== undefined && { bus: taskBus }),
    gate: approvals.desk,
    limits: {
      maxHistoryMessages: config.limits.maxHistoryMessages,
      maxTaskOutputBytes: config.limits.maxTaskOutputBytes,
    },
  });
  const published = publishAgents(config, logger, options.backends);
  const cards = new CardCache(config);

  // Admission: the caller (lockout → credentials → rate), then, per route, the body and the turn.
  const admitCaller = compose(
    createLockout<AgentInbound>({
      authFailures,
      now: monotonicNow,
      refuseLocked: (inbound, seconds) => {
        audit.rateLimited('auth_failure_limit', inbound.agent.config.slug, inbound.remote);
        refuse(
          inbound.res,
          429,
          'RESOURCE_EXHAUSTED',
          'Too many failed authentications from this address; try again later',
          {
            'retry-after': String(seconds),
            connection: 'close',
          },
        );
      },
    }),
    createClientAuthentication({ auth, audit, authFailures, logger, apiKeyHeader: config.server.apiKeyHeader }),
    createRateStep({ rates, audit }),
  );
  // Each tool-using agent's toolbox, built per turn from the hub (src/tools/, wired in ./tools.ts).
  const toolboxes = toolboxBuilders(config, { hub: options.tools, audit });
  const grants = createTurnGrants({
    config,
    ...(toolboxes !== undefined && { tools: toolboxes }),
    ...(sharedLimits !== undefined && { inFlight: sharedLimits.inFlight }),
  });
  decided.resume = createDecidedResume({
    service,
    grants,
    backendOf: (slug) => published.agents.get(slug)?.backend,
    logger,
  });
  // Between SIGTERM and exit no new turn starts (lifecycle/drain.ts); the rest is served.
  const drain = new Drain();
  const admitTurn = compose(
    createDrainStep<TurnCandidate>({ drain, audit }),
    createTurnContentStep<TurnCandidate>({ config, audit }),
    // What a caller makes us keep besides the text (metadata, extensions, …): both routes.
    createMetadataStep<TurnCandidate>({ config, audit }),
    createInFlightStep<TurnCandidate>({ config, audit, grants }),
  );
  const limits = {
    maxBodyBytes: config.server.maxBodyBytes,
    bodyTimeoutMs: config.server.bodyTimeoutMs,
    maxJsonDepth: config.limits.maxJsonDepth,
  };
  const push = config.push.enabled
    ? openPush(config.push, {
        tasks: service,
        ...(taskBus !== undefined && { bus: taskBus }),
        audit: (row) => configuredSink?.write(row),
      })
    : undefined;
  const bindingOptions = {
    service,
    admitCaller,
    admitTurn,
    // Open SSE streams, in total and per principal (this process's count), whatever the binding.
    admitStream: createStreamSlotStep({ limits: config.limits, audit }),
    limits,
    extendedCard: ({ req, agent }: AdmittedInbound, version: DialectVersion) =>
      cards.render(agent.config, version, cardBaseUrl(config.server.publicUrl, req.headers.host, port), true).body,
    logger,
    // Push notifications (src/push/): absent unless `push.enabled` (the methods answer -32003).
    ...(push !== undefined && { push }),
  };
  const route = createRouter({
    config,
    agents: published.agents,
    gate: createNetworkGate({
      trustedProxies: parseTrustedProxies(config.server.trustedProxies),
      allowNonLoopback: config.server.allowNonLoopback,
      audit,
      instanceId: config.server.instanceId ?? processInstanceId(),
      maxHops: config.limits.maxHops,
    }),
    origin: createOriginStep({ allowedOrigins: config.server.allowedOrigins, audit }),
    documents: createDocumentRoutes({ config, cards, admitCaller, port: () => port }),
    rpc: createRpcRoute(bindingOptions),
    // The same admission steps, stream slots and service as JSON-RPC: a third codec at the edge.
    httpJson: config.server.httpJson !== false ? createHttpJsonRoute(bindingOptions) : undefined,
    ask: createAskRoute({ service, admitCaller, admitTurn, limits }),
    approvals: approvals.routes,
    readiness: createReadiness({ drain, store }),
  });

  const server = createServer(
    {
      // Slow clients are cut off: headers within headersTimeoutMs, the whole request within both
      // limits together (readBody enforces the body's own deadline and answers 408).
      headersTimeout: config.server.headersTimeoutMs,
      requestTimeout: config.server.headersTimeoutMs + config.server.bodyTimeoutMs,
      // Node checks those timeouts only this often (30 s by default).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.server.headersTimeoutMs / 2))),
    },
    handle,
  );
  // `Expect: 100-continue`: Node would answer 100 before any check; with this listener the
  // request goes through admission first, and the body step sends the 100 once it is admitted
  // (admission/continue.ts). A refused request gets its 401/403/429 without one.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    awaitContinue(req, res);
    handle(req, res);
  });

  function handle(req: IncomingMessage, res: ServerResponse): void {
    let pending: Promise<void> | void;
    try {
      pending = route(req, res);
    } catch (error) {
      requestFailed(res, error);
      return;
    }
    pending?.catch((error: unknown) => requestFailed(res, error));
  }

  function requestFailed(res: ServerResponse, error: unknown): void {
    logger.error({ event: 'request_failed', error: error instanceof Error ? error.message : String(error) });
    if (!res.headersSent) sendJson(res, 500, { error: { code: 500, status: 'INTERNAL', message: 'Internal error' } });
    else res.destroy();
  }

  return {
    server,
    service,
    onStoreEvent,
    recoverInterrupted: async () => {
      // With a shared bus other replicas serve the same store: their running tasks are not ours.
      if (store.failRunning === undefined || options.bus?.requestCancel !== undefined) return 0;
      const failed = await store.failRunning((task, owner) => {
        const settled = failedByRestart(task);
        audit.restartFailed(owner, settled);
        return settled;
      });
      if (failed > 0) logger.warn({ event: 'tasks_failed_after_restart', count: failed });
      return failed;
    },
    drain: async () => {
      const left = await drain.run({
        running: () => service.running,
        seconds: config.server.drainSeconds,
        stopAccepting: () => {
          server.close();
          server.closeIdleConnections();
        },
      });
      logger.info({ event: 'drained', running: left });
      return left;
    },
    resumeDecided: async () => {
      if (store.approvals === undefined) return 0;
      const handed = await approvals.desk.resumeDecided();
      if (handed > 0) logger.info({ event: 'decided_actions_resumed', count: handed });
      return handed;
    },
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.server.port, config.server.host, () => {
          server.off('error', reject);
          port = (server.address() as AddressInfo).port;
          resolve(`http://${hostForUrl(config.server.host)}:${port}`);
        });
      }),
    close: async () => {
      await service.close();
      await push?.close();
      await published.close();
      await options.tools?.close();
      // After the service: the final events of the turns it ended still go out to other replicas.
      await bus?.close?.();
      await sharedLimits?.close();
      approvals.routes?.close();
      await store.close();
      await auth.close();
      audit.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
