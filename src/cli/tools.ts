/**
 * `airlock tools list` and `airlock tools pin <server>`: the configured MCP tool servers as the
 * gateway would see them (connected now, through the same guarded transport), their tools,
 * levels, digests and pin state; and pinning what a server lists now, after showing what changed
 * since the last pin. Neither command pins on first use by itself: `list` only looks.
 *
 * @example
 * ```sh
 * airlock tools list --config airlock.yaml
 * # files  sha256:3a82…  connected
 * #   read_file   L1  pinned    sha256:1f0c…
 * #   write_file  L4  changed   sha256:9b7d…  (disabled until `airlock tools pin files`)
 * #   move_file   -   unpinned  sha256:44e1…  (not exposed: no level)
 * airlock tools pin files --config airlock.yaml
 * # changed    write_file  sha256:0d1e… → sha256:9b7d…
 * # pinned     files sha256:3a82… (operator) in .airlock/tool-pins.json
 * ```
 */
import { loadConfigFile, type AirlockConfig } from '../config/load.js';
import { createGuardedClient, parseEnvSettings } from '../net/index.js';
import { ToolHub, type ServerView } from '../tools/index.js';
import { errorLine, PROCESS_IO, type CommandIO } from './registry.js';

/**
 * Options of the tools commands.
 *
 * @example
 * ```ts
 * const options: ToolsCommandOptions = { config: 'airlock.yaml' };
 * ```
 */
export interface ToolsCommandOptions {
  /** The gateway's config file; default AIRLOCK_CONFIG. */
  config?: string;
}

/**
 * `airlock tools list`: every configured server (connected now), each tool it lists with its
 * level, digest and pin state. Exit code 1 when a server could not be reached (the others are
 * still listed).
 *
 * @example
 * ```ts
 * process.exitCode = await toolsListCommand({ config: 'airlock.yaml' });
 * ```
 */
export async function toolsListCommand(options: ToolsCommandOptions, io: CommandIO = PROCESS_IO): Promise<number> {
  const opened = openHub(options, io);
  if (opened === undefined) return 1;
  const { hub, config } = opened;
  try {
    await hub.start().catch(() => undefined);
    const views = hub.describe();
    if (views.length === 0) {
      io.stdout('no tool servers configured (tools.servers)\n');
      return 0;
    }
    for (const view of views) io.stdout(renderServer(view, config));
    return views.some((view) => view.error !== undefined) ? 1 : 0;
  } finally {
    await hub.close();
  }
}

/**
 * `airlock tools pin <server>`: connects the server, shows each tool added, removed or changed
 * since the stored pin, then pins what it lists now (`operator`). A server held to a configured
 * `pin` digest is not pinned here: the config says what is trusted.
 *
 * @example
 * ```ts
 * process.exitCode = await toolsPinCommand('files', { config: 'airlock.yaml' });
 * ```
 */
