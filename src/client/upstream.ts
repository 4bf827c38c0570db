/**
 * The upstream connector: how `a2a` backends (src/agents/upstream/) reach the A2A agents they
 * stand in front of. It is the outbound client's machinery without its caller-facing side: the
 * registry file names the agents, the guarded transport (`src/net`) carries every request
 * (https, or http to loopback; no private or metadata address unless allowed; no redirects;
 * byte caps and timeouts), card trust (`src/trust`) checks each card against its pin, and the
 * same JSON-RPC exchanges as `OutboundCaller` (`./remote.ts`) speak the dialect the card names.
 *
 * Each request carries only what Airlock puts there: the hop header, the version header and the
 * entry's own bearer token. The backend hands over text; the message around it is new (new
 * messageId, one text part), so nothing of the inbound request travels on.
 *
 * @example
 * ```ts
 * const connector = createUpstreamConnector({ registryPath: 'upstreams.yaml', registry: loadRegistryFile('upstreams.yaml'), pinsPath: '.airlock/pins.json' });
 * connector.assertUpstream('upstream');             // at startup: throws when the registry has no such entry
 * const backend = createUpstreamBackend({ type: 'a2a', agent: 'upstream' }, { agent: 'guarded' }, connector);
 * // … serve …
 * await connector.close();
 * ```
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { BackendConfigError } from '../agents/backend.js';
import {
  UpstreamError,
  type UpstreamAgent,
  type UpstreamChannel,
  type UpstreamConnector,
  type UpstreamRequest,
} from '../agents/upstream/port.js';
import { parseEnvSettings, type GuardedClient as NetClient } from '../net/index.js';
import type { GuardedClientSettings } from '../net/settings.js';
import type { Message, SendParams, SendResult, StreamEvent, Task, TaskState } from '../protocol/model.js';
import { CardTrust, PinStore } from '../trust/index.js';
import type { CardResolver } from './contracts.js';
import type { Registry } from './registry/build.js';
import type { RegistryEntry } from './registry/entry.js';
import { REGISTRY_NAME_PATTERN } from './registry/error.js';
import {
  CallFailure,
  RemoteRpc,
  authFailure,
  resolveEndpoint,
  streamFailure,
  withTotalTimeout,
  type RemoteEndpoint,
} from './remote.js';
import { ERROR_MESSAGES, type CallErrorType } from './result.js';
import { createOutboundTransport, processInstanceId, withHopHeader } from './outbound-transport.js';
import { formatHopChain, HOP_HEADER } from '../protocol/headers.js';
import { cardResolverFrom } from './card-resolver.js';
import type { OutboundLog } from './wiring.js';
import { OutboundAuth } from './auth/provider.js';
import { issuedTokensFor } from './auth/cache.js';
import { transportFailure } from './call-failure.js';
import { countingCards, upstreamAudit, type UpstreamAudit, type UpstreamAuditHook } from './upstream-audit.js';
import type { ExchangeSubject } from './auth/token-exchange.js';
import type { OutboundSubject } from '../identity/delegation.js';

/** A best-effort cancel must not hold a turn long after it ended. */
const CANCEL_TIMEOUT_MS = 10_000;

/**
 * Settings of {@link createUpstreamConnector}.
 *
 * @example
 * ```ts
 * const setup: UpstreamConnectorSetup = { registryPath: 'upstreams.yaml', registry, pinsPath: '.airlock/pins.json', env: process.env };
 * ```
 */
export interface UpstreamConnectorSetup {
  /** The upstream registry file (`upstreams.registry`); the outbound registry format (docs/OUTBOUND.md). */
  registryPath: string;
  /**
   * The registry read from `registryPath`: by `loadRegistryFile`, or by `loadRegistryFileOffThread`
   * when the gateway serves (its schema check in a worker, so TypeBox stays out of the serving
   * thread).
   */
  registry: Registry;
  /** The pin file of upstream cards (`upstreams.pins`). */
  pinsPath: string;
  /** Where bearer tokens (`AIRLOCK_SECRET_*`) and network settings come from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Operator log lines: the connector's (`a2a.upstream.*`) and card trust's (`card_pinned_tofu`, …). */
  log?: OutboundLog;
  /** For tests: replaces DNS in the guarded transport. */
  resolve?: GuardedClientSettings['resolve'];
  /** The gateway's instance id (`server.instanceId`): card fetches and polls carry it as their hop chain. Default: this process's. */
  instanceId?: string;
  /** Where the `a2a.client.send` / `a2a.client.get` rows of upstream calls go (upstream-audit.ts). Default: nowhere. */
  audit?: UpstreamAuditHook;
}

