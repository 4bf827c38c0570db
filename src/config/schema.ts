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
import { CommandBackendSchema } from '../agents/command/schema.js';
import { ModuleBackendSchema } from '../agents/module/schema.js';
import { OpenAiBackendSchema } from '../agents/openai/schema.js';
import { UpstreamBackendSchema } from '../agents/upstream/schema.js';
import { ToolsSchema } from '../tools/schema.js';
import { PushSchema } from '../push/schema.js';
import { TelemetrySchema } from '../telemetry/schema.js';
import { AgentExtensionsSchema } from './extensions-schema.js';
import { MetricsSchema } from './metrics-schema.js';

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
  OpenAiBackendSchema,
  CommandBackendSchema,
  ModuleBackendSchema,
  UpstreamBackendSchema,
]);

/** A rung of the autonomy ladder (src/approvals/ladder.ts): L1, L2 read-only; L3, L4 acting. */
const AutonomyLevel = Type.Union([Type.Literal('L1'), Type.Literal('L2'), Type.Literal('L3'), Type.Literal('L4')]);

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
    /** A2A extensions the card declares (`capabilities.extensions`); see config/extensions.ts. */
    extensions: Type.Optional(AgentExtensionsSchema),
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
    /**
     * Give the backend tools at all. Off by default: a model-only reply. When on, the backend
     * gets only the tools in `tools.allow` (`server.tool`, each levelled in `tools.servers`),
     * and never the outbound A2A tools.
     */
    allowTools: Type.Boolean({ default: false }),
    tools: Type.Optional(
      Type.Object(
        { allow: Type.Array(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,128}$' }), { maxItems: 256, default: [] }) },
        { additionalProperties: false },
      ),
    ),
    /**
     * Guarded actions this agent's backend may propose: up to `maxLevel` (default L2, read-only).
     * L3 and L4 need `approvals` and a person to approve each one. `onDenied`: what a denied or
     * expired action does to the turn of a backend that kept a continuation (a model's tool
     * loop): `fail` the task (the default), or `continue` the turn with the refusal as the
     * tool's result.
     */
    actions: Type.Optional(
      Type.Object(
        {
          maxLevel: AutonomyLevel,
          onDenied: Type.Optional(Type.Union([Type.Literal('fail'), Type.Literal('continue')])),
        },
        { additionalProperties: false },
      ),
    ),
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
    /**
     * The person who decides this client's guarded actions (an `approvals.people` id). Without
     * an owner, an action proposed on this client's task is refused: nobody could approve it.
     */
    owner: Type.Optional(Identifier),
    /**
     * The TLS client certificate that names this client (`server.tls.clientCertificates`): its
     * exact subject and/or SHA-256 fingerprint (both must match when both are given).
     */
    certificate: Type.Optional(
      Type.Object(
        {
          /** The subject, `CN=ci-bot` or `O=Acme, CN=ci-bot` (every attribute, any order). */
          subject: Type.Optional(Type.String({ minLength: 3, maxLength: 1024 })),
          /** `AB:CD:…` (32 bytes in hex; colons optional, any case). */
          fingerprint256: Type.Optional(Type.String({ pattern: '^([0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}$' })),
          /** The certificate alone authenticates, without the token. */
          alone: Type.Boolean({ default: false }),
          /** The token is refused unless it comes with this certificate. */
          required: Type.Boolean({ default: false }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * Human approvals of guarded actions. Off unless this section is present: without it, any
 * acting proposal (L3, L4) fails its task.
 */
const Approvals = Type.Object(
  {
    /** How long a proposed action waits for its decision (and an approval for its use). */
    ttlMinutes: Type.Number({ exclusiveMinimum: 0, maximum: 10_080, default: 30 }),
    /** Cap for service principals; clamped to L2 (a service has nobody to approve for it). */
    serviceMaxLevel: Type.Union([Type.Literal('L1'), Type.Literal('L2')], { default: 'L2' }),
    /** Most actions awaiting a decision at once, all principals together. */
    maxPending: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
    /** Most actions and questions awaiting a person at once for one principal (over all agents); over it the proposal is refused. */
    maxPendingPerPrincipal: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 100 }),
    /** Serve the web console at /console (sign-in with the person's own token or JWT). */
    console: Type.Boolean({ default: false }),
    /**
     * People who decide for token clients (`clients[].owner`), each with their own token.
     * A person's token is never a client token: it cannot call agents, and no client token
     * can decide. People behind JWT principals sign in with their own JWT instead.
     */
    people: Type.Array(Type.Object({ id: Identifier, token: TokenSource }, { additionalProperties: false }), {
      default: [],
      maxItems: 10_000,
    }),
    /**
     * Which JWTs of `auth.jwt` are a person's own sign-in, not a machine's: a `sub` alone is
     * not a person (a client-credentials token of another client can carry `sub: alice`). A
     * person's JWT has no `act`, lists `requiredScope` in its `scope` (or `scp`) claim and,
     * when `allowedAzp` is set, names one of those clients in `azp` (or `client_id`). Other
     * valid JWTs are refused on the approvals routes (403 `not_a_person`). A JWT person's id
     * is `jwt:<issuer>#<sub>`. Defaults apply when absent (marker scope `airlock:person`).
     */
    persons: Type.Optional(
      Type.Object(
        {
          /** The issuer whose tokens name people; must be `auth.jwt.issuer` (the only one verified). */
          issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
          /** The scope entry that marks a person's token; never an agent grant (`agentsPrefix` + slug). */
          requiredScope: Type.String({ minLength: 1, maxLength: 256, pattern: '^\\S+$', default: 'airlock:person' }),
          /** Clients (`azp` / `client_id`) people sign in through; any when unset. */
          allowedAzp: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 100 }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
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
    /** Callers from addresses other than loopback get 403 unless this is on. */
    allowNonLoopback: Type.Boolean({ default: false }),
    /**
     * `allowNonLoopback` without `tls` is refused unless this is on: plain HTTP beyond loopback,
     * for a TLS-terminating proxy on a trusted network hop.
     */
    allowInsecureNetwork: Type.Boolean({ default: false }),
    /** Serve HTTPS (TLS 1.2+) with these PEM files, reloaded when they change. */
    tls: Type.Optional(
      Type.Object(
        {
          cert: Type.String({ minLength: 1, maxLength: 4096 }),
          key: Type.String({ minLength: 1, maxLength: 4096 }),
          /** The CA(s) that client certificates must chain to. */
          ca: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
          /** `request`: verified ones may name a client; `require`: no handshake without one. */
          clientCertificates: Type.Union([Type.Literal('off'), Type.Literal('request'), Type.Literal('require')], {
            default: 'off',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    /**
     * This gateway's id in the hop chain of relayed calls (loop detection). Random per process
     * by default; give the replicas of one deployment the same one.
     */
    instanceId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{8,64}$' })),
    /** Proxies (IPs or CIDRs) whose `X-Forwarded-For` is believed; nobody's by default. */
    trustedProxies: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 256, default: [] }),
    /**
     * Web origins (`scheme://host[:port]`, exactly as a browser sends `Origin`) whose requests the
     * A2A routes admit; a request with any other `Origin` is refused (403). None by default.
     */
    allowedOrigins: Type.Array(Type.String({ pattern: '^https?://[^/?#@\\s]+$', maxLength: 256 }), {
      maxItems: 64,
      default: [],
    }),
    /** Also accept a client token in `X-API-Key` (Authorization wins when both are sent). */
    apiKeyHeader: Type.Boolean({ default: false }),
    /** Cards (and openapi.json) need no credentials; `false` puts them behind auth too. */
    publicCard: Type.Boolean({ default: true }),
    /** Adds `POST {basePath}/{slug}/ask` and `GET {basePath}/{slug}/openapi.json` per agent. */
    rest: Type.Boolean({ default: false }),
    /**
     * The A2A HTTP+JSON binding (v1.0 §11) beside JSON-RPC on every agent (`POST …/message:send`,
     * `GET …/tasks/{id}`, …), listed on the cards. On by default; `false` serves JSON-RPC only.
     */
    httpJson: Type.Boolean({ default: true }),
    /** A client that has not sent its request headers in this time is cut off. */
    headersTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
    /** A request body must arrive whole within this time (slow senders are cut off). */
    bodyTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
    /** On SIGTERM: new turns are refused at once, running ones get this long to finish. */
    drainSeconds: Type.Integer({ minimum: 0, maximum: 3_600, default: 25 }),
  },
  { additionalProperties: false },
);

/** How long tasks are kept: the same two keys for every store (defaults applied by the loader). */
const Retention = {
  /** Most tasks kept; the oldest finished ones go first. Default 10 000. */
  maxTasks: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  /** A task not updated for this long is dropped. Default 60. */
  taskTtlMinutes: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 525_600 })),
  /** A task parked on input or auth and not updated for this long fails, saying why. Default 30. */
  parkedTtlMinutes: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 525_600 })),
};

/**
 * Where tasks live: `memory` (the default; lost on restart), `sqlite` (one durable process; also
 * `airlock serve --data DIR`), or `postgres` (durable, shared by replicas; also `DATABASE_URL`).
 */
const Store = Type.Union([
  Type.Object(
    {
      type: Type.Literal('memory'),
      ...Retention,
      /** Bytes of tasks held (their approximate JSON size); the oldest finished ones go first. Default 128 MiB. */
      maxBytes: Type.Optional(Type.Integer({ minimum: 1024 * 1024, maximum: 64 * 1024 * 1024 * 1024 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('sqlite'),
      path: Type.String({ minLength: 1, maxLength: 4096 }),
      /** `full` (default): a task is on disk before the caller hears of it; `normal` is faster. */
      synchronous: Type.Optional(Type.Union([Type.Literal('full'), Type.Literal('normal')])),
      ...Retention,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('postgres'),
      /** Usually `${DATABASE_URL}`. Never printed with its password. */
      url: Type.String({ pattern: '^postgres(ql)?://\\S+$', maxLength: 4096 }),
      schema: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
      poolSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      statementTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
      connectTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
      /** VACUUM the tasks table after this many rows written or deleted (0: autovacuum only). Default 20 000. */
      vacuumAfterRows: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
      /**
       * With several replicas: a running turn's lease lapses this long after its replica stopped
       * renewing it, and another replica fails the task. Default 30.
       */
      leaseSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600 })),
      ...Retention,
    },
    { additionalProperties: false },
  ),
]);

/** Per-principal and global limits; every one has a safe default. */
const Limits = Type.Object(
  {
    /** Per principal, over a sliding minute; over it → 429 with Retry-After. */
    requestsPerMinute: Type.Integer({ minimum: 1, maximum: 1_000_000_000, default: 600 }),
    /** Failed authentications per address per minute before that address gets 429 for the rest of the minute. */
    authFailuresPerMinute: Type.Integer({ minimum: 1, maximum: 10_000, default: 10 }),
    /** Gateways a relayed request may have passed (its hop chain) before this one refuses it. */
    maxHops: Type.Integer({ minimum: 1, maximum: 16, default: 4 }),
    /** Deepest JSON nesting accepted in a request body (arrays and objects). */
    maxJsonDepth: Type.Integer({ minimum: 4, maximum: 256, default: 32 }),
    /** Parts in one inbound message. */
    maxParts: Type.Integer({ minimum: 1, maximum: 1000, default: 16 }),
    /** Characters of text in one inbound message (all parts together). */
    maxInputChars: Type.Integer({ minimum: 1, maximum: 10_000_000, default: 8192 }),
    /**
     * Bytes of caller-supplied fields stored with one inbound message besides its text: the
     * JSON size of `message.metadata` and every part's `metadata`, plus `extensions`,
     * `referenceTaskIds` and the parts' `filename`/`mediaType`. Over it → -32602.
     */
    maxMetadataBytes: Type.Integer({ minimum: 0, maximum: 64 * 1024 * 1024, default: 4096 }),
    /** Object keys plus array items in those metadata values, all together. Over it → -32602. */
    maxMetadataKeys: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 128 }),
    /** Nesting of one metadata value (the object itself is depth 1). Over it → -32602. */
    maxMetadataDepth: Type.Integer({ minimum: 1, maximum: 256, default: 8 }),
    /** Messages kept in one task's history; the oldest are dropped first (a long multi-turn task). */
    maxHistoryMessages: Type.Integer({ minimum: 2, maximum: 1_000_000, default: 100 }),
    /**
     * Bytes a backend may make one task keep: its artifacts and streamed reply, and its status
     * messages, over all the task's turns. The turn that passes it fails, saying so.
     */
    maxTaskOutputBytes: Type.Integer({ minimum: 1024, maximum: 1024 * 1024 * 1024, default: 1024 * 1024 }),
    /** Tasks running at once, all callers together; over it → 503 with Retry-After. */
    maxConcurrentTasks: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 256 }),
    /** Tasks running at once for one principal; over it → 503 with Retry-After. */
    maxConcurrentTasksPerPrincipal: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 16 }),
    /**
     * Tasks one principal keeps in the store at once, over all agents; over it its own oldest
     * finished task goes, and with none its new task is refused (503, Retry-After).
     */
    maxTasksPerPrincipal: Type.Integer({ minimum: 1, maximum: 10_000_000, default: 1000 }),
    /** Tasks one principal has parked on input or auth at once; over it its new task is refused (503, Retry-After). */
    maxParkedTasksPerPrincipal: Type.Integer({ minimum: 1, maximum: 10_000_000, default: 100 }),
    /** SSE streams open at once (SendStreamingMessage, SubscribeToTask), all callers together, in this process; over it → 503. */
    maxStreams: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000 }),
    /** SSE streams open at once for one principal, in this process; over it → 503 with Retry-After. */
    maxStreamsPerPrincipal: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 16 }),
  },
  { additionalProperties: false },
);

