/**
 * The configuration schema (YAML). Everything is off until configured: no agent is
 * published and no client is admitted unless the file says so.
 *
 * @example
 * ```yaml
 * server: { port: 41241, defaultAgent: echo }
 * agents:
 *   - slug: echo
 *     name: Echo
 *     description: Repeats what you say.
 *     backend: { type: echo }
 * clients:
 *   - id: demo
 *     token: { env: AIRLOCK_DEMO_TOKEN, file: .airlock/demo-token, generate: true }
 *     agents: [echo]
 * ```
 */
import Type, { type Static } from 'typebox';

const Slug = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' });
const Identifier = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' });
const ShortText = Type.String({ minLength: 1, maxLength: 200 });
const LongText = Type.String({ minLength: 1, maxLength: 4000 });

const Skill = Type.Object(
  {
    id: Identifier,
    name: ShortText,
    description: LongText,
    tags: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32, default: [] }),
    examples: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 32 })),
  },
  { additionalProperties: false },
);

const Backend = Type.Union([
  Type.Object({ type: Type.Literal('echo') }, { additionalProperties: false }),
  Type.Object(
    { type: Type.Literal('writer'), chunkDelayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })) },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('conformance'),
      resubscribeHoldMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    },
    { additionalProperties: false },
  ),
]);

const Agent = Type.Object(
  {
    slug: Slug,
    name: ShortText,
    description: LongText,
    version: Type.String({ minLength: 1, maxLength: 64, default: '1.0.0' }),
    provider: Type.Optional(
      Type.Object(
        { organization: ShortText, url: Type.String({ pattern: '^https?://\\S+$', maxLength: 2000 }) },
        { additionalProperties: false },
      ),
    ),
    documentationUrl: Type.Optional(Type.String({ pattern: '^https?://\\S+$', maxLength: 2000 })),
    skills: Type.Array(Skill, { minItems: 1, maxItems: 100 }),
    backend: Backend,
    /** Served by GetExtendedAgentCard to authenticated callers; absent → -32007. */
    extendedCard: Type.Optional(
      Type.Object(
        {
          description: Type.Optional(LongText),
          skills: Type.Optional(Type.Array(Skill, { minItems: 1, maxItems: 100 })),
        },
        { additionalProperties: false },
      ),
    ),
    /**
     * Admit callers with no credentials when they connect from loopback. For local tools and
     * conformance kits only; never on by default.
     */
    anonymousLoopback: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

/** A token: inline (usually `${VAR}`), or from the environment / a file, optionally generated. */
const TokenSource = Type.Union([
  Type.String(),
  Type.Object(
    {
      env: Type.Optional(Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$' })),
      file: Type.Optional(Type.String({ minLength: 1 })),
      generate: Type.Boolean({ default: false }),
    },
    { additionalProperties: false },
  ),
]);

const Client = Type.Object(
  {
    id: Identifier,
    token: TokenSource,
    agents: Type.Array(Slug, { minItems: 1, maxItems: 1000 }),
  },
  { additionalProperties: false },
);

const Server = Type.Object(
  {
    host: Type.String({ default: '127.0.0.1', minLength: 1 }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 41241 }),
    /** The URL put on cards, e.g. the https URL of a reverse proxy in front of Airlock. */
    publicUrl: Type.Optional(Type.String({ pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$' })),
    basePath: Type.String({ pattern: '^(/[a-z0-9_-]+)+$', default: '/a2a' }),
    /** Its card is also served at /.well-known/agent-card.json. */
    defaultAgent: Type.Optional(Slug),
    /** Request bodies above this are refused with 413 while they are read. */
    maxBodyBytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024 }),
  },
  { additionalProperties: false },
);

const Store = Type.Object(
  {
    type: Type.Literal('memory', { default: 'memory' }),
    maxTasks: Type.Integer({ minimum: 1, maximum: 10_000_000, default: 10_000 }),
    taskTtlMinutes: Type.Number({ exclusiveMinimum: 0, maximum: 525_600, default: 60 }),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    server: Type.Optional(Server),
    store: Type.Optional(Store),
    agents: Type.Array(Agent, { minItems: 1, maxItems: 1000 }),
    clients: Type.Array(Client, { default: [], maxItems: 100_000 }),
  },
  { additionalProperties: false },
);

export type RawConfig = Static<typeof ConfigSchema>;
export type AgentConfig = Static<typeof Agent>;
export type ClientConfig = Static<typeof Client>;
export type TokenSourceConfig = Static<typeof TokenSource>;
export type BackendConfigRaw = Static<typeof Backend>;
export const ServerSchema = Server;
export const StoreSchema = Store;