/**
 * The connector and what it was built from.
 *
 * @example
 * ```ts
 * const connector: UpstreamConnectorRuntime = createUpstreamConnector(setup);
 * connector.registry.names(); // ['upstream']
 * ```
 */
export interface UpstreamConnectorRuntime extends UpstreamConnector {
  readonly registry: Registry;
  /** The registry file in use (absolute). */
  readonly registryPath: string;
  /** The pin file in use (absolute). */
  readonly pinsPath: string;
  /** Throws {@link BackendConfigError} (naming the registry file and its entries) when `name` is not in it. */
  assertUpstream(name: string): void;
  /** Releases the transport's connections. */
  close(): Promise<void>;
}

/**
 * Builds the connector from the registry file, the environment and the pin file. Throws (one
 * line, naming the file or variable) when the registry, a secret or a network variable is
 * unusable; nothing is contacted before the first turn.
 *
 * @example
 * ```ts
 * const connector = createUpstreamConnector({ registryPath: 'upstreams.yaml', registry: loadRegistryFile('upstreams.yaml'), pinsPath: '.airlock/pins.json' });
 * const agent = connector.open('upstream');
 * ```
 * @throws RegistryError when the registry file is missing or invalid
 */
export function createUpstreamConnector(setup: UpstreamConnectorSetup): UpstreamConnectorRuntime {
  const env = setup.env ?? process.env;
  const registryPath = resolve(setup.registryPath);
  const registry = setup.registry;
  const settings = parseEnvSettings(env);
  if (setup.resolve !== undefined) settings.resolve = setup.resolve;
  const log: OutboundLog = setup.log ?? (() => undefined);
  const pinsPath = resolve(setup.pinsPath);
  // Card fetches, polls and cancels carry this gateway's id as their hop chain; a turn's send and
  // stream carry the chain its inbound request came with (channelTo). No request goes without.
  const instanceId = setup.instanceId ?? processInstanceId();
  const transport: NetClient = createOutboundTransport(settings, null);
  const ownHop = withHopHeader(transport, instanceId);
  const cards = countingCards(
    cardResolverFrom(new CardTrust({ client: ownHop, pins: new PinStore(pinsPath), log })),
    log,
    (error) => transportFailure(error, 'card_invalid').errorType,
  );
  const rpc = new RemoteRpc(ownHop);
  const relayRpc = new RemoteRpc(transport);
  // Token requests carry this gateway's own hop chain, as card fetches do.
  const auth = new OutboundAuth({ transport: ownHop });
  const audit = upstreamAudit(setup.audit, log);

  const entryOf = (name: string): RegistryEntry => {
    const entry = registry.find(name);
    if (entry !== undefined) return entry;
    const shown = typeof name === 'string' && REGISTRY_NAME_PATTERN.test(name) ? `"${name}"` : 'by that name';
    const known = registry.names();
    throw new BackendConfigError(
      `no upstream agent ${shown} in ${registryPath}; known: ${known.length > 0 ? known.join(', ') : '(none)'}`,
    );
  };

  let closed = false;
  return {
    registry,
    registryPath,
    pinsPath,
    open: (name) => upstreamAgent(entryOf(name), { cards, rpc, relayRpc, instanceId, log, auth, audit }),
    assertUpstream(name) {
      entryOf(name);
    },
    async close() {
      if (closed) return;
      closed = true;
      await transport.close();
    },
  };
}

