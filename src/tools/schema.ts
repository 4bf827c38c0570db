/**
 * The `tools` config section's schema (TypeBox). Only the config check loads it, in its own
 * worker thread (config/off-thread.ts): the serving process imports the types alone.
 */
import Type, { type Static } from 'typebox';

/** A tool server's name: lower-case letters, digits, `_` and `-`. */
const ServerName = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$' });
const EnvName = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' });
/** A tool's name as its server lists it (MCP allows `[A-Za-z0-9_.-]`, 1–128). */
const ServerToolName = '^[A-Za-z0-9_.-]{1,128}$';

const Level = Type.Union([Type.Literal('L1'), Type.Literal('L2'), Type.Literal('L3'), Type.Literal('L4')]);

/**
 * A tool server run as a program over stdio: an argument list, never a shell.
 *
 * @example
 * ```ts
 * const stdio: StdioToolServerConfig = { command: 'node', args: ['server.js'], passEnv: ['HOME'] };
 * ```
 */
const Stdio = Type.Object(
  {
    /** A path (relative to the working directory) or a program name looked up in PATH at startup. */
    command: Type.String({ minLength: 1, maxLength: 4096 }),
    args: Type.Array(Type.String({ maxLength: 32_768 }), { maxItems: 256, default: [] }),
    /** The only variables the program sees, copied from Airlock's environment when set. */
    passEnv: Type.Array(EnvName, { maxItems: 256, default: [] }),
    cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  },
  { additionalProperties: false },
);

/**
 * A tool server over Streamable HTTP, reached through the guarded outbound transport.
 *
 * @example
 * ```ts
 * const http: HttpToolServerConfig = { url: 'https://tools.example/mcp', privateNetwork: false };
 * ```
 */
const Http = Type.Object(
  {
    /** https, or http to a loopback host only. */
    url: Type.String({ minLength: 1, maxLength: 2000 }),
    /** A bearer token: `${AIRLOCK_SECRET_…}` and nothing else (checked before interpolation). */
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 8192 })),
    /** The server is on a private network: it must also be in AIRLOCK_PRIVATE_ALLOW. */
    privateNetwork: Type.Boolean({ default: false }),
    /** Bytes of one response, counted while reading. */
    maxResponseBytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 4 * 1024 * 1024 }),
  },
  { additionalProperties: false },
);

const ToolEntry = Type.Object(
  {
    /** The rung of the autonomy ladder: L1/L2 run at once, L3/L4 wait for the person. */
    level: Level,
    /** What the model is told the tool does, instead of the server's own description. */
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
  },
  { additionalProperties: false },
);

const Server = Type.Object(
  {
    name: ServerName,
    stdio: Type.Optional(Stdio),
    http: Type.Optional(Http),
    /** A server that fails at boot is logged and its tools refused, instead of stopping serve. */
    optional: Type.Boolean({ default: false }),
    /** One call (and the connection at boot); then the call is refused. */
    timeoutSeconds: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
    /** Hold the server's tool list to this digest (`sha256:…`, as `airlock tools list` shows) instead of pinning on first use. */
    pin: Type.Optional(Type.String({ pattern: '^(sha256:)?[0-9a-fA-F]{64}$' })),
    /** The tools this gateway exposes, by the server's name for them; a tool not listed is never offered. */
    tools: Type.Record(Type.String({ pattern: ServerToolName }), ToolEntry, { default: {} }),
  },
  { additionalProperties: false },
);

/**
 * The `tools` section's schema.
 *
 * @example
 * ```ts
 * const tools = Value.Default(ToolsSchema, { servers: [] }) as ToolsConfig;
 * ```
 */
export const ToolsSchema = Type.Object(
  {
    servers: Type.Array(Server, { maxItems: 64, default: [] }),
    /** Tool calls one turn may make (approved actions included); then the call is over budget. */
    maxCallsPerTurn: Type.Integer({ minimum: 1, maximum: 1000, default: 16 }),
    /** Characters of one tool result handed to the model; a longer one is cut and says so. */
    maxResultChars: Type.Integer({ minimum: 256, maximum: 1_000_000, default: 16_000 }),
    /** Where tool pins are kept (first use or `airlock tools pin`). */
    pins: Type.String({ minLength: 1, maxLength: 4096, default: '.airlock/tool-pins.json' }),
  },
  { additionalProperties: false },
);

/**
 * The `tools` section as validated (defaults applied).
 *
 * @example
 * ```ts
 * function servers(tools: ToolsConfig): string[] { return tools.servers.map((server) => server.name); }
 * ```
 */
export type ToolsConfig = Static<typeof ToolsSchema>;
/**
 * One configured tool server.
 *
 * @example
 * ```ts
 * const server: ToolServerConfig = tools.servers[0]!;
 * ```
 */
export type ToolServerConfig = ToolsConfig['servers'][number];
/**
 * A stdio server's program.
 *
 * @example
 * ```ts
 * const stdio: StdioToolServerConfig | undefined = server.stdio;
 * ```
 */
export type StdioToolServerConfig = Static<typeof Stdio>;
/**
 * An HTTP server's address and credentials.
 *
 * @example
 * ```ts
 * const http: HttpToolServerConfig | undefined = server.http;
 * ```
 */
export type HttpToolServerConfig = Static<typeof Http>;
