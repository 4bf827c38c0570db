/**
 * The `openai` backend: any OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama,
 * llama.cpp's server, vLLM, …). Each turn sends the operator's system prompt and Airlock's
 * untrusted-input note, the session's bounded history and the caller's framed message, then
 * streams the model's tokens into the reply as they arrive. The model is offered no tools.
 *
 * @example
 * ```ts
 * const backend = createOpenAiBackend({
 *   type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2',
 *   history: { maxTurns: 10, maxChars: 16_000 },
 *   timeouts: { connectMs: 5_000, firstTokenMs: 60_000, totalMs: 300_000 },
 *   maxResponseBytes: 4 * 1024 * 1024,
 * });
 * for await (const event of backend.run(turn)) console.log(event);
 * // { type: 'text', text: 'Hello' } … { type: 'text', text: '', last: true } { type: 'completed' }
 * await backend.close?.();
 * ```
 */
import type { OpenAiBackendConfig } from './config.js';
import {
  BackendConfigError,
  isAborted,
  type AgentBackend,
  type AgentEvent,
  type AgentTurn,
  type BackendContext,
  type BackendLog,
  type SessionEntry,
} from '../backend.js';
import { TurnDeadline } from './deadline.js';
import { badResponseError, networkError, OpenAiTurnError, serverError } from './errors.js';
import { buildChatMessages, buildChatRequest, chatCompletionsUrl } from './request.js';
import { createChatDispatcher, exchangeChatCompletion, type ExchangeProgress } from './transport.js';

export type { OpenAiBackendConfig } from './config.js';
export { OpenAiTurnError, cleanServerMessage, MAX_SERVER_MESSAGE_CHARS } from './errors.js';
export type { OpenAiFailureCode } from './errors.js';
export { buildChatMessages, buildChatRequest, chatCompletionsUrl, historyMessages } from './request.js';
export type { ChatCompletionRequest, ChatMessage, ChatRequestOptions } from './request.js';
export { ChatStreamDecoder, readCompletionAnswer, readStreamData, serverErrorMessage } from './stream.js';
export type { CompletionEvent } from './stream.js';
export { SseDataDecoder } from './sse.js';

/** What every turn of one backend shares. */
interface OpenAiSettings {
  readonly config: OpenAiBackendConfig;
  readonly url: URL;
  readonly dispatcher: ReturnType<typeof createChatDispatcher>;
  readonly secrets: readonly string[];
  readonly log: BackendLog;
  readonly agent: string;
}

/**
 * Creates the backend (kind `openai`) for one configured endpoint. Throws a
 * {@link BackendConfigError} when `baseUrl` is not a URL or carries credentials (`user:pass@`;
 * the key belongs in `apiKey`, which is sent to that origin only).
 *
 * Each turn yields a `text` event per content delta as it arrives, then an empty `text` with
 * `last: true` (when there was any text) and `completed`; or `failed` with a reason free of
 * secrets (HTTP status, the server's redacted error message, a timeout, a redirect, …). A
 * canceled turn aborts the upstream request at once and ends with no event. `close()` closes the
 * kept-alive connections.
 *
 * @example
 * ```ts
 * const backend = createOpenAiBackend(config.agents[0].backend, { agent: 'assistant', log });
 * ```
 */
export function createOpenAiBackend(config: OpenAiBackendConfig, context: BackendContext = {}): AgentBackend {
  const url = endpointOf(config.baseUrl);
  const dispatcher = createChatDispatcher(config.timeouts.connectMs);
  const settings: OpenAiSettings = {
    config,
    url,
    dispatcher,
    secrets: config.apiKey === undefined ? [] : [config.apiKey],
    log: context.log ?? (() => {}),
    agent: context.agent ?? '',
  };
  return {
    kind: 'openai',
    run: (turn) => runTurn(turn, settings),
    close: () => dispatcher.close(),
  };
}

