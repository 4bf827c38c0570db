/**
 * `airlock serve`: load the config, publish its agents, print where, run until a signal.
 *
 * @example
 * ```sh
 * airlock serve --config examples/demo.yaml --port 41241
 * ```
 */
import { loadConfigFile, type AirlockConfig, type ClientEntry } from '../config/load.js';
import { prepareBackends, type PreparedBackends } from '../server/backends.js';
import { createGateway } from '../server/http.js';
import { createUpstreams } from '../server/upstreams.js';
import { createLogger, type LogLevel } from '../server/log.js';

export interface ServeOptions {
  config: string;
  host?: string;
  port?: number;
  logLevel?: LogLevel;
}

export async function serve(options: ServeOptions): Promise<void> {
  const config = loadConfigFile(options.config);
  if (options.host !== undefined) config.server.host = options.host;
  if (options.port !== undefined) config.server.port = options.port;
  const logger = createLogger(options.logLevel ?? 'info');
  const upstreams = config.upstreams === undefined ? undefined : createUpstreams(config.upstreams, { logger });
  let backends: PreparedBackends;
  try {
    backends = await prepareBackends(config, {
      logger,
      ...(upstreams !== undefined && { upstream: upstreams.backendFor }),
    });
  } catch (error) {
    await upstreams?.close();
    throw error;
  }
  const gateway = createGateway(config, { logger, backends: backends.bySlug });
  const url = await gateway.listen();
  process.stdout.write(banner(config, url));
  logger.info({ event: 'listening', url, agents: config.agents.length, clients: config.clients.length });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'stopping', signal });
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    gateway
      .close()
      .then(() => backends.close())
      .then(() => upstreams?.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** What a person needs to start: where the cards are and one call that works. */
export function banner(config: AirlockConfig, url: string): string {
  const publicBase = config.server.publicUrl ?? url;
  const lines = [`airlock listening on ${url}`];
  const width = Math.max(...config.agents.map((agent) => agent.slug.length));
  for (const agent of config.agents) {
    const card = `${publicBase}${config.server.basePath}/${agent.slug}/.well-known/agent-card.json`;
    const isDefault =
      agent.slug === config.server.defaultAgent ? `  (also ${publicBase}/.well-known/agent-card.json)` : '';
    lines.push(`  card ${agent.slug.padEnd(width)}  ${card}${isDefault}`);
  }
  const client = config.clients[0];
  const agent = client === undefined ? undefined : config.agents.find((entry) => client.agents.has(entry.slug));
  if (client !== undefined && agent !== undefined) {
    const endpoint = `${publicBase}${config.server.basePath}/${agent.slug}`;
    const token = tokenExpression(client);
    if (client.tokenOrigin.kind === 'file' && client.tokenOrigin.generated) {
      lines.push(`  generated a token for client "${client.id}" in ${client.tokenOrigin.path} (mode 0600)`);
    }
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hello' }] },
      },
    });
    lines.push('try it:');
    lines.push(
      `  curl -s ${endpoint} -H "Authorization: Bearer ${token}" -H 'Content-Type: application/json' -d '${body}'`,
    );
    lines.push(`  AIRLOCK_TOKEN="${token}" npx airlock call ${endpoint} "hello"`);
    if (config.server.rest) {
      lines.push(
        `  curl -s ${endpoint}/ask -H "Authorization: Bearer ${token}" -H 'Content-Type: application/json' -d '{"message":"hello"}'`,
      );
    }
  }
  if (config.audit.file !== undefined) {
    lines.push(`audit log: ${config.audit.file}  (check it with: npx airlock audit verify ${config.audit.file})`);
  }
  return `${lines.join('\n')}\n`;
}

/** A shell expression that yields the token, so the banner never prints the token itself. */
function tokenExpression(client: ClientEntry): string {
  switch (client.tokenOrigin.kind) {
    case 'env':
      return `$${client.tokenOrigin.name}`;
    case 'file':
      return `$(cat ${client.tokenOrigin.path})`;
    case 'inline':
      return '<the token of client ' + client.id + '>';
  }
}
