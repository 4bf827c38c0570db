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
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_LEASE_SECONDS, type AirlockConfig } from '../config/airlock-config.js';
import type { Task } from '../protocol/model.js';
import { failedByRestart, TaskService } from '../tasks/service.js';
import { LocalTaskEventBus } from '../tasks/events.js';
import type { TaskStore } from '../tasks/store.js';
import type { DecidedTask } from '../approvals/gate.js';
import type { TaskStoreEvent } from '../tasks/stores/fair-shares.js';
import { MemoryTaskStore } from '../tasks/stores/memory.js';
import { fairSharesFor, memoryBounds } from '../tasks/stores/index.js';
import { compose } from './admission/compose.js';
import { awaitContinue } from './admission/continue.js';
import { createNetworkGate } from './admission/gate.js';
import { createOriginStep } from './admission/origin.js';
import { createStreamSlotStep } from './admission/stream-slot.js';
import type { AdmittedInbound } from './admission/inbound.js';
import type { DialectVersion } from '../protocol/dialect.js';
import type { TurnCandidate } from './admission/turn.js';
import { openApprovals } from './approvals/wiring.js';
import { Authenticator } from './auth/index.js';
import { CardCache, cardBaseUrl, hostForUrl } from './cards.js';
import { parseTrustedProxies } from './gate/client-address.js';
import { processInstanceId } from '../client/outbound-transport.js';
import { InboundAudit, openAuditSinks } from './inbound-audit.js';
import { committedResponses } from './respond/committed.js';
import { AuthFailureLimiter, RateLimiter } from './limits/index.js';
import { publishAgents } from './published-agents.js';
import { storeShareOptions } from './store-shares.js';
import { createDrainStep, Drain } from './lifecycle/drain.js';
import { createCallerAdmission } from './admission/caller.js';
import type { Gateway, GatewayOptions } from './gateway-options.js';
import { openMetrics, routeMeters } from './metrics/wiring.js';
import { reloadAuditRow } from './reload/audit-row.js';
import { createReadiness } from './lifecycle/readiness.js';
import { createDecidedResume } from './resume-decided.js';
import { sendJson } from './respond/response.js';
import { createAskRoute } from './routes/ask.js';
import { createDocumentRoutes } from './routes/documents.js';
import { createHttpJsonRoute } from './routes/http-json.js';
import { createRpcRoute } from './routes/jsonrpc.js';
import { createPushTap, openPush } from '../push/index.js';
import { createRouter } from './routes/router.js';
import { createGatewayReload } from './reload/gateway-reload.js';
import { LiveAuthFailures, LiveCertificates, LiveRates } from './reload/live.js';
import { createLiveTurnAdmission } from './reload/turn-admission.js';
import { CertificateIdentities, createListener } from './tls/index.js';

export type { Gateway, GatewayOptions } from './gateway-options.js';