export async function toolsPinCommand(
  server: string,
  options: ToolsCommandOptions,
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  const opened = openHub(options, io);
  if (opened === undefined) return 1;
  const { hub, config } = opened;
  try {
    const configured = config.tools?.servers.find((entry) => entry.name === server);
    if (configured === undefined) {
      io.stderr(
        `airlock: no tool server named ${/^[a-z0-9_-]{1,32}$/.test(server) ? `"${server}"` : '(that name)'} in tools.servers\n`,
      );
      return 1;
    }
    const current = await hub.currentDigests(server);
    if (configured.pin !== undefined) {
      const same = configured.pin.toLowerCase().replace(/^sha256:/, '') === current.digest;
      io.stdout(`digest     sha256:${current.digest}\n`);
      if (same) {
        io.stdout('pinned     by pin in the config (it matches); nothing to store\n');
        return 0;
      }
      io.stderr(
        `airlock: tool server "${server}" is held to pin ${configured.pin} in the config, which no longer matches; review its tools, then update the pin\n`,
      );
      return 1;
    }
    const previous = await hub.pins.get(server);
    const lines: string[] = [];
    const names = new Set([...Object.keys(previous?.tools ?? {}), ...Object.keys(current.tools)]);
    for (const name of [...names].sort()) {
      const before = previous !== undefined && Object.hasOwn(previous.tools, name) ? previous.tools[name] : undefined;
      const now = Object.hasOwn(current.tools, name) ? current.tools[name] : undefined;
      if (before === now) continue;
      if (before === undefined) lines.push(`added      ${name}  ${short(now)}`);
      else if (now === undefined && !Object.hasOwn(current.tools, name))
        lines.push(`removed    ${name}  ${short(before)}`);
      else lines.push(`changed    ${name}  ${short(before)} → ${short(now)}`);
    }
    if (Object.values(current.tools).some((digest) => digest === undefined)) {
      io.stderr(`airlock: tool server "${server}" lists a tool whose schema cannot be digested; nothing pinned\n`);
      return 1;
    }
    io.stdout(lines.length === 0 ? 'unchanged  (every tool as pinned)\n' : `${lines.join('\n')}\n`);
    await hub.pins.set(server, { digest: current.digest, tools: current.tools as Record<string, string> }, 'operator');
    const was =
      previous === undefined ? 'no earlier pin' : `was sha256:${previous.digest.slice(0, 12)}… from ${previous.source}`;
    io.stdout(`pinned     ${server} sha256:${current.digest} (operator; ${was}) in ${hub.pins.path}\n`);
    return 0;
  } catch (error) {
    io.stderr(`airlock: ${errorLine(error)}\n`);
    return 1;
  } finally {
    await hub.close();
  }
}

function openHub(options: ToolsCommandOptions, io: CommandIO): { hub: ToolHub; config: AirlockConfig } | undefined {
  const path = options.config ?? io.env.AIRLOCK_CONFIG;
  if (path === undefined || path === '') {
    io.stderr('airlock: give the gateway config with --config FILE (or AIRLOCK_CONFIG)\n');
    return undefined;
  }
  let config: AirlockConfig;
  try {
    config = loadConfigFile(path, io.env);
  } catch (error) {
    io.stderr(`airlock: ${errorLine(error)}\n`);
    return undefined;
  }
  const tools = config.tools ?? {
    servers: [],
    maxCallsPerTurn: 16,
    maxResultChars: 16_000,
    pins: '.airlock/tool-pins.json',
  };
  let guarded;
  try {
    guarded = createGuardedClient(parseEnvSettings(io.env));
  } catch (error) {
    io.stderr(`airlock: ${errorLine(error)}\n`);
    return undefined;
  }
  const hub = new ToolHub(tools, { guarded, ownsGuarded: true, env: io.env, pinOnFirstUse: false });
  return { hub, config };
}

function renderServer(view: ServerView, config: AirlockConfig): string {
  const server = config.tools?.servers.find((entry) => entry.name === view.name);
  const lines = [
    `${view.name}  ${view.digest === undefined ? '-' : `sha256:${view.digest}`}  ${view.connected ? 'connected' : 'not connected'}${server?.pin !== undefined ? '  (held to the configured pin)' : ''}`,
  ];
  if (view.error !== undefined) lines.push(`  error: ${errorLine(view.error)}`);
  const width = Math.max(0, ...view.tools.map((tool) => tool.name.length));
  for (const tool of view.tools) {
    const note =
      tool.level === undefined
        ? '  (not exposed: no level)'
        : tool.state === 'changed'
          ? `  (disabled until \`airlock tools pin ${view.name}\`)`
          : tool.state === 'unpinned'
            ? `  (not exposed until pinned: \`airlock tools pin ${view.name}\`, or serve's first use of an unpinned server)`
            : '';
    lines.push(
      `  ${tool.name.padEnd(width)}  ${(tool.level ?? '-').padEnd(2)}  ${tool.state.padEnd(8)}  ${short(tool.digest)}${note}`,
    );
  }
  // Levelled tools the server does not list.
  for (const name of Object.keys(server?.tools ?? {}).sort()) {
    if (!view.tools.some((tool) => tool.name === name) && view.connected) {
      lines.push(
        `  ${name.padEnd(width)}  ${server?.tools[name]?.level ?? '-'}  absent    (levelled in the config, not listed by the server)`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

function short(digest: string | undefined): string {
  return digest === undefined ? '-' : `sha256:${digest.slice(0, 16)}…`;
}
