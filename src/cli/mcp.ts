/**
 * `airlock mcp`: serve the outbound tools (`a2a_list_agents`, `a2a_send`, `a2a_get_task`) to an
 * MCP host, over stdio (the default) or Streamable HTTP (`--http`, loopback only: there is no
 * authentication).
 *
 * The registry comes from `--registry` or `AIRLOCK_REGISTRY`; the autonomy from `--autonomy` or
 * `AIRLOCK_MCP_AUTONOMY` (`read_only` by default: acting entries are refused over MCP; `confirm`
 * asks the person in the host before each acting call, through MCP elicitation; `acting` lets
 * them through). Confirmation outcomes are logged on stderr as `mcp.confirm` lines. The
 * outbound client is the one `createOutboundClient` builds (pins from `--pins`, `AIRLOCK_PINS`
 * or `.airlock/pins.json`; audit rows to `AIRLOCK_AUDIT_FILE`). In stdio mode stdout carries
 * MCP frames only; everything else (logs included) goes to stderr.
 *
 * @example
 * ```sh
 * AIRLOCK_REGISTRY=examples/registry.yaml airlock mcp                   # stdio, for an MCP host's config
 * AIRLOCK_MCP_AUTONOMY=acting airlock mcp --registry r.yaml --http --port 41249
 * airlock mcp --registry r.yaml --autonomy confirm --confirm-timeout 60
 * ```
 */
import type { Readable, Writable } from 'node:stream';
import { createOutboundClient, type OutboundClient, type OutboundRuntime } from '../client/index.js';
import {
  AUTONOMY_ENV,
  DEFAULT_MCP_PORT,
  isLoopbackBindHost,
  parseAutonomy,
  serveMcpStdio,
  startMcpHttp,
  type ConfirmEvent,
  type McpAutonomy,
} from '../mcp/index.js';

/**
 * Options of `airlock mcp`.
 *
 * @example
 * ```ts
 * const options: RunMcpOptions = { http: true, port: 41249, registry: 'registry.yaml', autonomy: 'confirm', confirmTimeoutMs: 60_000 };
 * ```
 */
export interface RunMcpOptions {
  /** Streamable HTTP instead of stdio. */
  http?: boolean;
  /** HTTP port (default 41249; 0 picks a free one). */
  port?: number;
  /** HTTP bind address (default 127.0.0.1); must be loopback unless `allowNonLoopback`. */
  host?: string;
  /** Allow a non-loopback HTTP bind. There is no authentication: anyone who reaches it may call the tools. */
  allowNonLoopback?: boolean;
  /** Registry file; defaults to `AIRLOCK_REGISTRY`. */
  registry?: string;
  /** Whether acting entries may be called; defaults to `AIRLOCK_MCP_AUTONOMY`, then `read_only`. */
  autonomy?: McpAutonomy;
  /** Under autonomy `confirm`: how long the person has to answer (default 120 s). */
  confirmTimeoutMs?: number;
  /** Card pin file; defaults to `AIRLOCK_PINS`, then `.airlock/pins.json`. */
  pins?: string;
}

/**
 * What `runMcp` runs against. All optional: tests pass a `client` built with `createClient`
 * over a fake transport (then no registry, pin or audit file is opened, and the caller keeps
 * ownership of the client), their own streams, and a `signal` that stops the server.
 *
 * @example
 * ```ts
 * const deps: RunMcpDeps = { client, env: {}, signal: controller.signal };
 * ```
 */
export interface RunMcpDeps {
  client?: OutboundClient;
  env?: NodeJS.ProcessEnv;
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  /** Stops the server (besides SIGINT, SIGTERM and, for stdio, the end of stdin). */
  signal?: AbortSignal;
}

/**
 * Runs `airlock mcp` until stdin ends (stdio), or a signal (either mode). Resolves with the
 * exit code; startup failures (no registry, a bad autonomy value, a refused bind) throw with a
 * one-line message.
 *
 * @example
 * ```ts
 * process.exitCode = await runMcp({ registry: 'registry.yaml' });
 * ```
 * @throws Error (`RegistryError` included) when the server cannot start
 */
