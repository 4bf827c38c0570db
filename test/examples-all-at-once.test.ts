/**
 * Every example at once (issue 19): `airlock serve` for each file of examples/ started side by
 * side from one folder, as a person trying them would (state under `.airlock/`), each on the port
 * it ships with. Each serves (its card, and a 401 for a call without a token, which is an audit
 * row), and after they stop each audit file verifies: no two wrote one file or fought for a port.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { parse, parseDocument } from 'yaml';
import { CLI } from './helpers/cli.js';

interface Example {
  readonly name: string;
  readonly slug: string;
  readonly port: number;
  readonly audit: string | undefined;
}

const examples: Example[] = readdirSync('examples')
  .filter((name) => name.endsWith('.yaml') && !name.endsWith('.registry.yaml') && name !== 'registry.yaml')
  .map((name) => {
    const config = parse(readFileSync(join('examples', name), 'utf8')) as {
      server: { port: number };
      agents: { slug: string }[];
      audit?: { file?: string };
    };
    return { name, slug: config.agents[0]!.slug, port: config.server.port, audit: config.audit?.file };
  });

interface Running {
  readonly example: Example;
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<number | null>;
}

/**
 * Starts `airlock serve` for one example in `cwd` (its shipped config, or `config` relative to
 * `cwd`) and resolves once it listens.
 */
function serve(cwd: string, example: Example, config = join('examples', example.name)): Promise<Running> {
  const child = spawn(process.execPath, [...CLI, 'serve', '--config', config, '--log-level', 'silent'], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, AIRLOCK_DEMO_TOKEN: '', AIRLOCK_ALICE_TOKEN: '' },
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolveRunning, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${example.name}: not listening after 30 s: ${stderr}`));
    }, 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^airlock listening on (\S+)$/.exec(line);
      if (match === null) return;
      clearTimeout(timer);
      resolveRunning({ example, child, url: match[1]!, exited });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${example.name}: serve exited (${code}) before listening: ${stderr}`));
    });
  });
}

/** How long an example whose port is taken keeps being started again. */
const PORT_RETRY_MS = 5_000;

/**
 * As `serve`, again (250 ms after each failure, until 5 s have passed) when the port was taken:
 * the examples' ports lie in Linux's ephemeral range, so an outgoing connection of any process on
 * the machine can hold one for a moment (a kept-alive one for seconds: three tries in 750 ms once
 * fell short on 41248). The ports are held by this process before any example starts (see
 * before()): five seconds of tries once fell short on 41248 too, most likely a connection made by
 * an example already running, which can keep its local port for the whole run. A port another
 * process keeps longer than the tries is given up for a free one (see movedConfig).
 */
function serveWhenFree(cwd: string, example: Example, config?: string): Promise<Running> {
  return whilePortTaken(() => serve(cwd, example, config));
}

/**
 * A copy of `example`'s config under `cwd`/moved/ that serves on `port`, for a shipped port another
 * process kept past {@link PORT_RETRY_MS} (a long-lived outgoing connection of any process can hold
 * one for minutes). Its relative paths still resolve from `cwd`. Returns its path relative to `cwd`.
 */
function movedConfig(cwd: string, example: Example, port: number): string {
  const document = parseDocument(readFileSync(join('examples', example.name), 'utf8'));
  document.setIn(['server', 'port'], port);
  mkdirSync(join(cwd, 'moved'), { recursive: true });
  writeFileSync(join(cwd, 'moved', example.name), document.toString());
  return join('moved', example.name);
}

/** What holds `port` on this machine, as `ss` sees it (for the diagnostic of a moved example). */
function holderOf(port: number): string {
  const listed = spawnSync('ss', ['-tanpH', `sport = :${port}`], { encoding: 'utf8' });
  return listed.status === 0 ? listed.stdout.trim().replace(/\s+/g, ' ') || 'nothing now' : 'ss unavailable';
}

