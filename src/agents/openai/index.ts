/**
 * The `openai` backend: any OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama,
 * llama.cpp's server, vLLM, …). Each turn sends the operator's system prompt and Airlock's
 * untrusted-input note, the session's bounded history and the caller's framed message, then
 * streams the model's tokens into the reply as they arrive.
 *
 * Tools: the model is offered exactly the turn's toolbox offers (`turn.tools`), none without
 * one. Its tool calls are run by Airlock through the toolbox, never by the model host, and the
 * results go back to the model until it answers without tool calls (at most `maxToolRounds`
 * answers with calls per turn); an acting call the person must decide on ends the turn with
 * `propose-action`, and the turn after the decision goes on where it stopped. Only the final
 * reply text reaches the caller. The loop is in `./turn.ts`.
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
import type { OpenAiBackendConfig } from './schema.js';
import { BackendConfigError, type AgentBackend, type BackendContext } from '../backend.js';
import { chatCompletionsUrl } from './request.js';
import { createChatDispatcher } from './transport.js';
import { runOpenAiTurn, type OpenAiSettings } from './turn.js';

export type { OpenAiBackendConfig } from './schema.js';
export { OpenAiTurnError, cleanServerMessage, MAX_SERVER_MESSAGE_CHARS } from './errors.js';
export type { OpenAiFailureCode } from './errors.js';
export {
  buildChatMessages,
  buildChatRequest,
  chatCompletionsUrl,
  historyMessages,
  toolDefinitions,
} from './request.js';
export type {
  ChatCompletionRequest,
  ChatMessage,
  ChatRequestOptions,
  ChatTool,
  ChatToolCall,
  ToolCallMessage,
  ToolResultMessage,
  TranscriptMessage,
} from './request.js';
export { CONTINUATION_KIND, MAX_CONTINUATION_BYTES, buildContinuation, readContinuation } from './continuation.js';
export type { ResumePoint, ToolLoopContinuation } from './continuation.js';
export { DEFAULT_MAX_TOOL_ROUNDS } from './tool-calls.js';
export { ARGUMENTS_NOT_JSON, CALL_WITHOUT_NAME, USING_TOOLS_NOTE } from './turn.js';
export { ChatStreamDecoder, readCompletionAnswer, readStreamData, serverErrorMessage } from './stream.js';
export type { CompletionEvent } from './stream.js';
export { SseDataDecoder } from './sse.js';

/**
 * Creates the backend (kind `openai`) for one configured endpoint. Throws a
 * {@link BackendConfigError} when `baseUrl` is not a URL or carries credentials (`user:pass@`;
 * the key belongs in `apiKey`, which is sent to that origin only).
 *
 * Each turn yields a `text` event per content delta as it arrives (with tools: the final answer's
 * text once that answer is over, after a `working` note), then an empty `text` with `last: true`
 * (when there was any text) and `completed`; or `failed` with a reason free of secrets (HTTP
 * status, the server's redacted error message, a timeout, a redirect, a tool budget, …); or
 * `propose-action` when a tool call waits for the person. A canceled turn aborts the upstream
 * request (and stops waiting for a running tool call) at once and ends with no event. `close()`
 * closes the kept-alive connections.
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
    run: (turn) => runOpenAiTurn(turn, settings),
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