export async function runMcp(options: RunMcpOptions, deps: RunMcpDeps = {}): Promise<number> {
  const env = deps.env ?? process.env;
  const stderr = deps.stderr ?? process.stderr;
  const say = (line: string): void => void stderr.write(`airlock mcp: ${line}\n`);
  const log = (event: string, fields: Readonly<Record<string, string | number | boolean>>): void =>
    void stderr.write(`${JSON.stringify({ event, ...fields })}\n`);
  const autonomy = options.autonomy ?? parseAutonomy(env[AUTONOMY_ENV]);
  if (options.http === true) checkBind(options);

  // The production client (registry, guarded transport, card trust and pins, AIRLOCK_AUDIT_FILE),
  // unless one is given. Its ledger is in memory: a task can be followed up (a2a_get_task, or a
  // send with task_id) only by this process, which started it.
  let owned: OutboundRuntime | undefined;
  let client: OutboundClient;
  if (deps.client !== undefined) client = deps.client;
  else {
    owned = createOutboundClient({
      env,
      log,
      ...(options.registry !== undefined && { registryPath: options.registry }),
      ...(options.pins !== undefined && { pinsPath: options.pins }),
    });
    client = owned;
  }
  try {
    const agents = client.listAgents();
    if (agents.length === 0) throw new Error('the registry lists no agents: nothing to serve');
    const acting = agents.filter((agent) => agent.effect === 'acting').length;
    const summary =
      `${agents.length} agent${agents.length === 1 ? '' : 's'} (${acting} acting), autonomy ${autonomy}` +
      (acting > 0 ? ACTING_SUMMARY[autonomy] : '');
    const onerror = (error: Error): void => log('mcp.error', { error: error.message.slice(0, 200) });
    const serverOptions = {
      client,
      autonomy,
      ...(options.confirmTimeoutMs !== undefined && { confirmTimeoutMs: options.confirmTimeoutMs }),
      // The agent's registry name and the outcome only: never the text the person was shown.
      onConfirmation: (event: ConfirmEvent): void => log('mcp.confirm', { agent: event.agent, outcome: event.outcome }),
    };
    const stop = stopSignal(deps.signal);
    try {
      if (options.http === true) {
        const http = await startMcpHttp(serverOptions, {
          ...(options.host !== undefined && { host: options.host }),
          port: options.port ?? DEFAULT_MCP_PORT,
          allowNonLoopback: options.allowNonLoopback === true,
          onerror,
        });
        (deps.stdout ?? process.stdout).write(`airlock mcp listening on ${http.url}\n`);
        say(`Streamable HTTP, no authentication; ${summary}`);
        if (!isLoopbackBindHost(options.host ?? '127.0.0.1')) {
          say(
            'WARNING: bound to a non-loopback address with no authentication: anyone who reaches it can call the tools',
          );
        }
        await stop.promise;
        await http.close();
      } else {
        const stdin = deps.stdin ?? process.stdin;
        const handle = serveMcpStdio(serverOptions, { stdin, stdout: deps.stdout ?? process.stdout, onerror });
        say(`serving over stdio; ${summary}`);
        await Promise.race([handle.closed, stop.promise]);
        await handle.close();
        // Let go of stdin, so that a stop by signal does not leave the process waiting on it.
        stdin.destroy();
      }
    } finally {
      stop.dispose();
    }
    return 0;
  } finally {
    await owned?.close();
  }
}

/** What the start line adds about acting agents, per autonomy. */
const ACTING_SUMMARY: Readonly<Record<McpAutonomy, string>> = {
  read_only: `: acting agents are refused (set ${AUTONOMY_ENV}=acting, or =confirm to ask the person each time)`,
  confirm: ': each acting call asks the person in the host first (MCP elicitation), refused if it cannot ask',
  acting: '',
};

function checkBind(options: RunMcpOptions): void {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackBindHost(host) && options.allowNonLoopback !== true) {
    throw new Error(
      `refusing to bind ${host}: the MCP HTTP mode has no authentication and binds loopback only ` +
        '(127.0.0.1, ::1 or localhost); --allow-non-loopback overrides this',
    );
  }
}

/** Settles on SIGINT, SIGTERM or the given signal; `dispose` removes the listeners. */
function stopSignal(signal: AbortSignal | undefined): { promise: Promise<void>; dispose(): void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  const onSignal = (): void => resolve();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  if (signal?.aborted === true) resolve();
  signal?.addEventListener('abort', onSignal, { once: true });
  return {
    promise,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      signal?.removeEventListener('abort', onSignal);
    },
  };
}
