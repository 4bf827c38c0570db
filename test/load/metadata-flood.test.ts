/**
 * Issue 16, item 1, "Done when": one client sending maximal metadata at the maximum rate the
 * default limits allow cannot make the gateway's memory grow without bound.
 *
 * `airlock serve` runs in a child process with the default limits (memory store, 600 requests per
 * minute per principal: a burst of 600, then one every 100 ms). One client sends SendMessage with
 * a one-character text and `message.metadata` just under `limits.maxMetadataBytes` (4096 bytes of
 * JSON): the burst at once, then one request every 100 ms, for the duration (20 s in CI; 60 s with
 * `--long` or METADATA_FLOOD_SECONDS=60). The child's RSS is sampled; it must stay bounded (max
 * growth) and flat over the second half (slope).
 *
 * The contrast run reproduces the original finding: the same client against a gateway whose cap
 * is raised to the body size (`maxMetadataBytes: 1048576`, i.e. no metadata cap, as before the
 * fix) with its heap capped at 384 MB, sending ~1 MB of metadata per request: RSS grows by
 * about a megabyte per request (hundreds of MB within seconds), or the child dies of heap
 * exhaustion.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { REPO_ROOT, sampleRss, slopeMbPerMin, type RssSample } from './soak-lib.js';
import { CLI } from '../helpers/cli.js';

const TOKEN = 'metadata-flood-token-0123456789abcdef0123';
const LONG = process.argv.includes('--long');
const SECONDS = Number(process.env.METADATA_FLOOD_SECONDS ?? (LONG ? 60 : 20));
/** The default limits.requestsPerMinute: a burst of this many, then one per 60 000 / it ms. */
const RATE = 600;
const BURST_CONCURRENCY = 16;

interface Child {
  endpoint: string;
  pid: number;
  stderr(): string;
  dead(): boolean;
  stop(): Promise<void>;
}

async function startServe(
  limits: string | undefined,
  nodeArgs: readonly string[] = [],
  store?: string,
): Promise<Child> {
  const workDir = mkdtempSync(join(tmpdir(), 'airlock-metadata-flood-'));
  const configPath = join(workDir, 'airlock.yaml');
  writeFileSync(
    configPath,
    [
      'server: { host: 127.0.0.1, port: 0 }',
      ...(limits === undefined ? [] : [`limits: ${limits}`]),
      ...(store === undefined ? [] : [`store: ${store}`]),
      'agents:',
      '  - slug: echo',
      '    name: Echo',
      '    description: Echoes.',
      '    skills: [{ id: echo, name: Echo, description: Echoes text }]',
      '    backend: { type: echo }',
      'clients:',
      "  - { id: a, token: '${FLOOD_TOKEN}', agents: [echo] }",
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', FLOOD_TOKEN: TOKEN };
  delete env.DATABASE_URL; // the memory store: the default
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs, ...CLI, 'serve', '--config', configPath, '--log-level', 'silent'],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start\n${stderr}`)), 30_000);
    child.once('exit', () => reject(new Error(`gateway exited\n${stderr}`)));
    // The banner is on stdout; readline keeps draining it after the first line.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match === null) return;
      clearTimeout(timer);
      resolve(match[1] as string);
    });
  });
  return {
    endpoint: `${baseUrl}/a2a/echo`,
    pid: child.pid as number,
    stderr: () => stderr,
    dead: () => child.exitCode !== null || child.signalCode !== null,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}

/** A SendMessage body with a one-character text and metadata whose JSON is `metadataBytes` long. */
function sendBody(metadataBytes: number, n: number): string {
  const pad = 'x'.repeat(metadataBytes - '{"pad":""}'.length);
  return JSON.stringify({
    jsonrpc: '2.0',
    id: n,
    method: 'SendMessage',
    params: { message: { messageId: `m-${n}`, role: 'ROLE_USER', parts: [{ text: 'x' }], metadata: { pad } } },
  });
}

function post(endpoint: string, agent: Agent, body: string): Promise<{ status: number; ok: boolean }> {
  return new Promise((resolve) => {
    const req = request(
      endpoint,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${TOKEN}` },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ok: text.includes('"result"') }));
        res.on('error', () => resolve({ status: 0, ok: false }));
      },
    );
    req.on('error', () => resolve({ status: 0, ok: false }));
    req.end(body);
  });
}

interface FloodRun {
  accepted: number;
  refused: number;
  failed: number;
  samples: RssSample[];
  died: boolean;
}