/** A listener on 127.0.0.1:`port`, retried as {@link serveWhenFree} is: the port may be held for a moment. */
function holdWhenFree(port: number): Promise<Server> {
  return whilePortTaken(
    () =>
      new Promise<Server>((listening, failed) => {
        const server = createServer();
        server.once('error', failed);
        server.listen(port, '127.0.0.1', () => listening(server));
      }),
  );
}

/** `attempt` again, 250 ms after each EADDRINUSE, until {@link PORT_RETRY_MS} have passed. */
async function whilePortTaken<T>(attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + PORT_RETRY_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() >= deadline || !(error instanceof Error) || !error.message.includes('EADDRINUSE')) throw error;
      await new Promise((done) => setTimeout(done, 250));
    }
  }
}

function release(server: Server): Promise<void> {
  return new Promise((closed) => server.close(() => closed()));
}

describe('every example at once, from one folder', () => {
  let dir: string;
  const running: Running[] = [];
  const moved: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-examples-'));
    // The examples name files relative to the repository (modules, programs, the MCP server).
    symlinkSync(resolve('examples'), join(dir, 'examples'));
    symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
    mkdirSync(join(dir, '.airlock', 'tools', 'sandbox'), { recursive: true });
    // Every port is held by a listener of this process first, so that no outgoing connection (an
    // example's own, once it runs, or any other process's) is given one as its local port; each is
    // let go just before its example starts, one example at a time.
    // A port some other process keeps past the retries is not the examples' doing (that no two
    // examples ship one port is test/examples-side-by-side.test.ts's check): that example serves on
    // a free port instead, from a copy of its config, and the test says so.
    const held = new Map<Example, Server>();
    const configs = new Map<Example, string>();
    try {
      for (const example of examples) {
        try {
          held.set(example, await holdWhenFree(example.port));
        } catch (error) {
          if (!(error instanceof Error) || !error.message.includes('EADDRINUSE')) throw error;
          const free = await holdWhenFree(0);
          const port = (free.address() as AddressInfo).port;
          held.set(example, free);
          configs.set(example, movedConfig(dir, example, port));
          moved.push(
            `${example.name}: port ${example.port} held by another process (${holderOf(example.port)}); served on ${port}`,
          );
        }
      }
      for (const example of examples) {
        await release(held.get(example)!);
        held.delete(example);
        // Every one that did start is stopped by after(), even when a later one fails to.
        running.push(await serveWhenFree(dir, example, configs.get(example)));
      }
    } finally {
      for (const server of held.values()) await release(server);
    }
  });
  after(async () => {
    for (const { child, exited } of running) {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'each serves on its own port: its card, and a call without a token (an audit row)',
    { timeout: 60_000 },
    async (t) => {
      for (const line of moved) t.diagnostic(line);
      assert.equal(running.length, examples.length);
      assert.equal(new Set(running.map((run) => run.url)).size, running.length, 'one port each');
      for (const { example, url } of running) {
        const card = await fetch(`${url}/a2a/${example.slug}/.well-known/agent-card.json`);
        assert.equal(card.status, 200, `${example.name}: card`);
        await card.arrayBuffer();
        const call = await fetch(`${url}/a2a/${example.slug}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}',
        });
        // 401 (audited auth_failed), or for an anonymousLoopback agent (tck) an answer (audited as a call).
        assert.ok(
          call.status === 401 || call.status === 200,
          `${example.name}: a call without a token: ${call.status}`,
        );
        await call.arrayBuffer();
      }
    },
  );

  it('after they stop, each audit file verifies', { timeout: 60_000 }, async () => {
    for (const { child, exited } of running) {
      child.kill('SIGTERM');
      await exited;
    }
    const audited = running.filter((run) => run.example.audit !== undefined);
    assert.ok(audited.length >= 6, `${audited.length} examples keep an audit file`);
    for (const { example } of audited) {
      const verified = spawnSync(process.execPath, [...CLI, 'audit', 'verify', example.audit!], {
        cwd: dir,
        encoding: 'utf8',
      });
      assert.equal(verified.status, 0, `${example.name}: ${verified.stdout}${verified.stderr}`);
      assert.match(verified.stdout, /^ok: \d+ rows\n$/, example.name);
    }
  });
});
