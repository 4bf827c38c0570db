/**
 * The `openai` backend's config schema: what an agent's `backend:` section may say for an
 * OpenAI-compatible `/chat/completions` endpoint. Owned here, next to the backend that reads it;
 * `src/config/schema.ts` composes it into the whole config schema.
 *
 * @example
 * ```yaml
 * backend: { type: openai, baseUrl: http://127.0.0.1:11434/v1, model: llama3.2 }
 * ```
 */
import Type, { type Static } from 'typebox';
import { DEFAULT_MAX_TOOL_ROUNDS } from './tool-calls.js';

const Milliseconds = (fallback: number): ReturnType<typeof Type.Integer> =>
  Type.Integer({ minimum: 100, maximum: 3_600_000, default: fallback });

/**
 * An OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama, llama.cpp's server, vLLM, …).
 *
 * @example
 * ```ts
 * const withDefaults = Value.Default(OpenAiBackendSchema, { type: 'openai', baseUrl, model: 'gpt-4o-mini' });
 * ```
 */
export const OpenAiBackendSchema = Type.Object(
  {
    type: Type.Literal('openai'),
    /** The API base, e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended. */
    baseUrl: Type.String({ pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$', maxLength: 2000 }),
    model: Type.String({ minLength: 1, maxLength: 256 }),
    /** Sent as `Authorization: Bearer …` to `baseUrl`'s origin only; usually `${VAR}`. Scrubbed from replies. */
    apiKey: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** The operator's instruction; Airlock's untrusted-input note is always added after it. */
    systemPrompt: Type.Optional(Type.String({ minLength: 1, maxLength: 32_000 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    /** Earlier turns of the session sent with each request (newest kept). */
    history: Type.Object(
      {
        maxTurns: Type.Integer({ minimum: 0, maximum: 100, default: 10 }),
        maxChars: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 16_000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    timeouts: Type.Object(
      {
        connectMs: Milliseconds(5_000),
        firstTokenMs: Milliseconds(60_000),
        totalMs: Milliseconds(300_000),
      },
      { additionalProperties: false, default: {} },
    ),
    /** Bytes read from the endpoint per turn. */
    maxResponseBytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 4 * 1024 * 1024 }),
    /**
     * Answers with tool calls the model may give in one turn (the tool loop's rounds); one more
     * fails the turn. Only matters when the agent has tools.
     */
    maxToolRounds: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: DEFAULT_MAX_TOOL_ROUNDS })),
  },
  { additionalProperties: false },
);

/**
 * An `openai` backend's config as validated (defaults applied).
 *
 * @example
 * ```ts
 * const backend = createOpenAiBackend(config satisfies OpenAiBackendConfig);
 * ```
 */
export type OpenAiBackendConfig = Static<typeof OpenAiBackendSchema>;