/**
 * The gateway for `config`: see {@link Gateway}.
 *
 * @example
 * ```ts
 * const gateway = createGateway(config, { logger });
 * const url = await gateway.listen();
 * ```
 */
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
  // With `metrics`, the store is timed and every audit row counted (server/metrics/).
  const metrics = openMetrics(config, logger);
  const unmeteredStore: TaskStore =
    options.store ??
    new MemoryTaskStore({
      maxTasks: config.store.maxTasks,
      taskTtlMs: config.store.taskTtlMinutes * 60_000,
      ...(config.store.type === 'memory' && memoryBounds(config.store)),
      ...fairSharesFor(config.store, storeShareOptions(config, onStoreEvent)),
    });
  const store = metrics?.store(unmeteredStore, config.store.type) ?? unmeteredStore;
  const unmeteredSink = options.auditSink ?? openAuditSinks(config.audit, logger);
  const configuredSink = metrics?.auditSink(unmeteredSink) ?? unmeteredSink;
  let port = config.server.port;
  const auth = Authenticator.fromConfig(config, { logger });
  // Swappable on reload (reload/live.ts): a limiter whose limit did not change keeps its state.
  const rates = new LiveRates(
    sharedLimits?.rate ?? new RateLimiter({ limit: config.limits.requestsPerMinute }),
    config.limits.requestsPerMinute,
  );
  const authFailures = new LiveAuthFailures(
    sharedLimits?.authFailures ?? new AuthFailureLimiter({ limit: config.limits.authFailuresPerMinute }),
    config.limits.authFailuresPerMinute,
  );
  const certificates = new LiveCertificates(new CertificateIdentities(config.clients));
  // With approvals on, the console's audit tail sees every row too (the person's own ones only).
  const audit = new InboundAudit(
    config.approvals === undefined
      ? configuredSink
      : {
          write: (event) => {
            configuredSink?.write(event);
            approvals.desk.observeAuditRow(event);
          },
          committed: () => configuredSink?.committed?.(),
          close: () => configuredSink?.close(),
        },
    logger,
    // Metrics alone (no audit file, no stdout, no console) do not scan every message's text.
    { scanInput: unmeteredSink !== undefined || config.approvals !== undefined },
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
  // With a durable store, push writes each event this replica publishes to the store's outbox.
  const pushTap =
    config.push.enabled && store.push !== undefined && taskBus !== undefined ? createPushTap(taskBus) : undefined;
  // Replicas sharing the store (a shared bus, and a store with leases): each running turn holds a
  // lease, and a task whose replica stopped is failed by another one (tasks/service/leases.ts).
  const leases =
    store.leases !== undefined && bus?.requestCancel !== undefined
      ? {
          leases: store.leases,
          ttlMs: (config.store.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000,
          onLapsed: (owner: string, task: Task) => audit.restartFailed(owner, task, 'replica_lost'),
        }
      : undefined;
  const service = new TaskService({
    store,
    ...(leases !== undefined && { leases }),
    logger: (level, event, fields) => logger[level]({ event, ...fields }),
    ...(observe !== undefined && { observe, observed: () => audit.written() }),
    ...(taskBus !== undefined && { bus: pushTap?.bus ?? taskBus }),
    gate: approvals.desk,
    limits: {
      maxHistoryMessages: config.limits.maxHistoryMessages,
      maxTaskOutputBytes: config.limits.maxTaskOutputBytes,
    },
  });
  const published = publishAgents(config, logger, options.backends);
  const cards = new CardCache(config);

  // Admission: the caller (lockout → credentials → rate), then, per route, the body and the turn.
  const admitCaller = createCallerAdmission({
    auth,
    audit,
    authFailures,
    rates,
    certificates,
    logger,
    apiKeyHeader: config.server.apiKeyHeader,
  });
  // The turn steps (content, metadata, in-flight slot and grant with each agent's tools), rebuilt
  // by a reload (reload/turn-admission.ts): a running turn keeps the grant it was admitted with.
  const turns = createLiveTurnAdmission({ config, audit, hub: options.tools, sharedInFlight: sharedLimits?.inFlight });
  decided.resume = createDecidedResume({
    service,
    grants: turns.grants,
    backendOf: (slug) => published.agents.get(slug)?.backend,
    logger,
  });
  // Between SIGTERM and exit no new turn starts (lifecycle/drain.ts); the rest is served.
  const drain = new Drain();
  const admitTurn = compose(createDrainStep<TurnCandidate>({ drain, audit }), turns.admit);
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
        ...(store.push !== undefined &&
          pushTap !== undefined && {
            durable: {
              push: store.push,
              tap: pushTap,
              onError: (error: unknown) =>
                logger.warn({ event: 'push.outbox_error', error: error instanceof Error ? error.message : 'unknown' }),
            },
          }),
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
      cards.render(
        agent.config,
        version,
        cardBaseUrl(config.server.publicUrl, req.headers.host, port, listener.scheme),
        true,
      ).body,
    logger,
    // Push notifications (src/push/): absent unless `push.enabled` (the methods answer -32003).
    ...(push !== undefined && { push }),
  };
  metrics?.sample({ turnsInFlight: () => service.running, streamsOpen: bindingOptions.admitStream.open });
  metrics?.observeBus(bus);
  metrics?.observeApprovals(() => approvals.desk.pendingByAgent());
  // The A2A routes, counted by the request meter when metrics are on.
  const meter = routeMeters(metrics);
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
    rpc: meter.jsonRpc(createRpcRoute(bindingOptions)),
    // The same admission steps, stream slots and service as JSON-RPC: a third codec at the edge.
    httpJson: config.server.httpJson !== false ? meter.httpJson(createHttpJsonRoute(bindingOptions)) : undefined,
    ask: meter.ask(createAskRoute({ service, admitCaller, admitTurn, limits })),
    approvals: approvals.routes,
    readiness: createReadiness({ drain, store }),
  });

  // node:http, or node:https with `server.tls` (tls/): the same options and handler either way.
  const listener = createListener(
    config.server,
    { logger, ...(options.tlsWatch !== undefined && { watch: options.tlsWatch }) },
    handle,
    {
      // Slow clients are cut off: headers within headersTimeoutMs, the whole request within both
      // limits together (readBody enforces the body's own deadline and answers 408).
      headersTimeout: config.server.headersTimeoutMs,
      requestTimeout: config.server.headersTimeoutMs + config.server.bodyTimeoutMs,
      // Node checks those timeouts only this often (30 s by default).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.server.headersTimeoutMs / 2))),
      // Responses leave together at the end of the event-loop turn, and never before their audit
      // rows are written (group commit): respond/committed.ts.
      ServerResponse: committedResponses(
        () => configuredSink?.committed?.(),
        // A response whose rows were lost still goes out, as before group commit: a refusal
        // stays a refusal, and a task's lost outcome row is logged (its submitted row is out).
        () => logger.warn({ event: 'response_sent_unaudited' }),
      ),
    },
  );
  const server = listener.server;
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
    metrics,
    onStoreEvent,
    recordAudit: (row) => audit.record(row, false),
    reload: createGatewayReload({
      config,
      logger,
      sharedLimits: sharedLimits !== undefined,
      auth,
      certificates,
      rates,
      authFailures,
      turns,
      onReload: (outcome) => {
        audit.record(reloadAuditRow(outcome), false);
        metrics?.series.reloads.inc(outcome.outcome, outcome.outcome === 'applied' ? 'none' : outcome.reason);
        options.onReload?.(outcome);
      },
    }),
    recoverInterrupted: async (recover) => {
      // With a shared bus other replicas serve the same store: their running tasks are not ours.
      const shared = options.bus?.requestCancel !== undefined && recover?.evenShared !== true;
      if (store.failRunning === undefined || shared) return 0;
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
    listen: async () => {
      // The metrics listener first: a port it cannot bind fails the start as the gateway's would.
      await metrics?.listen();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.server.port, config.server.host, () => {
          server.off('error', reject);
          port = (server.address() as AddressInfo).port;
          resolve(`${listener.scheme}://${hostForUrl(config.server.host)}:${port}`);
        });
      });
    },
    close: async () => {
      await metrics?.close();
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
      // Responses held for the rows audit.close() just wrote go out before connections close.
      await new Promise((resolve) => setImmediate(resolve));
      listener.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