/** What every agent of one connector shares. */
interface Shared {
  readonly cards: CardResolver;
  /** Over the transport that adds this gateway's own hop chain. */
  readonly rpc: RemoteRpc;
  /** Over the bare transport: each request names its own hop chain (a turn's `via`). */
  readonly relayRpc: RemoteRpc;
  readonly instanceId: string;
  readonly log: OutboundLog;
  readonly auth: OutboundAuth;
  readonly audit: UpstreamAudit;
}

/** The endpoint with the hop chain of `request` (the turn's, else this gateway's own id). */
function viaEndpoint(endpoint: RemoteEndpoint, request: UpstreamRequest, shared: Shared): RemoteEndpoint {
  const chain = request.via !== undefined && request.via.length > 0 ? request.via : [shared.instanceId];
  return { ...endpoint, headers: { ...endpoint.headers, [HOP_HEADER]: formatHopChain(chain) } };
}

function upstreamAgent(entry: RegistryEntry, shared: Shared): UpstreamAgent {
  return {
    name: entry.name,
    limits: { maxWaitMs: entry.maxWaitMs, pollIntervalMs: entry.pollIntervalMs, maxReplyChars: entry.maxReplyChars },
    // A getter: an OAuth entry's tokens are issued during turns.
    get secrets() {
      return entry.auth !== undefined ? [entry.auth.valueForRedaction()] : [...issuedTokensFor(entry.name)];
    },
    async connect(_signal, subject) {
      let endpoint: RemoteEndpoint;
      try {
        endpoint = await resolveEndpoint(entry, shared.cards, shared.auth, exchangeSubject(entry, subject));
        // An OAuth token is had now, so the turn's reply filter knows it (and a failure ends the turn early).
        await endpoint.auth?.header();
      } catch (error) {
        const failure = upstreamError(authFailure(error), entry, shared.log);
        // The turn's send never left: recorded as one that failed (card, pin or token).
        shared.audit.failed('a2a.client.send', entry.name, failure.type);
        throw failure;
      }
      return channelTo(endpoint, shared);
    },
  };
}

/**
 * What the token exchange gets for a turn's subject: a delegated caller's own verified JWT (sent
 * to the token endpoint only, never to the upstream), or nothing for a service caller (client
 * credentials). A delegated caller whose token is not at hand is refused, never relayed under
 * the gateway's own identity instead.
 */
function exchangeSubject(entry: RegistryEntry, subject: OutboundSubject | undefined): ExchangeSubject {
  if (subject === undefined) return {};
  // Only a token exchange entry reads the caller's token; no other grant is shown it.
  if (subject.kind === 'service' || entry.oauth?.kind !== 'token_exchange') return { forInboundCaller: true };
  if (subject.token !== undefined) return { subjectToken: subject.token.reveal(), forInboundCaller: true };
  throw new CallFailure('remote_auth_failed', {
    detail: "the delegated caller's token is not at hand for the token exchange",
  });
}

