/**
 * The guarded HTTP client: every outbound request Airlock makes (cards, JWKS, JSON-RPC calls,
 * SSE streams) goes through here.
 *
 * Per request: URL policy (https only, no credentials, literal addresses judged as written) →
 * undici with the guarded connector (resolve once, check every answer, dial exactly those,
 * egress proxy for public destinations) → `accept-encoding: identity` forced → 3xx refused,
 * never followed → any content-encoding refused before the body is read → body counted against
 * the cap while it streams → connect, read (idle) and total timeouts.
 *
 * Proxy variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) are never read: the dispatcher is a plain
 * undici Agent created here, never the global dispatcher or EnvHttpProxyAgent.
 *
 * @example
 * ```ts
 * const client = createGuardedClient(parseEnvSettings(process.env));
 * const card = await client.request({
 *   method: 'GET', url: 'https://agent.example/.well-known/agent-card.json',
 *   maxResponseBytes: 256 * 1024, timeouts: { connectMs: 5000, readMs: 10000, totalMs: 15000 },
 * });
 * await client.close();
 * ```
 */
import tls from 'node:tls';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import { capBody, checkDeclaredLength, discardBody } from './body.js';
import { guardedConnector, systemResolve } from './connector.js';
import { codeOf } from './dial.js';
import { OutboundError } from './errors.js';
import { loadCaFile, parseEgressProxy, validateAllowList } from './settings.js';
import type { EgressProxy, GuardedClientSettings } from './settings.js';
import { checkOutboundUrl } from './url-policy.js';
import type { OutboundTarget } from './url-policy.js';

/** One outbound request. */
export interface GuardedRequestOptions {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Cap on the response body, counted while reading. */
  maxResponseBytes: number;
  timeouts: { connectMs: number; readMs: number; totalMs: number };
  /** The registry entry allows private addresses (still only those in the client's privateAllow list). */
  privateNetwork?: boolean;
  signal?: AbortSignal;
}

/** A fully read response. Non-2xx statuses other than 3xx are returned: the caller decides. */
export interface GuardedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A streamed response; the body is capped at maxResponseBytes in total and the total timeout applies. */
export interface GuardedStream {
  status: number;
  headers: Record<string, string>;
  body: AsyncIterable<Buffer>;
}

/** The guarded client. */
export interface GuardedClient {
  request(options: GuardedRequestOptions): Promise<GuardedResponse>;
  stream(options: GuardedRequestOptions): Promise<GuardedStream>;
  close(): Promise<void>;
}

/**
 * Request headers the caller may not set: framing and connection management belong to the
 * transport, `accept-encoding` is always `identity`, and proxy credentials only ever go to the
 * proxy, from the proxy URL.
 */
const RESERVED_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'transfer-encoding',
  'content-length',
  'accept-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);

/** Upper bound for any single timeout, so a typo cannot park a request for days. */
const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/**
 * Creates a guarded client. Throws (a plain Error naming the setting) when a setting is
 * malformed: a bad allowlist entry, an unreadable CA file, a proxy that is not http://host:port.
 *
 * @example
 * ```ts
 * const client = createGuardedClient({ privateAllow: ['10.20.0.0/16'], egressProxy: 'http://squid:3128' });
 * const reply = await client.request({
 *   method: 'POST', url: 'https://agent.example/a2a', headers: { 'content-type': 'application/json' },
 *   body: JSON.stringify(rpc), maxResponseBytes: 1 << 20, timeouts: { connectMs: 5000, readMs: 60000, totalMs: 120000 },
 * });
 * ```
 */
