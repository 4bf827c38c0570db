/**
 * The schema of `agents[].extensions` (TypeBox). Only the config check loads it, in its own
 * worker thread (off-thread.ts): the serving process imports the types alone.
 */
import Type, { type Static } from 'typebox';
import { MAX_AGENT_EXTENSIONS, MAX_URI_CHARS, type AgentExtensionConfig } from './extensions.js';

const AgentExtension = Type.Object(
  {
    uri: Type.String({ minLength: 1, maxLength: MAX_URI_CHARS }),
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    /** A caller must list it in `A2A-Extensions`, or its request is refused (-32008). */
    required: Type.Optional(Type.Boolean()),
    /** Extension-specific settings, shown on the card as they are. */
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

/**
 * The schema of `agents[].extensions`, composed into the agent schema.
 *
 * @example
 * ```ts
 * const Agent = Type.Object({ extensions: Type.Optional(AgentExtensionsSchema) });
 * ```
 */
export const AgentExtensionsSchema = Type.Array(AgentExtension, { maxItems: MAX_AGENT_EXTENSIONS });

// The loaded type is declared beside its checks (./extensions.ts, which the serving thread
// imports); this line fails the build when the schema and that type part ways.
const _inStep: [Static<typeof AgentExtension>, AgentExtensionConfig] extends [
  AgentExtensionConfig,
  Static<typeof AgentExtension>,
]
  ? true
  : never = true;
