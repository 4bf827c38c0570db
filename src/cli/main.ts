#!/usr/bin/env node
/**
 * The `airlock` command line. Each command lives in its own file; this one only wires them.
 * Failures exit non-zero with a one-line reason on stderr.
 */
import { Command, InvalidArgumentError } from '@commander-js/extra-typings';
import { isAirlockError } from '../errors/index.js';
import { parseAutonomy, type McpAutonomy } from '../mcp/autonomy.js';
import { MAX_WORKERS, parseWorkerCount } from './workers.js';
import { parseCollectorMode, type CollectorMode } from './collector.js';

// Each command's module is imported when that command runs, so `--version`, `send` or `card`
// do not pay for the server, the MCP SDK, the stores, metrics and telemetry (start-up time).

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
  .option('--data <dir>', 'keep tasks durably in SQLite at <dir>/airlock.db')
  .option(
    '--workers <n>',
    'gateway processes behind the one port: a count or auto (= cores); SQLite needs redis.url, memory refuses > 1',
    parseWorkers,
  )
  .option(
    '--gc <mode>',
    "V8's collector: auto (on the JavaScript thread when each process has one core), single-threaded or concurrent",
    parseCollector,
    'auto' as const,
  )
  .action(async (options) => {
    const { planServeCollector } = await import('./relaunch.js');
    const collector = await planServeCollector(options.gc, options.workers ?? 1);
    if (collector.exitCode !== undefined) {
      process.exitCode = collector.exitCode;
      return;
    }
    // The config's check starts in its worker thread now, while this thread loads the gateway.
    const firstLoad = import('../config/off-thread.js').then(({ loadConfigFileOffThread }) =>
      loadConfigFileOffThread(options.config),
    );
    firstLoad.catch(() => undefined); // awaited by serve, which reports a refusal
    const { serve } = await import('./serve.js');
    await serve({
      config: options.config,
      firstLoad,
      collector: collector.plan,
      supervised: collector.supervised,
      ...(options.workers !== undefined && { workers: options.workers }),
      ...(options.data !== undefined && { data: options.data }),
      ...(options.host !== undefined && { host: options.host }),
      ...(options.port !== undefined && { port: options.port }),
      ...(options.logLevel !== undefined && { logLevel: options.logLevel }),
    });
  });

program
  .command('reload')
  .description(
    're-read the config of the running airlock serve (SIGHUP): prints the changed keys, or why it was refused (the old config then keeps serving)',
  )
  .requiredOption('-c, --config <file>', 'the configuration file serve was started with')
  .action(async (options) => {
    const { reloadCommand } = await import('./reload.js');
    process.exitCode = await reloadCommand({ config: options.config });
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
    const { call } = await import('./call.js');
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
    const { sendCommand } = await import('./send.js');
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
    const { agentsCommand } = await import('./agents.js');
    process.exitCode = await agentsCommand({
      json: options.json === true,
      ...(options.registry !== undefined && { registry: options.registry }),
    });
  });

const registry = program.command('registry').description('outbound registry tools');
registry
  .command('pin')
  .description(
    "fetch an entry's card, show its digest, endpoint and what changed since the pin, and pin it once confirmed (clears a drift lock)",
  )
  .argument('<name>', 'a registry name')
  .option('--registry <file>', 'the registry (default: AIRLOCK_REGISTRY)')
  .option('--yes', 'pin without asking (required when stdin is not a terminal)')
  .action(async (name, options) => {
    const { registryPinCommand } = await import('./registry.js');
    process.exitCode = await registryPinCommand(name, {
      ...(options.registry !== undefined && { registry: options.registry }),
      ...(options.yes === true && { yes: true }),
    });
  });

const tools = program.command('tools').description("the gateway's MCP tool servers (tools.servers)");
tools
  .command('list')
  .description('connect each tool server and list its tools: level, digest, pin state (pinned, unpinned, changed)')
  .option('-c, --config <file>', 'the gateway configuration (default: AIRLOCK_CONFIG)')
  .action(async (options) => {
    const { toolsListCommand } = await import('./tools.js');
    process.exitCode = await toolsListCommand({ ...(options.config !== undefined && { config: options.config }) });
  });
