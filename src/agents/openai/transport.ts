/**
 * One `/chat/completions` exchange over undici: POST the body, refuse what is not an answer (a
 * redirect, a status outside 2xx, a compressed or oversized body), then read the answer, streamed
 * or whole, into {@link CompletionEvent}s while counting its bytes.
 *
 * The dispatcher is a plain undici Agent made for this backend: it never follows a redirect (no
 * redirect interceptor), never reads proxy variables, and only ever talks to `baseUrl`'s origin,
 * so the API key goes nowhere else. The endpoint is the operator's own, so no address policy
 * applies (unlike the guarded client for A2A peers).
 *
 * @example
 * ```ts
 * const dispatcher = createChatDispatcher(5_000);
 * for await (const event of exchangeChatCompletion(dispatcher, exchange, progress)) console.log(event);
 * await dispatcher.close();
 * ```
 */
import { Agent, type Dispatcher } from 'undici';
import { badResponseError, httpStatusError, networkError, redirectError, tooLargeError } from './errors.js';
import { ChatStreamDecoder, readCompletionAnswer, type CompletionEvent } from './stream.js';

/**
 * One request to make.
 *
 * @example
 * ```ts
 * const exchange: ChatExchange = {
 *   url: chatCompletionsUrl('http://127.0.0.1:11434/v1'), apiKey: undefined, body: JSON.stringify(request),
 *   signal: deadline.signal, maxResponseBytes: 4 << 20, connectMs: 5_000, secrets: [],
 * };
 * ```
 */
export interface ChatExchange {
  readonly url: URL;
  /** Sent as `Authorization: Bearer …` when set; never anywhere else. */
  readonly apiKey: string | undefined;
  /** The JSON request body. */
  readonly body: string;
  /** Aborts the request at once: cancellation and the turn's timeouts. */
  readonly signal: AbortSignal;
  readonly maxResponseBytes: number;
  /** For the reason of a connect timeout. */
  readonly connectMs: number;
  /** Redacted from any server message that reaches a reason. */
  readonly secrets: readonly string[];
}

/**
 * What the exchange saw so far, for the log line (never content).
 *
 * @example
 * ```ts
 * const progress: ExchangeProgress = { bytes: 0 };
 * ```
 */
export interface ExchangeProgress {
  /** The HTTP status, once the response head arrived. */
  status?: number;
  /** Body bytes read. */
  bytes: number;
}

/** Bytes of an error body read for the server's message; the rest is dropped unread. */
const MAX_ERROR_BODY_BYTES = 16 * 1024;

/**
 * The undici Agent one backend sends all its requests through: a connect timeout, keep-alive
 * between turns, and nothing else (no redirects, no proxy). Close it when the backend closes.
 *
 * @example
 * ```ts
 * const dispatcher = createChatDispatcher(config.timeouts.connectMs);
 * ```
 */
export function createChatDispatcher(connectMs: number): Agent {
  return new Agent({ connect: { timeout: connectMs }, keepAliveTimeout: 4_000 });
}

/**
 * Makes the request and yields what the answer says. A streamed answer (anything but
 * `application/json`) is read as SSE as it arrives; a JSON answer is read whole. Throws an
 * {@link OpenAiTurnError} for a redirect, a status outside 2xx (with the server's redacted error
 * message), a compressed body, more than `maxResponseBytes`, or a network failure; an abort
 * through `signal` is thrown as it is (the caller knows why it aborted).
 *
 * Stopping the iteration early (after `[DONE]`) closes the response.
 *
 * @example
 * ```ts
 * for await (const event of exchangeChatCompletion(dispatcher, exchange, progress)) {
 *   if (event.type === 'token') yield { type: 'text', text: event.text };
 *   if (event.type === 'done') break;
 * }
 * ```
 */
export async function* exchangeChatCompletion(
  dispatcher: Dispatcher,
  exchange: ChatExchange,
  progress: ExchangeProgress,
): AsyncGenerator<CompletionEvent> {
  let response: Dispatcher.ResponseData;
  try {
    response = await dispatcher.request({
      origin: exchange.url.origin,
      path: `${exchange.url.pathname}${exchange.url.search}`,
      method: 'POST',
      headers: requestHeaders(exchange.apiKey),
      body: exchange.body,
      signal: exchange.signal,
      // The turn's own first-token and total timers (through `signal`) replace undici's.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  } catch (error) {
    throw exchange.signal.aborted ? error : networkError(error, false, exchange.connectMs);
  }
  const { statusCode: status, body } = response;
  progress.status = status;
  try {
    if (status >= 300 && status <= 399) throw redirectError(status);
    if (status < 200 || status > 299) {
      const text = await readText(body, Math.min(MAX_ERROR_BODY_BYTES, exchange.maxResponseBytes), progress, false);
      throw httpStatusError(status, text, exchange.secrets);
    }
    const headers = response.headers;
    if (!isIdentity(headerOf(headers, 'content-encoding'))) {
      throw badResponseError('a compressed answer although none was asked for');
    }
    const declared = Number(headerOf(headers, 'content-length') ?? Number.NaN);
    if (Number.isFinite(declared) && declared > exchange.maxResponseBytes) {
      throw tooLargeError(exchange.maxResponseBytes);
    }
    if (isJson(headerOf(headers, 'content-type'))) {
      yield* readCompletionAnswer(await readText(body, exchange.maxResponseBytes, progress, true));
      return;
    }
    const decoder = new ChatStreamDecoder();
    for await (const chunk of body as AsyncIterable<Buffer>) {
      countBytes(progress, chunk.length, exchange.maxResponseBytes);
      yield* decoder.push(chunk);
    }
    yield* decoder.end();
  } catch (error) {
    if (exchange.signal.aborted) throw error;
    throw networkError(error, true, exchange.connectMs);
  } finally {
    // Unread bytes (an error page, a stream left after [DONE]) are not waited for.
    if (!body.destroyed) body.destroy();
  }
}

/**
 * Reads a body as UTF-8 text, at most `maxBytes`. Past the cap: a too-large failure when
 * `strict`, else the text read so far (enough of an error page to find its message).
 */
async function readText(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  progress: ExchangeProgress,
  strict: boolean,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (strict) countBytes(progress, chunk.length, maxBytes);
    else progress.bytes += chunk.length;
    const room = maxBytes - size;
    if (chunk.length >= room) {
      chunks.push(chunk.subarray(0, room));
      break;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

function countBytes(progress: ExchangeProgress, bytes: number, maxBytes: number): void {
  progress.bytes += bytes;
  if (progress.bytes > maxBytes) throw tooLargeError(maxBytes);
}

function requestHeaders(apiKey: string | undefined): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'text/event-stream, application/json',
    // undici does not decode bodies; asking for none keeps the byte cap on what the model sent.
    'accept-encoding': 'identity',
    'user-agent': 'airlock',
    ...(apiKey !== undefined && { authorization: `Bearer ${apiKey}` }),
  };
}

function headerOf(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function isIdentity(contentEncoding: string | undefined): boolean {
  if (contentEncoding === undefined) return true;
  return contentEncoding
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .every((token) => token.length === 0 || token === 'identity');
}

/** `application/json` (any parameters): a whole answer. Anything else is read as a stream. */
function isJson(contentType: string | undefined): boolean {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}