/** The client: the burst the rate limit allows, then one request per interval, for `seconds`. */
async function flood(child: Child, metadataBytes: number, seconds: number): Promise<FloodRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: BURST_CONCURRENCY });
  const run: FloodRun = { accepted: 0, refused: 0, failed: 0, samples: [], died: false };
  const sampler = sampleRss(child.pid, 500);
  const count = (result: { status: number; ok: boolean }): void => {
    if (result.ok) run.accepted++;
    else if (result.status === 429) run.refused++;
    else run.failed++;
  };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let n = 0;
  try {
    // The burst: RATE requests, BURST_CONCURRENCY at a time (the per-principal concurrency cap).
    let next = 0;
    await Promise.all(
      Array.from({ length: BURST_CONCURRENCY }, async () => {
        while (next < RATE && performance.now() < deadline && !child.dead()) {
          next++;
          count(await post(child.endpoint, agent, sendBody(metadataBytes, n++)));
        }
      }),
    );
    // Then the steady rate: one request every 60 000 / RATE ms (a hair slower, never refused).
    const interval = 60_000 / RATE + 1;
    const pending: Promise<void>[] = [];
    for (let at = performance.now(); at < deadline && !child.dead(); at += interval) {
      const wait = at - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      pending.push(post(child.endpoint, agent, sendBody(metadataBytes, n++)).then(count));
    }
    await Promise.all(pending);
  } finally {
    run.samples = sampler.stop();
    run.died = child.dead();
    agent.destroy();
  }
  return run;
}

function describeRun(label: string, run: FloodRun): string {
  const first = run.samples[0]?.mb ?? Number.NaN;
  const last = run.samples.at(-1)?.mb ?? Number.NaN;
  const max = Math.max(...run.samples.map((sample) => sample.mb));
  return (
    `${label}: accepted ${run.accepted}, refused ${run.refused}, failed ${run.failed}; ` +
    `RSS ${first.toFixed(1)} → ${last.toFixed(1)} MB, max ${max.toFixed(1)} MB` +
    (run.died ? ' (the gateway died)' : '')
  );
}

describe(`metadata flood: maximal metadata at the maximum default rate for ${SECONDS} s keeps RSS flat`, () => {
  it('default limits: RSS stays bounded and flat', { timeout: (SECONDS + 60) * 1000 }, async () => {
    const child = await startServe(undefined);
    try {
      const run = await flood(child, 4096, SECONDS);
      console.log(`# ${describeRun('capped (default limits, 4096-byte metadata)', run)}`);
      assert.equal(run.died, false, child.stderr());
      assert.equal(run.failed, 0, 'every request is answered with a result or a 429');
      // The client did send at the maximum rate: the burst and the steady rate.
      assert.ok(run.accepted >= RATE + (SECONDS - 2) * 9, `accepted ${run.accepted}`);
      const first = run.samples[0]!.mb;
      const max = Math.max(...run.samples.map((sample) => sample.mb));
      // ~1.2k tasks of ~4 KiB metadata each are ~5 MB of data; 64 MB is room for V8 and nothing more.
      assert.ok(max - first < 64, `RSS grew ${(max - first).toFixed(1)} MB`);
      const secondHalf = run.samples.filter((sample) => sample.t >= SECONDS / 2);
      const slope = slopeMbPerMin(secondHalf);
      console.log(`# capped: slope over the second half ${slope.toFixed(1)} MB/min`);
      assert.ok(slope < 60, `RSS slope ${slope.toFixed(1)} MB/min over the second half`);
    } finally {
      await child.stop();
    }
  });

  it(
    'the original finding, with the cap lifted to the body size: RSS grows (or the gateway dies)',
    { timeout: 90_000 },
    async () => {
      // The store's own byte bound (store.maxBytes) would evict these tasks too: lifted as well,
      // so this run shows what the metadata cap alone stands between.
      const child = await startServe(
        '{ maxMetadataBytes: 1048576, maxMetadataKeys: 1000000 }',
        ['--max-old-space-size=384'],
        '{ type: memory, maxBytes: 68719476736 }',
      );
      try {
        const run = await flood(child, 1000 * 1000, Math.min(SECONDS, 10));
        console.log(`# ${describeRun('uncapped (maxMetadataBytes = body size, 384 MB heap, ~1 MB metadata)', run)}`);
        const first = run.samples[0]!.mb;
        const max = Math.max(...run.samples.map((sample) => sample.mb));
        // Every accepted request keeps its ~1 MB: growth tracks the requests (how many get in within
        // the run depends on the machine), well past the capped run's bound.
        const grown = max - first;
        assert.ok(
          run.died || (grown > 64 && grown > run.accepted * 0.5),
          `RSS grew only ${grown.toFixed(1)} MB for ${run.accepted} requests`,
        );
      } finally {
        await child.stop();
      }
    },
  );
});