export function createGuardedClient(settings: GuardedClientSettings = {}): GuardedClient {
  const privateAllow = validateAllowList(settings.privateAllow ?? [], 'privateAllow');
  const proxy: EgressProxy | undefined =
    settings.egressProxy === undefined || settings.egressProxy === ''
      ? undefined
      : parseEgressProxy(settings.egressProxy, 'egressProxy');
  // One TLS context, built once: passing `ca` replaces the default roots, so they are included.
  const secureContext =
    settings.caFile === undefined || settings.caFile === ''
      ? undefined
      : tls.createSecureContext({ ca: [...tls.rootCertificates, loadCaFile(settings.caFile, 'caFile')] });
  const resolve = settings.resolve ?? systemResolve;
  const defaultHeaders = requestHeaders(settings.defaultHeaders);
  const agents = new Map<string, Agent>();
  let closed = false;

  // One agent per (privateNetwork, connect timeout): the connector cannot see the request, so
  // what it enforces is fixed per agent, and a connection checked under one policy is never
  // pooled for a request judged under another.
  function agentFor(privateNetwork: boolean, connectMs: number): Agent {
    const key = `${privateNetwork ? 'private' : 'public'}:${connectMs}`;
    let agent = agents.get(key);
    if (agent === undefined) {
      agent = new Agent({
        connect: guardedConnector({ privateNetwork, privateAllow, connectMs, resolve, secureContext, proxy }),
        keepAliveTimeout: 4_000,
        connections: 16,
      });
      agents.set(key, agent);
    }
    return agent;
  }

  async function open(options: GuardedRequestOptions): Promise<Opened> {
    if (closed) throw new OutboundError('network_error', 'the guarded client is closed');
    validateOptions(options);
    const privateNetwork = options.privateNetwork === true;
    const target = checkOutboundUrl(options.url, {
      privateNetwork,
      privateAllow,
      proxyConfigured: proxy !== undefined,
    });
    const deadline = startDeadline(target, options);
    let response: Dispatcher.ResponseData;
    try {
      response = await agentFor(privateNetwork, options.timeouts.connectMs).request({
        origin: target.origin,
        path: target.path,
        method: options.method,
        headers: { ...requestHeaders(options.headers), ...defaultHeaders },
        ...(options.body === undefined ? {} : { body: options.body }),
        signal: deadline.signal,
        headersTimeout: options.timeouts.readMs,
        bodyTimeout: options.timeouts.readMs,
      });
    } catch (error) {
      deadline.done();
      throw mapError(error, target, options, deadline.signal);
    }
    const status = response.statusCode;
    const headers = flattenHeaders(response.headers);
    try {
      if (status >= 300 && status <= 399) {
        throw new OutboundError(
          'redirect_refused',
          `${target.origin} answered ${status}; redirects are never followed (use the final URL)`,
        );
      }
      refuseEncodings(headers, target.origin);
      checkDeclaredLength(headers, options.maxResponseBytes, target.origin);
    } catch (error) {
      discardBody(response.body);
      deadline.done();
      throw error;
    }
    const body = capBody(
      response.body,
      options.maxResponseBytes,
      target.origin,
      (error) => mapError(error, target, options, deadline.signal),
      deadline.done,
    );
    return { status, headers, body };
  }

  return {
    async request(options) {
      const opened = await open(options);
      const chunks: Buffer[] = [];
      for await (const chunk of opened.body) chunks.push(chunk);
      return { status: opened.status, headers: opened.headers, body: Buffer.concat(chunks) };
    },
    async stream(options) {
      return open(options);
    },
    async close() {
      closed = true;
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((agent) => agent.close()));
    },
  };
}

interface Opened {
  status: number;
  headers: Record<string, string>;
  body: AsyncIterable<Buffer>;
}

interface Deadline {
  signal: AbortSignal;
  /** Stops the total timer and unlinks the caller's signal; idempotent. */
  done: () => void;
}

/** The total timeout and the caller's signal, folded into one AbortSignal for undici. */
function startDeadline(target: OutboundTarget, options: GuardedRequestOptions): Deadline {
  const controller = new AbortController();
  const { totalMs } = options.timeouts;
  const timer = setTimeout(() => {
    controller.abort(new OutboundError('request_timeout', `${target.origin} did not finish within ${totalMs} ms`));
    done();
  }, totalMs);
  const caller = options.signal;
  const onCallerAbort = (): void => {
    const reason: unknown = caller?.reason;
    const timedOut = reason instanceof Error && reason.name === 'TimeoutError';
    controller.abort(
      timedOut
        ? new OutboundError('request_timeout', `the request to ${target.origin} ran out of time (caller deadline)`)
        : new OutboundError('network_error', `the request to ${target.origin} was cancelled`),
    );
  };
  if (caller !== undefined) {
    if (caller.aborted) onCallerAbort();
    else caller.addEventListener('abort', onCallerAbort, { once: true });
  }
  let finished = false;
  function done(): void {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    caller?.removeEventListener('abort', onCallerAbort);
  }
  return { signal: controller.signal, done };
}

