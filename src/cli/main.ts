#!/usr/bin/env node
/**
 * The `airlock` command line. Each command lives in its own file; this one only wires them.
 * Failures exit non-zero with a one-line reason on stderr.
 */
import { Command, InvalidArgumentError } from '@commander-js/extra-typings';
import { ConfigError } from '../config/errors.js';
import { generateToken } from '../config/tokens.js';
import { auditVerifyCommand } from './audit.js';
import { call } from './call.js';
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