function endpointOf(baseUrl: string): URL {
  let url: URL;
  try {
    url = chatCompletionsUrl(baseUrl);
  } catch {
    throw new BackendConfigError('openai backend: baseUrl is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BackendConfigError('openai backend: baseUrl must be an http:// or https:// URL');
  }
  if (url.username !== '' || url.password !== '') {
    throw new BackendConfigError('openai backend: baseUrl must not carry credentials; put the key in apiKey');
  }
  return url;
}

async function* runTurn(turn: AgentTurn, settings: OpenAiSettings): AsyncGenerator<AgentEvent> {
  if (isAborted(turn)) return;
  const { config } = settings;
  const history = await readHistory(turn, settings);
  if (isAborted(turn)) return;
  const request = buildChatRequest(config, buildChatMessages(turn, config, history));
  const started = Date.now();
  const deadline = new TurnDeadline(turn.signal, config.timeouts);
  const progress: ExchangeProgress = { bytes: 0 };
  const exchange = {
    url: settings.url,
    apiKey: config.apiKey,
    body: JSON.stringify(request),
    signal: deadline.signal,
    maxResponseBytes: config.maxResponseBytes,
    connectMs: config.timeouts.connectMs,
    secrets: settings.secrets,
  };
  let chunks = 0;
  let finishReason = '';
  try {
    let finished = false;
    for await (const event of exchangeChatCompletion(settings.dispatcher, exchange, progress)) {
      if (event.type === 'done') {
        finished = true;
        break;
      }
      switch (event.type) {
        case 'token':
          deadline.tokenArrived();
          chunks++;
          yield { type: 'text', text: event.text };
          break;
        case 'reasoning':
          // A thinking model is alive and working: not a stall, though nothing is forwarded.
          deadline.tokenArrived();
          break;
        case 'finish':
          finished = true;
          finishReason = event.reason;
          break;
        case 'error':
          throw serverError(event.message, settings.secrets);
        case 'invalid':
          throw badResponseError(event.what);
      }
    }
    if (!finished) throw badResponseError('an answer that ended before the reply was finished');
  } catch (error) {
    if (isAborted(turn)) {
      logTurn(settings, 'debug', 'openai_turn_canceled', started, progress, { chunks });
      return;
    }
    const failure = deadline.failure ?? asTurnError(error, config.timeouts.connectMs);
    logTurn(settings, 'warn', 'openai_turn_failed', started, progress, {
      chunks,
      code: failure.code,
      ...(failure.status !== undefined && { status: failure.status }),
    });
    yield { type: 'failed', reason: failure.message };
    return;
  } finally {
    deadline.dispose();
  }
  if (isAborted(turn)) return;
  logTurn(settings, 'info', 'openai_turn_completed', started, progress, {
    chunks,
    ...(finishReason !== '' && { finishReason: /^[a-z_]{1,32}$/.test(finishReason) ? finishReason : 'other' }),
  });
  if (chunks > 0) yield { type: 'text', text: '', last: true };
  yield { type: 'completed' };
}

/**
 * The session's earlier entries within the configured bounds. A store that cannot be read costs
 * the turn its context, not its answer: the failure is logged and the turn goes on without it.
 */
async function readHistory(turn: AgentTurn, settings: OpenAiSettings): Promise<readonly SessionEntry[]> {
  const { maxTurns, maxChars } = settings.config.history;
  if (turn.history === undefined || maxTurns === 0 || maxChars === 0) return [];
  try {
    return await turn.history({ maxTurns, maxChars });
  } catch (error) {
    settings.log('warn', 'openai_history_unavailable', {
      agent: settings.agent,
      error: error instanceof Error ? error.name : 'unknown',
    });
    return [];
  }
}

function asTurnError(error: unknown, connectMs: number): OpenAiTurnError {
  return error instanceof OpenAiTurnError ? error : networkError(error, true, connectMs);
}

function logTurn(
  settings: OpenAiSettings,
  level: 'debug' | 'info' | 'warn',
  event: string,
  started: number,
  progress: ExchangeProgress,
  fields: Readonly<Record<string, string | number | boolean>>,
): void {
  settings.log(level, event, {
    agent: settings.agent,
    model: settings.config.model,
    durationMs: Date.now() - started,
    bytes: progress.bytes,
    ...(progress.status !== undefined && { status: progress.status }),
    ...fields,
  });
}
