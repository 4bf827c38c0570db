/**
 * A real OpenAI-compatible endpoint on loopback for the backend's tests: a `node:http` server
 * that records each request (path, headers, parsed body) and answers through a handler the test
 * chooses, with helpers that speak the streaming format (`data: {chunk}\n\n` …
 * `data: [DONE]\n\n`). Named `.test.ts` so that the build leaves it out; it declares no tests.
 *
 * @example
 * ```ts
 * const model = await startFakeModel((_request, res) => streamReply(res, ['Hel', 'lo']));
 * const backend = createOpenAiBackend(testConfig(model.baseUrl));
 * await collect(backend, fakeTurn());
 * model.requests[0].body.messages; // what the backend sent
 * await model.close();
 * ```
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenAiBackendConfig } from './schema.js';

/** One request the endpoint received. */
export interface ModelRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The JSON body, parsed. */
  readonly body: any;
  /** Resolves once the response is over: `finished` when the server ended it, `closed` when the client went away first. */
  readonly ended: Promise<'finished' | 'closed'>;
}

/** Answers one request; may write slowly, stall, or never end. */
export type ModelHandler = (request: ModelRequest, res: ServerResponse) => void | Promise<void>;

/** A running fake endpoint. */
export interface FakeModel {
  /** `http://127.0.0.1:PORT/v1`, as `baseUrl`. */
  readonly baseUrl: string;
  readonly requests: ModelRequest[];
  /** Replaces the handler for the requests that follow. */
  handle(handler: ModelHandler): void;
  /** Resolves when the `n`-th request (1-based) has arrived. */
  requestArrived(n?: number): Promise<ModelRequest>;
  close(): Promise<void>;
}

/**
 * Starts the endpoint on a free loopback port.
 *
 * @example
 * ```ts
 * const model = await startFakeModel((_request, res) => streamReply(res, ['Hi']));
 * ```
 */
export async function startFakeModel(
  handler: ModelHandler = (_request, res) => streamReply(res, ['ok']),
): Promise<FakeModel> {
  let current = handler;
  const requests: ModelRequest[] = [];
  const waiters: Array<{ n: number; resolve: (request: ModelRequest) => void }> = [];
  const server = createServer((req, res) => {
    const ended = new Promise<'finished' | 'closed'>((resolve) => {
      res.on('close', () => resolve(res.writableFinished ? 'finished' : 'closed'));
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      const request: ModelRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        ended,
      };
      requests.push(request);
      for (const waiter of waiters.filter((w) => w.n <= requests.length)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(requests[waiter.n - 1] as ModelRequest);
      }
      void Promise.resolve(current(request, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    handle(next) {
      current = next;
    },
    requestArrived(n = 1) {
      if (requests.length >= n) return Promise.resolve(requests[n - 1] as ModelRequest);
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A backend config for tests: the schema's defaults, then `overrides`.
 *
 * @example
 * ```ts
 * testConfig(model.baseUrl, { apiKey: 'sk-test-0123456789', timeouts: { connectMs: 1000, firstTokenMs: 200, totalMs: 1000 } });
 * ```
 */
export function testConfig(baseUrl: string, overrides: Partial<OpenAiBackendConfig> = {}): OpenAiBackendConfig {
  return {
    type: 'openai',
    baseUrl,
    model: 'test-model',
    history: { maxTurns: 10, maxChars: 16_000 },
    timeouts: { connectMs: 2_000, firstTokenMs: 5_000, totalMs: 10_000 },
    maxResponseBytes: 4 * 1024 * 1024,
    ...overrides,
  };
}

/** Writes the head of a streamed answer. */
export function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** One `chat.completion.chunk` event with `delta` (and `finish_reason`). */
export function chunkEvent(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const chunk = {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** A content delta event. */
export function tokenEvent(text: string): string {
  return chunkEvent({ content: text });
}

/** The closing events: an empty delta with `finish_reason`, then `[DONE]`. */
export function finishEvents(reason = 'stop'): string {
  return `${chunkEvent({}, reason)}data: [DONE]\n\n`;
}

/**
 * A whole streamed answer: the role delta, one event per token, the finish, `[DONE]`, the end.
 *
 * @example
 * ```ts
 * model.handle((_request, res) => streamReply(res, ['Hel', 'lo']));
 * ```
 */
export function streamReply(res: ServerResponse, tokens: readonly string[]): void {
  startStream(res);
  res.write(chunkEvent({ role: 'assistant', content: '' }));
  for (const token of tokens) res.write(tokenEvent(token));
  res.end(finishEvents());
}

/** Answers with a status and a JSON body. */
export function answerJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
