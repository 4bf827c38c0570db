/**
 * What Airlock sends an OpenAI-compatible endpoint for one turn: the messages array and the
 * request body. The caller's text never goes out as it came: the current message and every
 * earlier user entry are framed as untrusted content (`buildInboundPrompt(…).user`), and the
 * system message always ends with Airlock's untrusted-input note, after the operator's prompt.
 *
 * Tools are offered only when the turn's toolbox has offers, and then exactly those
 * ({@link toolDefinitions}); the tool loop (`./loop.ts`) adds the model's tool calls and the
 * toolbox's results to the conversation as `assistant` and `tool` messages.
 *
 * @example
 * ```ts
 * const messages = buildChatMessages(turn, { systemPrompt: 'You are terse.' }, history);
 * const body = buildChatRequest(config, messages);
 * // { model: 'llama3.2', messages: [system, …history, user], stream: true }
 * const withTools = buildChatRequest(config, messages, toolDefinitions(turn.tools.offers));
 * // { …, tools: [{ type: 'function', function: { name, description, parameters } }] }
 * ```
 */
import { textOf, type AgentTurn, type SessionEntry } from '../backend.js';
import { buildInboundPrompt } from '../inbound/prompt.js';
import type { ToolOffer } from '../tools.js';

/**
 * One plain message of a chat-completion request (the tool loop's own messages are
 * {@link ToolCallMessage} and {@link ToolResultMessage}).
 *
 * @example
 * ```ts
 * const note: ChatMessage = { role: 'system', content: 'You are terse.' };
 * ```
 */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/**
 * One tool call of the model, as it goes back in the conversation.
 *
 * @example
 * ```ts
 * const call: ChatToolCall = { id: 'call_1', type: 'function', function: { name: 'fs_read', arguments: '{"path":"a"}' } };
 * ```
 */
export interface ChatToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/**
 * The model's answer that asked for tools: its text (often none) and its calls.
 *
 * @example
 * ```ts
 * const asked: ToolCallMessage = { role: 'assistant', content: null, tool_calls: [call] };
 * ```
 */
export interface ToolCallMessage {
  readonly role: 'assistant';
  readonly content: string | null;
  readonly tool_calls: readonly ChatToolCall[];
}

/**
 * What one tool call came to: the toolbox's result text (already framed as untrusted, scrubbed
 * and capped) or why it did not run.
 *
 * @example
 * ```ts
 * const result: ToolResultMessage = { role: 'tool', tool_call_id: 'call_1', content: framedText };
 * ```
 */
export interface ToolResultMessage {
  readonly role: 'tool';
  readonly tool_call_id: string;
  readonly content: string;
}

/**
 * Any message of a turn's conversation with the model.
 *
 * @example
 * ```ts
 * const transcript: TranscriptMessage[] = [...buildChatMessages(turn, config, history), asked, result];
 * ```
 */
export type TranscriptMessage = ChatMessage | ToolCallMessage | ToolResultMessage;

/**
 * A function the model is offered (OpenAI's `tools` entry).
 *
 * @example
 * ```ts
 * const tool: ChatTool = { type: 'function', function: { name: 'fs_read', description: 'Reads a file', parameters: schema } };
 * ```
 */
export interface ChatTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: Readonly<Record<string, unknown>>;
  };
}

/**
 * The JSON body POSTed to `/chat/completions`. Carries `tools` only when the turn's toolbox
 * offers some, and then only those; never `functions` or `tool_choice`.
 *
 * @example
 * ```ts
 * const body: ChatCompletionRequest = { model: 'llama3.2', messages, stream: true, temperature: 0.2 };
 * ```
 */
export interface ChatCompletionRequest {
  readonly model: string;
  readonly messages: readonly TranscriptMessage[];
  readonly stream: true;
  readonly temperature?: number;
  readonly max_tokens?: number;
  readonly tools?: readonly ChatTool[];
}

/**
 * What {@link buildChatMessages} and {@link buildChatRequest} read from the backend's config.
 *
 * @example
 * ```ts
 * const options: ChatRequestOptions = { model: 'llama3.2', systemPrompt: 'Answer in French.', maxTokens: 512 };
 * ```
 */
export interface ChatRequestOptions {
  readonly model: string;
  readonly systemPrompt?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
}