/**
 * JWT bearer tokens from an identity provider. Keys come from exactly one of a local JWKS file,
 * a PEM public key file, or a JWKS URL fetched through the guarded outbound client (and
 * refreshed in the background).
 */
const Jwt = Type.Object(
  {
    issuer: Type.String({ minLength: 1, maxLength: 2000 }),
    audience: Type.String({ minLength: 1, maxLength: 2000 }),
    algorithms: Type.Array(
      Type.Union([
        Type.Literal('RS256'),
        Type.Literal('RS384'),
        Type.Literal('RS512'),
        Type.Literal('PS256'),
        Type.Literal('PS384'),
        Type.Literal('PS512'),
        Type.Literal('ES256'),
        Type.Literal('ES384'),
        Type.Literal('ES512'),
        Type.Literal('EdDSA'),
      ]),
      { minItems: 1, maxItems: 10, default: ['RS256', 'ES256', 'EdDSA'] },
    ),
    jwksFile: Type.Optional(Type.String({ minLength: 1 })),
    publicKeyFile: Type.Optional(Type.String({ minLength: 1 })),
    /** https (or plain http to loopback) URL of the issuer's JWKS, fetched through the guarded client. */
    jwksUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    /** How often the JWKS URL is fetched again; only with jwksUrl (600 when unset). */
    jwksRefreshSeconds: Type.Optional(Type.Integer({ minimum: 30, maximum: 86_400 })),
    /** The JWKS host is on a private network (it must also be in AIRLOCK_PRIVATE_ALLOW); only with jwksUrl. */
    jwksPrivateNetwork: Type.Optional(Type.Boolean()),
    /**
     * The claim that lists the agents a token may call: a space-separated string or an array.
     * An entry grants agent `<slug>` when it equals `agentsPrefix + slug`.
     */
    agentsClaim: Type.String({ minLength: 1, maxLength: 128, default: 'scope' }),
    agentsPrefix: Type.String({ maxLength: 64, default: 'a2a:' }),
    clockToleranceSeconds: Type.Integer({ minimum: 0, maximum: 300, default: 30 }),
  },
  { additionalProperties: false },
);

