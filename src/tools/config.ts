/**
 * The `tools` section of the config: the MCP tool servers the gateway connects to, the level of
 * each tool it exposes, and the per-turn budgets. Its schema is ./schema.ts (composed by
 * `src/config/schema.ts`); the loader runs {@link toolsConfigProblem} (what a schema cannot say).
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
import type { ToolsConfig } from './schema.js';

export type { HttpToolServerConfig, StdioToolServerConfig, ToolsConfig, ToolServerConfig } from './schema.js';

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
