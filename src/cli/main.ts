#!/usr/bin/env node
/**
 * The `airlock` command line. Each command lives in its own file; this one only wires them.
 * Failures exit non-zero with a one-line reason on stderr.
 */
import { Command, InvalidArgumentError } from '@commander-js/extra-typings';
import { ConfigError } from '../config/errors.js';
import { generateToken } from '../config/tokens.js';
import { parseAutonomy, type McpAutonomy } from '../mcp/index.js';
import { agentsCommand } from './agents.js';
import { auditVerifyCommand } from './audit.js';
import { call } from './call.js';
import { runMcp } from './mcp.js';
import { registryPinCommand } from './registry.js';
import { sendCommand } from './send.js';
import { serve } from './serve.js';

const program = new Command()
  .name('airlock')
  .description('A security-first gateway for the Agent2Agent (A2A) protocol')
  .version('0.1.0');

program
  .command('serve')
  .description('publish the configured agents over A2A (v1.0 and v0.3 on one endpoint)')
  .requiredOption('-c, --config <file>', 'configuration file (YAML)')
  .option('--host <host>', 'address to bind (overrides server.host)')
  .option('--port <port>', 'port to bind (overrides server.port)', parsePort)
  .option('--log-level <level>', 'debug, info, warn, error or silent', parseLogLevel)
  .action(async (options) => {
    await serve({
      config: options.config,
      ...(options.host !== undefined && { host: options.host }),
      ...(options.port !== undefined && { port: options.port }),
      ...(options.logLevel !== undefined && { logLevel: options.logLevel }),
    });
  });

program
  .command('call')
  .description('send one message to an A2A endpoint (v1.0) and print the reply; token from AIRLOCK_TOKEN')
  .argument('<url>', 'the JSON-RPC endpoint, e.g. http://127.0.0.1:41241/a2a/echo')
  .argument('<text>', 'the message text')
  .option('--stream', 'stream the reply as it is written')
  .option('--task <id>', 'answer the task that asked for input')
  .option('--context <id>', 'continue a conversation')
  .option('--json', 'print the task or message as JSON')
  .action(async (url, text, options) => {
    const token = process.env.AIRLOCK_TOKEN;
    process.exitCode = await call({
      url,
      text,
      stream: options.stream === true,
      json: options.json === true,
      ...(token !== undefined && token.length > 0 && { token }),
      ...(options.task !== undefined && { taskId: options.task }),
      ...(options.context !== undefined && { contextId: options.context }),
    });
  });

program
  .command('send')
  .description(
    'send one message to a registered remote agent and print its reply (exit 0 success, 3 input required, 1 error)',
  )
  .argument('<agent>', 'a registry name (never a URL)')
  .argument('<text>', 'the message text (at most 8192 characters)')
  .option('--task <id>', 'answer the task that asked for input (one you started)')
  .option('--context <id>', 'continue a conversation')
  .option('--confirm', 'confirm a call to an agent that acts on your behalf (effect: acting)')
  .option('--stream', "read the answer as an event stream when the agent's card offers streaming (else polls)")
  .option('--json', 'print the result object as JSON')
  .option('--registry <file>', 'the registry (default: AIRLOCK_REGISTRY)')
  .action(async (agent, text, options) => {
    process.exitCode = await sendCommand({
      agent,
      text,
      confirm: options.confirm === true,
      ...(options.stream === true && { stream: true }),
      json: options.json === true,
      ...(options.task !== undefined && { taskId: options.task }),
      ...(options.context !== undefined && { contextId: options.context }),
      ...(options.registry !== undefined && { registry: options.registry }),
    });
  });

program
  .command('agents')
  .description("list the registry's agents and check every card (5 s each): status, digest, pin")
  .option('--json', 'print the list as JSON')
  .option('--registry <file>', 'the registry (default: AIRLOCK_REGISTRY)')
  .action(async (options) => {
    process.exitCode = await agentsCommand({
      json: options.json === true,
      ...(options.registry !== undefined && { registry: options.registry }),
    });
  });

const registry = program.command('registry').description('outbound registry tools');
registry
  .command('pin')
  .description("fetch an entry's card, show its digest and endpoint, and pin it (clears a drift lock)")
  .argument('<name>', 'a registry name')
  .option('--registry <file>', 'the registry (default: AIRLOCK_REGISTRY)')
  .action(async (name, options) => {
    process.exitCode = await registryPinCommand(name, {
      ...(options.registry !== undefined && { registry: options.registry }),
    });
  });

program
  .command('mcp')
  .description(
    'serve the outbound tools (a2a_list_agents, a2a_send, a2a_get_task) to an MCP host over stdio, or with --http over Streamable HTTP (loopback only: no authentication)',
  )
  .option('--registry <file>', 'registry of remote agents (default: AIRLOCK_REGISTRY)')
  .option('--pins <file>', 'card pin file (default: AIRLOCK_PINS, else .airlock/pins.json)')
  .option(
    '--autonomy <level>',
    'read_only refuses acting agents, acting allows them (default: AIRLOCK_MCP_AUTONOMY, else read_only)',
    parseAutonomyOption,
  )
  .option('--http', 'serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio')
  .option('--host <host>', 'HTTP bind address (default 127.0.0.1; loopback only unless --allow-non-loopback)')
  .option('--port <port>', 'HTTP port (default 41242)', parsePort)
  .option('--allow-non-loopback', 'allow a non-loopback HTTP bind: anyone who reaches it can call the tools')
  .action(async (options) => {
    process.exitCode = await runMcp({
      http: options.http === true,
      allowNonLoopback: options.allowNonLoopback === true,
      ...(options.host !== undefined && { host: options.host }),
      ...(options.port !== undefined && { port: options.port }),
      ...(options.registry !== undefined && { registry: options.registry }),
      ...(options.pins !== undefined && { pins: options.pins }),
      ...(options.autonomy !== undefined && { autonomy: options.autonomy }),
    });
  });

program
  .command('audit')
  .description('audit log tools')
  .command('verify')
  .description('check the hash chain of an audit log; prints the first broken row')
  .argument('<file>', 'a JSONL audit log')
  .action(async (file) => {
    process.exitCode = await auditVerifyCommand(file);
  });

const tokens = program.command('tokens').description('client tokens');
tokens
  .command('new')
  .description('print a fresh client token and the config line that uses it')
  .argument('<client>', 'client id')
  .action((client) => {
    const variable = `AIRLOCK_TOKEN_${client.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
    process.stdout.write(`${generateToken()}\n`);
    process.stderr.write(
      `store it as ${variable} and add to the config:\n  - id: ${client}\n    token: \${${variable}}\n    agents: [<slug>]\n`,
    );
  });

function parseAutonomyOption(value: string): McpAutonomy {
  try {
    return parseAutonomy(value, '--autonomy');
  } catch {
    throw new InvalidArgumentError('must be read_only or acting');
  }
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('must be 0..65535');
  return port;
}

function parseLogLevel(value: string): 'debug' | 'info' | 'warn' | 'error' | 'silent' {
  if (value === 'debug' || value === 'info' || value === 'warn' || value === 'error' || value === 'silent')
    return value;
  throw new InvalidArgumentError('must be debug, info, warn, error or silent');
}

program.parseAsync(process.argv).catch((error: unknown) => {
  const message =
    error instanceof ConfigError
      ? error.message
      : error instanceof Error
        ? `${(error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'address in use: ' : ''}${error.message}`
        : String(error);
  process.stderr.write(`airlock: ${message}\n`);
  process.exit(1);
});
