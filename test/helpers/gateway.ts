/**
 * Starts a real gateway on a loopback port for a test, with two clients whose tokens are
 * known to the test.
 */
import type { AgentBackend } from '../../src/agents/backend.js';
import type { AuditSink } from '../../src/audit/index.js';
import { parseConfig, type AirlockConfig } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/server/http.js';
import { silentLogger } from '../../src/server/log.js';

export const TOKEN_A = 'token-for-client-a-0123456789abcdef0123';
export const TOKEN_B = 'token-for-client-b-0123456789abcdef0123';
/** Client `c` may call `echo` only. */
export const TOKEN_C = 'token-for-client-c-0123456789abcdef0123';

export const DEFAULT_YAML = `
server: { host: 127.0.0.1, port: 0, defaultAgent: echo }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes text, tags: [demo] }]
    backend: { type: echo }
    extendedCard: { description: 'Echoes, for members.' }
  - slug: writer
    name: Writer
    description: Writes.
    skills: [{ id: write, name: Write, description: Writes text, tags: [demo] }]
    backend: { type: writer, chunkDelayMs: 5 }
  - slug: tck
    name: Conformance
    description: TCK behaviour.
    skills: [{ id: tck, name: TCK, description: Scripted, tags: [test] }]
    backend: { type: conformance, resubscribeHoldMs: 300 }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, writer, tck] }
  - { id: b, token: "\${TOKEN_B}", agents: [echo, writer, tck] }
  - { id: c, token: "\${TOKEN_C}", agents: [echo] }
`;

export interface TestGateway {
  url: string;
  gateway: Gateway;
  config: AirlockConfig;
  close(): Promise<void>;
}

export async function startGateway(
  yaml = DEFAULT_YAML,
  options: {
    auditSink?: AuditSink;
    env?: Record<string, string>;
    /** Backends written in code, by agent slug (createGateway's `backends`). */
    backends?: Readonly<Record<string, AgentBackend>>;
    /**
     * Server settings laid over the loaded config, past the loader's checks (as a library
     * caller may build its config): e.g. a non-loopback `host` without `allowNonLoopback`,
     * which `parseConfig` refuses, to test the gate behind it.
     */
    server?: Partial<AirlockConfig['server']>;
  } = {},
): Promise<TestGateway> {
  const config = parseConfig(yaml, { TOKEN_A, TOKEN_B, TOKEN_C, ...options.env });
  if (options.server !== undefined) Object.assign(config.server, options.server);
  const gateway = createGateway(config, {
    logger: silentLogger,
    ...(options.auditSink !== undefined && { auditSink: options.auditSink }),
    ...(options.backends !== undefined && { backends: options.backends }),
  });
  const url = await gateway.listen();
  return { url, gateway, config, close: () => gateway.close() };
}

/** POSTs one JSON-RPC call and returns the status and parsed body. */
export async function rpc(
  url: string,
  method: string,
  params: unknown,
  options: {
    token?: string | null;
    version?: string;
    id?: number | string;
    /** Extra request headers (sent after the ones above, so they may replace them). */
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const token = options.token === undefined ? TOKEN_A : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.version !== undefined) headers['a2a-version'] = options.version;
  Object.assign(headers, options.headers);
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: options.id ?? 1, method, params }),
  });
  const text = await response.text();
  return { status: response.status, body: text.length > 0 ? JSON.parse(text) : undefined, headers: response.headers };
}

/** POSTs a streaming call and collects every SSE `data:` payload until the server closes. */
export async function rpcStream(
  url: string,
  method: string,
  params: unknown,
  options: { token?: string; version?: string } = {},
): Promise<{ status: number; events: any[]; contentType: string | null }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    authorization: `Bearer ${options.token ?? TOKEN_A}`,
  };
  if (options.version !== undefined) headers['a2a-version'] = options.version;
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  const text = await response.text();
  const events = text
    .split('\n\n')
    .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)));
  return { status: response.status, events, contentType: response.headers.get('content-type') };
}

export function v10Message(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }], ...extra };
}

export function v03Message(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'message',
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    role: 'user',
    parts: [{ kind: 'text', text }],
    ...extra,
  };
}

/** DEFAULT_YAML (or `yaml`) with its one-line `server:` mapping replaced by `server: {server}`. */
export function withServer(server: string, yaml = DEFAULT_YAML): string {
  return yaml.replace(/^server: .*$/m, `server: ${server}`);
}

/**
 * POSTs one JSON-RPC call and returns the response as text, byte for byte: for comparing two
 * answers exactly, and for looking for a string anywhere in a reply (JSON or SSE alike).
 */
export async function rpcText(
  url: string,
  method: string,
  params: unknown,
  options: { token?: string | null; version?: string; id?: number | string; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const token = options.token === undefined ? TOKEN_A : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.version !== undefined) headers['a2a-version'] = options.version;
  Object.assign(headers, options.headers);
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: options.id ?? 1, method, params }),
  });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** Polls `check` until it returns true, or fails after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 1000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
