/**
 * One connection to one MCP tool server, with the official MCP client SDK: a program over stdio
 * (an argument list, no shell, only the named environment variables) or Streamable HTTP through
 * the guarded fetch (`./fetch.ts`). Connecting lists the server's tools; a call runs under the
 * server's timeout and the caller's signal.
 *
 * @example
 * ```ts
 * const connection = await connectToolServer(server, { guarded, env: process.env });
 * connection.tools.map((tool) => tool.name); // ['read_file', 'write_file', …]
 * const result = await connection.call('read_file', { path: 'a.txt' }, signal);
 * await connection.close();
 * ```
 */
// The MCP SDK is imported when a tool server connects: a gateway without tool servers never loads it.
import type { CallToolResult, Transport } from '@modelcontextprotocol/client';
import { resolveProgram, resolveWorkingDirectory } from '../agents/command/resolve.js';
import { isOutboundError, type GuardedClient } from '../net/index.js';
import type { ToolServerConfig } from './config.js';
import type { ListedTool } from './digest.js';
import { ToolServerError } from './errors.js';
import { guardedFetch } from './fetch.js';

/**
 * A live connection to a tool server.
 *
 * @example
 * ```ts
 * if (!connection.alive) await hub.reconnect('files');
 * ```
 */
export interface ToolServerConnection {
  /** The tools the server listed when it connected. */
  readonly tools: readonly ListedTool[];
  /** False once the transport closed (the program exited, the session ended). */
  readonly alive: boolean;
  /** Calls a tool; rejects on a protocol error, the timeout, the signal or a closed transport. */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * What {@link connectToolServer} needs besides the server's config.
 *
 * @example
 * ```ts
 * const deps: ConnectDeps = { guarded: createGuardedClient(parseEnvSettings(process.env)), env: process.env };
 * ```
 */
export interface ConnectDeps {
  /** The guarded outbound client HTTP servers are reached through. */
  readonly guarded: GuardedClient;
  /** Airlock's environment: PATH for the program lookup, and `passEnv` values. */
  readonly env: NodeJS.ProcessEnv;
}

/** Pages of tools/list read at most (a server with more is cut there). */
const MAX_LIST_PAGES = 20;
/** Bytes of one stdio message. */
const MAX_STDIO_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Variables the SDK would add to a program's environment unless told otherwise. */
const SDK_DEFAULT_VARIABLES = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/**
 * Connects to `server` and lists its tools. Throws {@link ToolServerError} naming the server:
 * `tool_server_refused` when the guarded transport refused the URL or an address, else
 * `tool_server_unavailable`.
 *
 * @example
 * ```ts
 * const connection = await connectToolServer(config.tools.servers[0], deps);
 * ```
 */
export async function connectToolServer(server: ToolServerConfig, deps: ConnectDeps): Promise<ToolServerConnection> {
  const timeoutMs = server.timeoutSeconds * 1000;
  const transport = await makeTransport(server, deps, timeoutMs);
  const { Client } = await import('@modelcontextprotocol/client');
  const client = new Client({ name: 'airlock', version: '1' }, { capabilities: {} });
  let alive = true;
  client.onclose = () => {
    alive = false;
  };
  // Errors are reported through the pending request (or the next one); nothing to log here.
  client.onerror = () => undefined;
  const tools: ListedTool[] = [];
  try {
    await client.connect(transport, { timeout: timeoutMs });
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
      const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
      for (const tool of listed.tools) {
        tools.push({
          name: tool.name,
          ...(tool.description !== undefined && { description: tool.description }),
          inputSchema: tool.inputSchema,
        });
      }
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
  } catch (error) {
    await client.close().catch(() => undefined);
    throw asServerError(server.name, error, 'could not connect and list its tools');
  }
  return {
    tools,
    get alive() {
      return alive;
    },
    call: async (name, args, signal) => {
      // The hub's own deadline (the signal) fires first; the SDK's is a backstop.
      return client.callTool({ name, arguments: args }, { signal, timeout: timeoutMs + 5000 });
    },
    close: async () => {
      alive = false;
      await client.close().catch(() => undefined);
    },
  };
}

async function makeTransport(server: ToolServerConfig, deps: ConnectDeps, timeoutMs: number): Promise<Transport> {
  if (server.stdio !== undefined) {
    const stdio = server.stdio;
    let command: string;
    let cwd: string;
    try {
      command = resolveProgram(stdio.command, deps.env);
      cwd = resolveWorkingDirectory(stdio.cwd);
    } catch (error) {
      const detail = error instanceof Error ? error.message.replace(/^command backend: /, '') : String(error);
      throw new ToolServerError('tool_server_unavailable', server.name, detail);
    }
    // Only the named variables: the SDK's own defaults (HOME, PATH, …) are unset unless named.
    const env: Record<string, string | undefined> = {};
    for (const name of SDK_DEFAULT_VARIABLES) env[name] = undefined;
    for (const name of stdio.passEnv) {
      const value = deps.env[name];
      if (value !== undefined) env[name] = value;
    }
    const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
    return new StdioClientTransport({
      command,
      args: [...stdio.args],
      env: env as Record<string, string>,
      cwd,
      stderr: 'ignore',
      maxBufferSize: MAX_STDIO_MESSAGE_BYTES,
    });
  }
  const http = server.http!;
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  return new StreamableHTTPClientTransport(new URL(http.url), {
    fetch: guardedFetch(deps.guarded, {
      privateNetwork: http.privateNetwork,
      maxResponseBytes: http.maxResponseBytes,
      timeoutMs,
      ...(http.token !== undefined && { authorization: `Bearer ${http.token}` }),
    }),
    redirectPolicy: 'same-origin',
  });
}

/** The one line for a failed server; an outbound refusal keeps its own (token-free) message. */
function asServerError(server: string, error: unknown, what: string): ToolServerError {
  if (error instanceof ToolServerError) return error;
  const outbound = outboundCause(error);
  if (outbound !== undefined) {
    const refused = ['address_blocked', 'insecure_url', 'url_has_credentials', 'redirect_refused'].includes(
      outbound.code,
    );
    return new ToolServerError(refused ? 'tool_server_refused' : 'tool_server_unavailable', server, outbound.message, {
      cause: error,
    });
  }
  const detail = error instanceof Error ? error.message.split('\n')[0]!.slice(0, 300) : 'unknown error';
  return new ToolServerError('tool_server_unavailable', server, `${what}: ${detail}`, { cause: error });
}

/** The guarded client's error inside whatever the SDK wrapped it in. */
function outboundCause(error: unknown): { code: string; message: string } | undefined {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth += 1) {
    if (isOutboundError(current)) return { code: current.code, message: current.message };
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export { asServerError as toolServerError };
