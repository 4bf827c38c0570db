/**
 * docs/MCP.md's host configs, tested as written: each JSON block is read from the page, its
 * placeholders are replaced as the page says (checkout, registry, state folder, tokens; VS
 * Code's `${input:…}` by what the person would type), and the server is started exactly as the
 * block says (command, args, env) from a build of this checkout. The official MCP client lists
 * the tools and calls one against a loopback A2A agent; the registry is the page's own, with
 * its card URLs pointed at that agent.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { CallResult } from '../src/client/index.js';
import { encodeCardV10 } from '../src/protocol/card.js';
import type { AgentCard } from '../src/protocol/model.js';
import { dialectForMethod } from '../src/protocol/version.js';
import { TRANSPILED_SOURCES } from './helpers/cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs', 'MCP.md'), 'utf8');
const TOKENS: Record<string, string> = {
  weather: 'tok-WEATHER-0123456789abcdefXYZ',
  shop: 'tok-SHOP-0123456789abcdefXYZ012',
};

/** The fenced block right after `<!-- mcp-doc: NAME -->`. */
function docBlock(name: string): string {
  const match = new RegExp(`<!-- mcp-doc: ${name} -->\\s*(?:<!--[^>]*-->\\s*)*\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(
    DOC,
  );
  assert.ok(match?.[1], `docs/MCP.md has no block ${name}`);
  return match[1];
}

interface StdioConfig {
  type?: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

interface Received {
  method: string;
  authorization: string | undefined;
}

/** A loopback A2A agent (v1.0): its card at the well-known path, JSON-RPC at /a2a. */
async function startAgent(name: string): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  let base = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = (payload: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
        const card: AgentCard = {
          name,
          description: 'A loopback agent.',
          version: '1.0.0',
          interfaces: [{ url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
          capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
          securitySchemes: {},
          securityRequirements: [],
          defaultInputModes: ['text/plain'],
          defaultOutputModes: ['text/plain'],
          skills: [],
        };
        return reply(encodeCardV10(card));
      }
      const frame = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number;
        method: string;
        params: unknown;
      };
      const dialect = dialectForMethod(frame.method)!;
      const request = dialect.decodeRequest(frame.method, frame.params);
      received.push({ method: frame.method, authorization: req.headers.authorization });
      const task = {
        id: `t-${received.length}`,
        contextId: 'ctx-1',
        status: { state: 'completed' as const, timestamp: '2026-01-01T00:00:00.000Z' },
        artifacts: [{ artifactId: 'a-1', parts: [{ kind: 'text' as const, text: `${name} says hello` }] }],
        history: [],
      };
      const result =
        request.method === 'send' ? dialect.encodeSendResult({ kind: 'task', task }) : dialect.encodeTask(task);
      return reply({ jsonrpc: '2.0', id: frame.id, result });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, received, server };
}

let dir = '';
let checkout = '';
let registry = '';
let state = '';
const agents: Record<string, Awaited<ReturnType<typeof startAgent>>> = {};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'airlock-mcp-hosts-'));
  // "Build Airlock once in your checkout": this checkout's build, in a folder of its own (the
  // repository's dist/ is left alone), with the package's manifest and dependencies.
  checkout = join(dir, 'airlock');
  mkdirSync(checkout);
  copyFileSync(join(ROOT, 'package.json'), join(checkout, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir');
  // Under `npm test` the run has transpiled src/ already, laid out as dist/ is.
  let failed = '';
  if (TRANSPILED_SOURCES !== undefined) cpSync(TRANSPILED_SOURCES, join(checkout, 'dist'), { recursive: true });
  else {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const build = spawnSync(
      process.execPath,
      [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(checkout, 'dist')],
      { encoding: 'utf8' },
    );
    failed = `${build.stdout}${build.stderr}`;
  }
  assert.ok(existsSync(join(checkout, 'dist', 'cli', 'main.js')), `build failed: ${failed}`);
  state = join(dir, 'state');
  mkdirSync(state);
  for (const name of ['weather', 'shop']) agents[name] = await startAgent(name);
  // The page's registry, its https card URLs pointed at the loopback agents.
  registry = join(dir, 'registry.yaml');
  writeFileSync(
    registry,
    docBlock('registry').replace(/https:\/\/(weather|shop)\.example\.com/g, (_all, name: string) => agents[name]!.url),
  );
});

after(async () => {
  for (const agent of Object.values(agents)) await new Promise<void>((resolve) => agent.server.close(() => resolve()));
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** Replaces the page's placeholders as it tells the reader to. */
function substitute(text: string, inputs: Record<string, string> = {}): string {
  return text
    .replaceAll('/ABSOLUTE/PATH/TO/airlock-state', state)
    .replaceAll('/ABSOLUTE/PATH/TO/airlock', checkout)
    .replaceAll('/ABSOLUTE/PATH/TO/registry.yaml', registry)
    .replace(/paste-the-(\w+)-token-here/g, (_all, name: string) => TOKENS[name]!)
    .replace(/\$\{input:([\w-]+)\}/g, (_all, id: string) => {
      const value = inputs[id];
      assert.ok(value !== undefined, `no answer for input ${id}`);
      return value;
    });
}

async function exercise(config: StdioConfig, autonomy: string): Promise<void> {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    env: config.env,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const mcp = new Client({ name: 'host', version: '0.0.0' });
  try {
    await mcp.connect(transport);
    const { tools } = await mcp.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['a2a_list_agents', 'a2a_send', 'a2a_get_task'],
    );
    const before = agents.weather!.received.length;
    const called = await mcp.callTool({ name: 'a2a_send', arguments: { agent: 'weather', message: 'Rain tomorrow?' } });
    const result = JSON.parse((called.content as Array<{ text: string }>)[0]!.text) as CallResult;
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.match(result.reply, /weather says hello/);
    assert.equal(agents.weather!.received.length, before + 1);
    assert.equal(agents.weather!.received.at(-1)?.authorization, `Bearer ${TOKENS.weather}`);
    // The acting entry under this config's autonomy: never sent without a person's yes (this
    // client cannot ask).
    const shopBefore = agents.shop!.received.length;
    const acting = await mcp.callTool({ name: 'a2a_send', arguments: { agent: 'shop', message: 'Order pens' } });
    assert.equal(acting.isError, true);
    assert.equal(agents.shop!.received.length, shopBefore);
    assert.match(stderr, new RegExp(`airlock mcp: serving over stdio; 2 agents \\(1 acting\\), autonomy ${autonomy}`));
    assert.doesNotMatch(stderr, new RegExp(`${TOKENS.weather}|${TOKENS.shop}`));
    assert.ok(existsSync(join(state, 'pins.json')), 'pins written where the config says');
    assert.ok(existsSync(join(state, 'audit.jsonl')), 'audit written where the config says');
  } finally {
    await mcp.close();
  }
}

describe('docs/MCP.md host configs, started as written', () => {
  it('Claude Desktop: mcpServers.airlock', async () => {
    const config = JSON.parse(substitute(docBlock('claude-desktop'))) as { mcpServers: { airlock: StdioConfig } };
    await exercise(config.mcpServers.airlock, 'read_only');
  });

  it('VS Code: servers.airlock, type stdio, tokens from inputs', async () => {
    const raw = JSON.parse(docBlock('vscode')) as { inputs: Array<{ id: string; password?: boolean }> };
    assert.ok(
      raw.inputs.every((input) => input.password === true),
      'tokens are asked as passwords',
    );
    const config = JSON.parse(
      substitute(docBlock('vscode'), { 'airlock-weather-token': TOKENS.weather!, 'airlock-shop-token': TOKENS.shop! }),
    ) as { servers: { airlock: StdioConfig } };
    assert.equal(config.servers.airlock.type, 'stdio');
    await exercise(config.servers.airlock, 'confirm');
  });

  it('a generic stdio host: command, args, env', async () => {
    await exercise(JSON.parse(substitute(docBlock('stdio'))) as StdioConfig, 'read_only');
  });

  it('Streamable HTTP: the URL the page gives is the one `mcp --http` serves', async () => {
    const config = JSON.parse(docBlock('http')) as { servers: { airlock: { type: string; url: string } } };
    assert.equal(config.servers.airlock.type, 'http');
    const documented = new URL(config.servers.airlock.url);
    assert.deepEqual([documented.hostname, documented.port, documented.pathname], ['127.0.0.1', '41249', '/mcp']);
    // The page's command, on a free port instead of 41249 (which may be taken on this machine).
    const child: ChildProcess = spawn(
      process.execPath,
      [join(checkout, 'dist', 'cli', 'main.js'), 'mcp', '--http', '--registry', registry, '--port', '0'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          AIRLOCK_SECRET_WEATHER: TOKENS.weather,
          AIRLOCK_SECRET_SHOP: TOKENS.shop,
          AIRLOCK_PINS: join(state, 'http-pins.json'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          const found = /airlock mcp listening on (\S+)/.exec(out);
          if (found?.[1]) resolve(found[1]);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const served = new URL(url);
      assert.deepEqual([served.hostname, served.pathname], [documented.hostname, documented.pathname]);
      const mcp = new Client({ name: 'host', version: '0.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(served));
      const called = await mcp.callTool({ name: 'a2a_send', arguments: { agent: 'weather', message: 'Wind?' } });
      assert.equal(called.isError ?? false, false);
      await mcp.close();
    } finally {
      child.kill('SIGTERM');
    }
  });
});