function validateOptions(options: GuardedRequestOptions): void {
  if (options.method !== 'GET' && options.method !== 'POST') {
    throw new TypeError('guarded request: method must be GET or POST');
  }
  if (!Number.isSafeInteger(options.maxResponseBytes) || options.maxResponseBytes < 0) {
    throw new TypeError('guarded request: maxResponseBytes must be a non-negative integer');
  }
  for (const name of ['connectMs', 'readMs', 'totalMs'] as const) {
    const value = options.timeouts?.[name];
    if (!Number.isFinite(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
      throw new TypeError(`guarded request: timeouts.${name} must be a positive number of milliseconds`);
    }
  }
  if (options.body !== undefined && typeof options.body !== 'string') {
    throw new TypeError('guarded request: body must be a string');
  }
}

function requestHeaders(input: Record<string, string> | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input ?? {})) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('proxy-')) continue;
    headers[lower] = value;
  }
  // Compressed replies would be decoded after the byte cap, so a small gzip bomb could expand
  // without bound; asking for identity, and refusing anything else, keeps the cap honest.
  headers['accept-encoding'] = 'identity';
  return headers;
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** The caller-safe line for a refused content or transfer coding. */
const COMPRESSED_DETAIL = 'the remote sent a compressed response, which Airlock never decodes';

/**
 * Refuses any content coding but identity, and any transfer coding but chunked. The messages
 * name the header, not its value (header values stay out of error text).
 */
function refuseEncodings(headers: Record<string, string>, origin: string): void {
  const codings = (value: string | undefined): string[] =>
    (value ?? '')
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter((token) => token.length > 0);
  if (codings(headers['content-encoding']).some((token) => token !== 'identity')) {
    throw new OutboundError(
      'invalid_response',
      `${origin} sent an encoded reply (content-encoding other than identity) although identity was requested`,
      { detail: COMPRESSED_DETAIL },
    );
  }
  if (codings(headers['transfer-encoding']).some((token) => token !== 'chunked' && token !== 'identity')) {
    // 'gzip, chunked' and the like: a compressed body under the chunked framing.
    throw new OutboundError('invalid_response', `${origin} sent a reply with a transfer-encoding other than chunked`, {
      detail: COMPRESSED_DETAIL,
    });
  }
}

/** Turns undici and socket errors into OutboundErrors with messages built here, not copied. */
function mapError(error: unknown, target: OutboundTarget, options: GuardedRequestOptions, signal: AbortSignal): Error {
  if (error instanceof OutboundError) return error;
  if (signal.aborted && signal.reason instanceof OutboundError) return signal.reason;
  const code = codeOf(error);
  const { origin } = target;
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new OutboundError('request_timeout', `${origin} sent no response within ${options.timeouts.readMs} ms`, {
        cause: error,
      });
    case 'UND_ERR_BODY_TIMEOUT':
      return new OutboundError('request_timeout', `${origin} stopped sending for ${options.timeouts.readMs} ms`, {
        cause: error,
      });
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new OutboundError('request_timeout', `connecting to ${origin} timed out`, { cause: error });
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return new OutboundError('invalid_response', `${origin} sent a malformed reply (${code})`, { cause: error });
    case 'UND_ERR_INVALID_ARG':
      return new OutboundError('network_error', `the request to ${origin} could not be sent (invalid argument)`, {
        cause: error,
      });
    default:
      if (code.startsWith('HPE_')) {
        return new OutboundError('invalid_response', `${origin} sent a malformed HTTP reply (${code})`, {
          cause: error,
        });
      }
      return new OutboundError('network_error', `the request to ${origin} failed (${code})`, { cause: error });
  }
}