const Auth = Type.Object({ jwt: Type.Optional(Jwt) }, { additionalProperties: false });

/** A secret whose value must never leave in a reply: inline (usually `${VAR}`) or an env variable. */
const ScrubSecret = Type.Union([
  // Shorter values would match ordinary words: the scrubber ignores them, so they are refused here.
  Type.String({ minLength: 8 }),
  Type.Object({ env: Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$' }) }, { additionalProperties: false }),
]);

const Content = Type.Object(
  {
    /** Values replaced in every reply, e.g. the backend's own API key: `${VAR}` or `{ env: NAME }`. */
    scrubSecrets: Type.Array(ScrubSecret, { maxItems: 1000, default: [] }),
  },
  { additionalProperties: false },
);

const Audit = Type.Object(
  {
    /** A hash-chained JSONL file: each loop turn's rows in one write, no answer sent before its rows are on file; `airlock audit verify FILE` checks it. */
    file: Type.Optional(Type.String({ minLength: 1 })),
    /** The same rows on stdout (for containers). */
    stdout: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

/**
 * Card signing: with keys configured, every card the gateway serves (each shape, and the
 * extended card) carries one signature per key, and `/.well-known/jwks.json` publishes the
 * public keys. Several keys sign at once while one is being rotated in or out.
 */
const Signing = Type.Object(
  {
    /** Private JWK files (`airlock keys generate`), mode 0600; each signs every card. */
    keys: Type.Array(
      Type.Object({ file: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
      {
        minItems: 1,
        maxItems: 4,
      },
    ),
    /** The JWK Set served at /.well-known/jwks.json; it must hold every signing key. Default: the keys' public halves. */
    jwksFile: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** Put a `jku` in each signature header: `true` for `{server.publicUrl}/.well-known/jwks.json`, or an https URL. */
    jku: Type.Optional(Type.Union([Type.Boolean(), Type.String({ minLength: 1, maxLength: 2000 })])),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    server: Type.Optional(Server),
    store: Type.Optional(Store),
    /**
     * How many Airlock processes serve this config behind one load balancer. Above 1 the memory
     * store is refused (each replica would hold its own tasks); AIRLOCK_MULTI_REPLICA=1 says the same.
     */
    replicas: Type.Integer({ minimum: 1, maximum: 1000, default: 1 }),
    /** Shared limits and task events across replicas go through Redis when set (else PostgreSQL). */
    redis: Type.Optional(
      Type.Object(
        { url: Type.String({ pattern: '^rediss?://\\S+$', maxLength: 4096 }) },
        { additionalProperties: false },
      ),
    ),
    limits: Type.Optional(Limits),
    auth: Type.Optional(Auth),
    content: Type.Optional(Content),
    audit: Type.Optional(Audit),
    signing: Type.Optional(Signing),
    approvals: Type.Optional(Approvals),
    /** Where `a2a` backends find their upstream agents: an outbound registry file (docs/OUTBOUND.md). */
    upstreams: Type.Optional(
      Type.Object(
        {
          registry: Type.String({ minLength: 1, maxLength: 4096 }),
          /** Card pins of upstream entries (TOFU or `airlock registry pin`). */
          pins: Type.String({ minLength: 1, maxLength: 4096, default: '.airlock/pins.json' }),
        },
        { additionalProperties: false },
      ),
    ),
    /** MCP tool servers and the tools agents may use through them (docs/TOOLS.md). */
    tools: Type.Optional(ToolsSchema),
    /** Push notifications (webhooks); off unless `enabled` (docs/CONFIGURATION.md, "push"). */
    push: Type.Optional(PushSchema),
    /** Prometheus metrics on a listener of their own; off unless present (docs/CONFIGURATION.md, "metrics"). */
    metrics: Type.Optional(MetricsSchema),
    /** Trace export over OTLP/HTTP; off unless present or OTEL_EXPORTER_OTLP_*ENDPOINT is set (docs/OPERATIONS.md, "Tracing"). */
    telemetry: Type.Optional(TelemetrySchema),
    agents: Type.Array(Agent, { minItems: 1, maxItems: 1000 }),
    clients: Type.Array(Client, { default: [], maxItems: 100_000 }),
  },
  { additionalProperties: false },
);

export type RawConfig = Static<typeof ConfigSchema>;
export type AgentConfig = Static<typeof Agent>;
export type ClientConfig = Static<typeof Client>;
export type ServerTlsConfig = NonNullable<Static<typeof Server>['tls']>;
export type TokenSourceConfig = Static<typeof TokenSource>;
export type BackendConfigRaw = Static<typeof Backend>;
export type { OpenAiBackendConfig } from '../agents/openai/schema.js';
export type { CommandBackendConfig } from '../agents/command/schema.js';
export type { ModuleBackendConfig } from '../agents/module/schema.js';
export type { UpstreamBackendConfig } from '../agents/upstream/schema.js';
export type { ToolsConfig, ToolServerConfig } from '../tools/config.js';
export type { PushSettings } from '../push/config.js';
export type UpstreamsConfig = Static<typeof ConfigSchema>['upstreams'];
export type LimitsConfig = Static<typeof Limits>;
export type JwtConfig = Static<typeof Jwt>;
export type AuditConfig = Static<typeof Audit>;
export type SigningConfig = Static<typeof Signing>;
export type ApprovalsConfig = Static<typeof Approvals>;
export type ScrubSecretConfig = Static<typeof ScrubSecret>;
export const ServerSchema = Server;
export const LimitsSchema = Limits;
export const ContentSchema = Content;
export const AuditSchema = Audit;
export const StoreSchema = Store;
