/**
 * The `tools` section of the config: the MCP tool servers the gateway connects to, the level of
 * each tool it exposes, and the per-turn budgets. Owned here; `src/config/schema.ts` composes it
 * into the whole schema and the loader runs {@link toolsConfigProblem} (what a schema cannot say).
 *
 * @example
 * ```yaml
 * tools:
 *   maxCallsPerTurn: 16
 *   servers:
 *     - name: files
 *       stdio: { command: node, args: [./node_modules/@modelcontextprotocol/server-filesystem/dist/index.js, ./sandbox] }
 *       timeoutSeconds: 30
 *       tools:
 *         read_file: { level: L1 }
 *         write_file: { level: L4, description: Write a file in the sandbox. }
 * agents:
 *   - slug: helper
 *     allowTools: true
 *     tools: { allow: [files.read_file, files.write_file] }
 * ```
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

/**
 * What {@link toolsConfigProblem} needs of an agent (a config `AgentConfig` fits).
 *
 * @example
 * ```ts
 * const agent: ToolUsingAgent = { allowTools: true, tools: { allow: ['files.read_file'] }, backend: { type: 'openai' } };
 * ```
 */
export interface ToolUsingAgent {
  readonly allowTools: boolean;
  readonly tools?: { readonly allow: readonly string[] };
  readonly backend: { readonly type: string };
}

/**
 * A problem the loader reports as a `ConfigError`: the key and what is wrong.
 *
 * @example
 * ```ts
 * const problem: ToolsConfigProblem = { key: 'tools.servers[0]', problem: 'needs stdio or http' };
 * ```
 */
export interface ToolsConfigProblem {
  readonly key: string;
  readonly problem: string;
}

/** A secret reference: the whole value is one `${AIRLOCK_SECRET_…}`. */
const SECRET_REFERENCE = /^\$\{AIRLOCK_SECRET_[A-Z0-9_]{1,100}\}$/;

/**
 * Checks the raw (not yet interpolated) document's tool tokens: each `tools.servers[].http.token`
 * must be exactly `${AIRLOCK_SECRET_…}`, so a token never sits in the file and never comes from
 * an unrelated variable. Run before interpolation; the schema checks the rest.
 *
 * @example
 * ```ts
 * rawTokenProblem({ tools: { servers: [{ http: { token: 'abc' } }] } });
 * // { key: 'tools.servers[0].http.token', problem: 'must be ${AIRLOCK_SECRET_…} (…)' }
 * ```
 */
export function rawTokenProblem(document: Record<string, unknown>): ToolsConfigProblem | undefined {
  const tools = document.tools;
  if (!isRecord(tools) || !Array.isArray(tools.servers)) return undefined;
  for (const [index, server] of (tools.servers as unknown[]).entries()) {
    if (!isRecord(server) || !isRecord(server.http) || server.http.token === undefined) continue;
    const token = server.http.token;
    if (typeof token !== 'string' || !SECRET_REFERENCE.test(token)) {
      return {
        key: `tools.servers[${index}].http.token`,
        problem:
          'must be ${AIRLOCK_SECRET_…} (an environment variable in the AIRLOCK_SECRET_ namespace), never a value',
      };
    }
  }
  return undefined;
}

/**
 * What the schema cannot check: each server has exactly one of `stdio` and `http`, names are
 * unique, an agent's allow list names only levelled tools (`server.tool`), tools need a backend
 * that runs them through the guard (never `command`), and `allowTools` goes with an allow list.
 *
 * @example
 * ```ts
 * toolsConfigProblem(tools, [{ allowTools: true, tools: { allow: ['files.nope'] }, backend: { type: 'openai' } }]);
 * // { key: 'agents[0].tools.allow[0]', problem: '"files.nope" names no tool with a level in tools.servers' }
 * ```
 */
export function toolsConfigProblem(
  tools: ToolsConfig | undefined,
  agents: readonly ToolUsingAgent[],
): ToolsConfigProblem | undefined {
  const levelled = new Set<string>();
  const names = new Set<string>();
  for (const [index, server] of (tools?.servers ?? []).entries()) {
    const key = `tools.servers[${index}]`;
    if ((server.stdio === undefined) === (server.http === undefined)) {
      return { key, problem: 'needs exactly one of stdio and http' };
    }
    if (names.has(server.name)) return { key: `${key}.name`, problem: `"${server.name}" is used twice` };
    names.add(server.name);
    for (const tool of Object.keys(server.tools)) levelled.add(`${server.name}.${tool}`);
  }
  for (const [index, agent] of agents.entries()) {
    const allow = agent.tools?.allow ?? [];
    if (allow.length === 0) continue;
    if (agent.backend.type === 'command') {
      return {
        key: `agents[${index}].tools`,
        problem: "a command backend cannot have tools: they would run outside Airlock's guard",
      };
    }
    for (const [position, name] of allow.entries()) {
      if (!levelled.has(name)) {
        return {
          key: `agents[${index}].tools.allow[${position}]`,
          problem: `"${name}" names no tool with a level in tools.servers (write it as server.tool)`,
        };
      }
    }
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