function channelTo(endpoint: RemoteEndpoint, shared: Shared): UpstreamChannel {
  const { entry } = endpoint;
  const { rpc, log, audit } = shared;
  const sent = (request: UpstreamRequest) => ({
    inputChars: request.text.length,
    ...(request.taskId !== undefined && { taskId: request.taskId }),
    ...(request.contextId !== undefined && { contextId: request.contextId }),
  });
  return {
    streaming: endpoint.streaming,

    async send(request): Promise<SendResult> {
      // A new task goes non-blocking, so its id is known before any long wait (to poll it, and to
      // cancel it). A continued one goes blocking, cut at what is left of max_wait_s: a remote
      // may answer a non-blocking follow-up with the task as it stood (still input-required).
      const followUp = request.taskId !== undefined;
      const params = sendParams(endpoint, request, { returnImmediately: !followUp });
      const routed = viaEndpoint(endpoint, request, shared);
      const target = followUp ? withTotalTimeout(routed, request.timeoutMs) : routed;
      try {
        const result = await shared.relayRpc.call(
          target,
          { method: 'send', params },
          (result) => endpoint.dialect.decodeSendResult(result),
          request.signal,
        );
        const task = result.kind === 'task' ? result.task : undefined;
        audit.call('a2a.client.send', entry.name, {
          ...sent(request),
          ...(task !== undefined && { taskId: task.id, contextId: task.contextId, state: task.status.state }),
        });
        return result;
      } catch (error) {
        const failure = upstreamError(error, entry, log);
        audit.failed('a2a.client.send', entry.name, failure.type, sent(request));
        throw failure;
      }
    },

    async *stream(request): AsyncGenerator<StreamEvent, void, undefined> {
      const params = sendParams(endpoint, request, { returnImmediately: false });
      // Leaving the iteration early (or the request's own abort) closes the stream.
      const abort = new AbortController();
      const onAbort = (): void => abort.abort();
      request.signal.addEventListener('abort', onAbort, { once: true });
      if (request.signal.aborted) abort.abort();
      let failed = false;
      try {
        const events = await shared.relayRpc.openStream(viaEndpoint(endpoint, request, shared), params, {
          totalMs: request.timeoutMs,
          signal: abort.signal,
        });
        yield* events;
      } catch (error) {
        failed = true;
        const failure = upstreamError(error, entry, log);
        audit.failed('a2a.client.send', entry.name, failure.type, sent(request));
        throw failure;
      } finally {
        // Run to its end, or left by the relay once it had the final event: a send that worked.
        if (!failed) audit.call('a2a.client.send', entry.name, sent(request));
        request.signal.removeEventListener('abort', onAbort);
        abort.abort();
      }
    },

    async getTask(taskId, signal): Promise<Task> {
      try {
        const task = await rpc.getTask(endpoint, taskId, signal);
        audit.call('a2a.client.get', entry.name, { taskId, contextId: task.contextId, state: task.status.state });
        return task;
      } catch (error) {
        const failure = upstreamError(error, entry, log);
        audit.failed('a2a.client.get', entry.name, failure.type, { taskId });
        throw failure;
      }
    },

    async cancel(taskId): Promise<TaskState | undefined> {
      try {
        const canceled = await rpc.cancelTask(withTotalTimeout(endpoint, CANCEL_TIMEOUT_MS), taskId);
        return canceled.id === taskId ? canceled.status.state : undefined;
      } catch (error) {
        log('a2a.upstream.cancel_failed', { agent: entry.name, reason: upstreamError(error, entry, log).type });
        return undefined;
      }
    },
  };
}

/** SendMessage params around the request's text: a new message, and nothing else of the request. */
function sendParams(
  endpoint: RemoteEndpoint,
  request: UpstreamRequest,
  configuration: { returnImmediately: boolean },
): SendParams {
  const message: Message = {
    messageId: randomUUID(),
    role: 'user',
    parts: [{ kind: 'text', text: request.text }],
    ...(request.taskId !== undefined && { taskId: request.taskId }),
    ...(request.contextId !== undefined && { contextId: request.contextId }),
  };
  return { message, configuration, ...(endpoint.tenant !== undefined && { tenant: endpoint.tenant }) };
}

/**
 * Explanations that differ from the outbound client's: its `remote_error` text points at the
 * framed reply, which a relay does not have.
 */
const UPSTREAM_MESSAGES: Partial<Record<CallErrorType, string>> = {
  remote_error: 'the upstream agent answered with an error of its own',
  agent_not_configured: 'no such agent in the upstream registry',
};

/**
 * Any failure as an {@link UpstreamError}: the outbound error type, and Airlock's own words
 * for it (a fixed explanation, or a detail written from local values). The remote's text
 * (`remoteText`) is dropped. Anything unexpected is logged by name and reported as
 * `invalid_response`.
 */
function upstreamError(error: unknown, entry: RegistryEntry, log: OutboundLog): UpstreamError {
  if (error instanceof UpstreamError) return error;
  let failure = streamFailure(error, entry);
  if (failure === undefined) {
    log('a2a.upstream.unexpected_error', {
      agent: entry.name,
      error: error instanceof Error ? error.name : typeof error,
    });
    failure = new CallFailure('invalid_response');
  }
  const type = failure.errorType;
  const message = failure.detail ?? UPSTREAM_MESSAGES[type] ?? ERROR_MESSAGES[type];
  return new UpstreamError(type, message, { remoteEnded: failure.fromRpcError });
}