tools
  .command('pin')
  .description(
    'connect a tool server, show what changed since its pin, and pin what it lists now (re-enables changed tools)',
  )
  .argument('<server>', 'a tools.servers name')
  .option('-c, --config <file>', 'the gateway configuration (default: AIRLOCK_CONFIG)')
  .action(async (server, options) => {
    const { toolsPinCommand } = await import('./tools.js');
    process.exitCode = await toolsPinCommand(server, {
      ...(options.config !== undefined && { config: options.config }),
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
    'read_only refuses acting agents, confirm asks the person in the host before each call (MCP elicitation), acting allows them (default: AIRLOCK_MCP_AUTONOMY, else read_only)',
    parseAutonomyOption,
  )
  .option(
    '--confirm-timeout <seconds>',
    'with --autonomy confirm: how long the person has to answer (default 120)',
    parsePositiveSeconds,
  )
  .option('--http', 'serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio')
  .option('--host <host>', 'HTTP bind address (default 127.0.0.1; loopback only unless --allow-non-loopback)')
  .option('--port <port>', 'HTTP port (default 41249)', parsePort)
  .option('--allow-non-loopback', 'allow a non-loopback HTTP bind: anyone who reaches it can call the tools')
  .action(async (options) => {
    const { runMcp } = await import('./mcp.js');
    process.exitCode = await runMcp({
      http: options.http === true,
      allowNonLoopback: options.allowNonLoopback === true,
      ...(options.host !== undefined && { host: options.host }),
      ...(options.port !== undefined && { port: options.port }),
      ...(options.registry !== undefined && { registry: options.registry }),
      ...(options.pins !== undefined && { pins: options.pins }),
      ...(options.autonomy !== undefined && { autonomy: options.autonomy }),
      ...(options.confirmTimeout !== undefined && { confirmTimeoutMs: options.confirmTimeout * 1000 }),
    });
  });

program
  .command('audit')
  .description('audit log tools')
  .command('verify')
  .description(
    'check the hash chain of an audit log; prints the first broken row (exit 0 ok, 1 broken, 2 cannot read, 3 empty: no rows)',
  )
  .argument('<file>', 'a JSONL audit log')
  .action(async (file) => {
    const { auditVerifyCommand } = await import('./audit.js');
    process.exitCode = await auditVerifyCommand(file);
  });

const approvals = program
  .command('approvals')
  .description('decide guarded actions as yourself; your person token or JWT from AIRLOCK_PERSON_TOKEN');
approvals
  .command('list')
  .description('the actions waiting for your decision')
  .option('--url <url>', 'the gateway (default AIRLOCK_URL or http://127.0.0.1:41241)')
  .option('--json', 'print the views as JSON')
  .action(async (options) => {
    const { approvalsListCommand } = await import('./approvals.js');
    process.exitCode = await approvalsListCommand({
      ...(options.url !== undefined && { url: options.url }),
      ...(options.json === true && { json: true }),
    });
  });
approvals
  .command('questions')
  .description("remote agents' questions waiting for your answer")
  .option('--url <url>', 'the gateway (default AIRLOCK_URL or http://127.0.0.1:41241)')
  .option('--json', 'print the views as JSON')
  .action(async (options) => {
    const { approvalsQuestionsCommand } = await import('./approvals.js');
    process.exitCode = await approvalsQuestionsCommand({
      ...(options.url !== undefined && { url: options.url }),
      ...(options.json === true && { json: true }),
    });
  });
approvals
  .command('answer')
  .description("answer a remote agent's question (sent on its task when the caller next writes)")
  .argument('<questionId>', 'the question id')
  .argument('<text>', 'your answer')
  .option('--url <url>', 'the gateway (default AIRLOCK_URL or http://127.0.0.1:41241)')
  .action(async (questionId, text, options) => {
    const { approvalsAnswerCommand } = await import('./approvals.js');
    process.exitCode = await approvalsAnswerCommand(questionId, text, {
      ...(options.url !== undefined && { url: options.url }),
    });
  });
for (const decision of ['approve', 'deny'] as const) {
  approvals
    .command(decision)
    .description(`${decision} one action (its id from \`airlock approvals list\`)`)
    .argument('<actionId>', 'the action id')
    .option('--url <url>', 'the gateway (default AIRLOCK_URL or http://127.0.0.1:41241)')
    .action(async (actionId, options) => {
      const { approvalsDecideCommand } = await import('./approvals.js');
      process.exitCode = await approvalsDecideCommand(decision, actionId, {
        ...(options.url !== undefined && { url: options.url }),
      });
    });
}

const db = program.command('db').description('task store database tools');
db.command('migrate')
  .description(
    'apply pending task store schema migrations and exit (PostgreSQL: --url or DATABASE_URL; SQLite: --data)',
  )
  .option('-c, --config <file>', 'configuration file whose store names the database')
  .option('--url <url>', 'PostgreSQL URL (prefer DATABASE_URL: a URL on the command line shows in ps)')
  .option('--data <dir>', 'data directory: SQLite in <dir>/airlock.db')
  .option('--schema <name>', 'PostgreSQL schema (default public)')
  .action(async (options) => {
    const { dbMigrateCommand } = await import('./db.js');
    process.exitCode = await dbMigrateCommand({
      ...(options.config !== undefined && { config: options.config }),
      ...(options.url !== undefined && { url: options.url }),
      ...(options.data !== undefined && { data: options.data }),
      ...(options.schema !== undefined && { schema: options.schema }),
    });
  });

const keys = program.command('keys').description('card signing keys');
keys
  .command('generate')
  .description(
    'make a card signing key: DIR/<kid>.private.jwk.json (mode 0600) and its public key added to DIR/jwks.json',
  )
  .requiredOption('--out <dir>', 'the key directory (created 0700 when missing)')
  .option('--alg <alg>', 'ES256 (default), ES384, ES512, EdDSA, RS256 or PS256')
  .action(async (options) => {
    const { keysGenerateCommand } = await import('./keys.js');
    process.exitCode = await keysGenerateCommand({
      out: options.out,
      ...(options.alg !== undefined && { alg: options.alg }),
    });
  });

const card = program.command('card').description('agent card tools: fetch, sign, verify, digest');
card
  .command('fetch')
  .description(
    'fetch a card through the guarded transport: its bytes on stdout; digest, endpoint and signature status on stderr',
  )
  .argument('<target>', 'a card URL or a registry name')
  .option('--registry <file>', 'the registry for a name (default: AIRLOCK_REGISTRY)')
  .option(
    '--keys <jwks>',
    "verify the signature with this JWK Set (repeatable; default for a name: the entry's card_keys)",
    collect,
    [] as string[],
  )
  .option('--coverage <what>', 'what a signature must cover: trust-fields (default) or interfaces')
  .option('--a2a-version <version>', 'the card shape to ask for: 1.0 (default) or 0.3')
  .action(async (target, options) => {
    const { cardFetchCommand } = await import('./card.js');
    process.exitCode = await cardFetchCommand(target, {
      ...(options.registry !== undefined && { registry: options.registry }),
      ...(options.keys.length > 0 && { keys: options.keys }),
      ...(options.coverage !== undefined && { coverage: options.coverage }),
      ...(options.a2aVersion !== undefined && { version: options.a2aVersion }),
    });
  });
card
  .command('sign')
  .description('sign a card JSON file; the signed card on stdout (one signature per --key)')
  .argument('<card>', 'card JSON file (either shape)')
  .option('--key <jwk>', 'a private JWK file (repeatable: several keys sign at once)', collect, [] as string[])
  .option('--jku <url>', 'put this JWK Set URL in each protected header (a hint for verifiers)')
  .action(async (file, options) => {
    const { cardSignCommand } = await import('./card.js');
    process.exitCode = await cardSignCommand(file, {
      key: options.key,
      ...(options.jku !== undefined && { jku: options.jku }),
    });
  });
card
  .command('verify')
  .description("verify a card's signature with the operator's keys (exit 0 verified, 1 refused, 2 cannot check)")
  .argument('<card>', 'card JSON file or URL')
  .option('--keys <jwks>', 'a JWK Set file of trusted public keys (repeatable)', collect, [] as string[])
  .option('--coverage <what>', 'what a signature must cover: trust-fields (default) or interfaces')
  .action(async (target, options) => {
    const { cardVerifyCommand } = await import('./card.js');
    process.exitCode = await cardVerifyCommand(target, {
      keys: options.keys,
      ...(options.coverage !== undefined && { coverage: options.coverage }),
    });
  });
card
  .command('digest')
  .description("print a card's trust digest (what pins compare) and the SHA-256 of its signing payload")
  .argument('<card>', 'card JSON file (either shape)')
  .option('--payload', 'print the canonical signing payload instead')
  .action(async (file, options) => {
    const { cardDigestCommand } = await import('./card.js');
    process.exitCode = await cardDigestCommand(file, { payload: options.payload === true });
  });

program
  .command('init')
  .description(
    'write a commented starter config (airlock.yaml: one echo agent, one client, audit on) and the client token (.airlock/client-token, 0600)',
  )
  .option('--dir <dir>', 'the folder to write into (default: the current one)')
  .option('--port <port>', 'the port the gateway will listen on (default 41240)', parsePort)
  .option('--force', 'replace an existing airlock.yaml (an existing token file is kept)')
  .action(async (options) => {
    const { initCommand } = await import('./init.js');
    process.exitCode = initCommand({
      ...(options.dir !== undefined && { dir: options.dir }),
      ...(options.port !== undefined && { port: options.port }),
      ...(options.force === true && { force: true }),
    });
  });

program
  .command('doctor')
  .description(
    'check a setup, one line per check: config, tokens, port, store and migrations, Redis, audit chain, registry cards and pins (exit 0 ok, 1 a check failed)',
  )
  .option('-c, --config <file>', 'the configuration (default: AIRLOCK_CONFIG, else airlock.yaml)')
  .action(async (options) => {
    const { doctorCommand } = await import('./doctor.js');
    process.exitCode = await doctorCommand({ ...(options.config !== undefined && { config: options.config }) });
  });

const tokens = program.command('tokens').description('client tokens');
tokens
  .command('new')
  .description('print a fresh client token and the config line that uses it')
  .argument('<client>', 'client id')
  .action(async (client) => {
    const { generateToken } = await import('../config/tokens.js');
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
    throw new InvalidArgumentError('must be read_only, confirm or acting');
  }
}

function parsePositiveSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 3600)
    throw new InvalidArgumentError('must be 1..3600 seconds');
  return seconds;
}

/** Commander's way to make an option repeatable: each use adds to the list. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('must be 0..65535');
  return port;
}

function parseWorkers(value: string): number {
  const count = parseWorkerCount(value);
  if (count === undefined) throw new InvalidArgumentError(`must be auto or 1..${MAX_WORKERS}`);
  return count;
}

function parseCollector(value: string): CollectorMode {
  const mode = parseCollectorMode(value);
  if (mode === undefined) throw new InvalidArgumentError('must be auto, single-threaded or concurrent');
  return mode;
}

function parseLogLevel(value: string): 'debug' | 'info' | 'warn' | 'error' | 'silent' {
  if (value === 'debug' || value === 'info' || value === 'warn' || value === 'error' || value === 'silent')
    return value;
  throw new InvalidArgumentError('must be debug, info, warn, error or silent');
}

program.parseAsync(process.argv).catch((error: unknown) => {
  // Airlock's own errors (ConfigError and the rest) are worded for this line; only a system
  // error's code (EADDRINUSE) needs saying in words.
  const message = isAirlockError(error)
    ? error.message
    : error instanceof Error
      ? `${(error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'address in use: ' : ''}${error.message}`
      : String(error);
  process.stderr.write(`airlock: ${message}\n`);
  process.exit(1);
});