/**
 * The messages for one turn, in order:
 *
 * 1. `system`: `systemPrompt` (when set), a blank line, then the turn's untrusted-input note;
 * 2. the session's earlier entries: user entries framed as untrusted, agent entries as `assistant`;
 * 3. `user`: the framed current message.
 *
 * When the turn carries no prompt (a turn built outside the gateway), one is built from the
 * message text, so the caller's raw text is never sent. Neighbouring messages of the same role
 * (an earlier question left unanswered) are joined by a blank line, because several chat
 * templates (Mistral's, Llama 2's) refuse a conversation whose roles do not alternate.
 *
 * @example
 * ```ts
 * buildChatMessages(turn, { model: 'm' }, [{ role: 'user', text: 'hi' }, { role: 'agent', text: 'hello' }]);
 * // [{ role: 'system', content: note }, { role: 'user', content: framed('hi') },
 * //  { role: 'assistant', content: 'hello' }, { role: 'user', content: framed(message) }]
 * ```
 */
export function buildChatMessages(
  turn: Pick<AgentTurn, 'prompt' | 'message'>,
  options: Pick<ChatRequestOptions, 'systemPrompt'>,
  history: readonly SessionEntry[] = [],
): ChatMessage[] {
  const prompt = turn.prompt ?? buildInboundPrompt(textOf(turn.message));
  const system =
    options.systemPrompt === undefined || options.systemPrompt.length === 0
      ? prompt.system
      : `${options.systemPrompt}\n\n${prompt.system}`;
  const conversation: ChatMessage[] = historyMessages(history);
  conversation.push({ role: 'user', content: prompt.user });
  return [{ role: 'system', content: system }, ...joinSameRole(conversation)];
}

/**
 * Session entries as chat messages: user text framed as untrusted (it is some caller's raw
 * text), agent text as `assistant` (our own earlier replies, already scrubbed by the gateway).
 *
 * @example
 * ```ts
 * historyMessages([{ role: 'agent', text: 'Three a day.' }]); // [{ role: 'assistant', content: 'Three a day.' }]
 * ```
 */
export function historyMessages(history: readonly SessionEntry[]): ChatMessage[] {
  return history.map((entry) =>
    entry.role === 'user'
      ? { role: 'user', content: buildInboundPrompt(entry.text).user }
      : { role: 'assistant', content: entry.text },
  );
}

/**
 * The request body: `stream: true` always, `temperature` and `max_tokens` only when configured,
 * `tools` only when `tools` is not empty.
 *
 * @example
 * ```ts
 * buildChatRequest({ model: 'llama3.2', maxTokens: 256 }, messages);
 * // { model: 'llama3.2', messages, stream: true, max_tokens: 256 }
 * ```
 */
export function buildChatRequest(
  options: ChatRequestOptions,
  messages: readonly TranscriptMessage[],
  tools: readonly ChatTool[] = [],
): ChatCompletionRequest {
  return {
    model: options.model,
    messages,
    stream: true,
    ...(options.temperature !== undefined && { temperature: options.temperature }),
    ...(options.maxTokens !== undefined && { max_tokens: options.maxTokens }),
    ...(tools.length > 0 && { tools }),
  };
}

/**
 * The toolbox's offers as OpenAI function tools, in order: the model-safe name, the description
 * and the input schema as `parameters`. Nothing else is ever offered.
 *
 * @example
 * ```ts
 * toolDefinitions([{ name: 'fs_read', description: 'Reads a file', inputSchema: { type: 'object' }, level: 'L1' }]);
 * // [{ type: 'function', function: { name: 'fs_read', description: 'Reads a file', parameters: { type: 'object' } } }]
 * ```
 */
export function toolDefinitions(offers: readonly ToolOffer[]): ChatTool[] {
  return offers.map((offer) => ({
    type: 'function',
    function: { name: offer.name, description: offer.description, parameters: offer.inputSchema },
  }));
}

/**
 * `${baseUrl}/chat/completions`, with the trailing slashes of `baseUrl` dropped.
 *
 * @example
 * ```ts
 * chatCompletionsUrl('http://127.0.0.1:11434/v1/').href; // 'http://127.0.0.1:11434/v1/chat/completions'
 * ```
 */
export function chatCompletionsUrl(baseUrl: string): URL {
  return new URL(`${baseUrl.replace(/\/+$/, '')}/chat/completions`);
}

function joinSameRole(messages: readonly ChatMessage[]): ChatMessage[] {
  const joined: ChatMessage[] = [];
  for (const message of messages) {
    const previous = joined[joined.length - 1];
    if (previous !== undefined && previous.role === message.role) {
      joined[joined.length - 1] = { role: message.role, content: `${previous.content}\n\n${message.content}` };
    } else {
      joined.push(message);
    }
  }
  return joined;
}
