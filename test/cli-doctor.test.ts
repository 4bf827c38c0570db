/**
 * `airlock doctor` against real parts: the config `airlock init` writes (the CLI in a child
 * process, in a temporary folder), and broken setups, each failing with its own line: a bad
 * config, a port in use, a SQLite store behind on migrations or not a database, PostgreSQL
 * (behind, current, unreachable), Redis (answering, unreachable), a tampered audit file, and
 * the registry's cards and pins (a real gateway serves the card).
 *
 * PostgreSQL and Redis come from DATABASE_URL / REDIS_URL, else 127.0.0.1; their cases are
 * skipped when unreachable (except under CI). Each PostgreSQL case uses its own schema.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { JsonlAuditSink } from '../src/audit/jsonl.js';
import { auditTime } from '../src/audit/events.js';
import { doctorCommand } from '../src/cli/doctor.js';
import { migrateTaskStore } from '../src/tasks/stores/index.js';
import { POSTGRES_MIGRATIONS } from '../src/tasks/stores/migrations/postgres.js';
import {
  POSTGRES_URL,
  REDIS_URL,
  dropSchema,
  postgresSkip,
  redisSkip,
  uniqueName,
} from './helpers/backing-services.js';
import { startGateway } from './helpers/gateway.js';
import { CLI } from './helpers/cli.js';

const pgSkip = await postgresSkip();
const redisSkipped = await redisSkip();

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-doctor-'));
  dirs.push(dir);
  return dir;
}
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function airlock(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [...CLI, ...args], { cwd, encoding: 'utf8', timeout: 30_000 });
}

/** A loopback port nobody listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** One agent, no clients, on a free port; `extra` adds top-level sections. */
async function configWith(extra: string): Promise<string> {
  const dir = tempDir();
  const path = join(dir, 'airlock.yaml');
  writeFileSync(
    path,
    `server: { port: ${await freePort()} }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes. }]
    backend: { type: echo }
${extra}`,
  );
  return path;
}

/** Runs doctor in this process; returns its exit code and printed lines. */
async function doctor(config: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; lines: string[] }> {
  let text = '';
  const code = await doctorCommand({ config, env }, { stdout: (chunk) => void (text += chunk) });
  return { code, lines: text.trimEnd().split('\n') };
}

function lineOf(lines: readonly string[], check: string): string {
  const found = lines.filter((line) => line.slice(6).startsWith(`${check} `));
  assert.equal(found.length, 1, `one ${check} line in:\n${lines.join('\n')}`);
  return found[0]!;
}

describe('airlock doctor', () => {
  it('passes on the config airlock init writes (the CLI, in its folder)', async () => {
    const dir = tempDir();
    const port = await freePort();
    assert.equal(airlock(['init', '--port', String(port)], dir).status, 0);
    const run = airlock(['doctor'], dir);
    assert.equal(run.stderr, '');
    assert.equal(
      run.stdout,
      [
        'ok    config    airlock.yaml: 1 agent, 1 client',
        'ok    tokens    1 token, 1 from a file (0600)',
        `ok    port      127.0.0.1:${port} is free`,
        'ok    store     memory: tasks do not survive a restart',
        'skip  redis     not configured',
        'ok    audit     .airlock/audit.jsonl does not exist yet; airlock serve creates it',
        'skip  registry  no upstreams configured',
        'all good: 5 ok, 2 skipped',
        '',
      ].join('\n'),
    );
    assert.equal(run.status, 0);
    assert.equal(existsSync(join(dir, '.airlock/audit.jsonl')), false, 'doctor created nothing');
  });

  it('a config that does not load: one line, the loader reason, exit 1', async () => {
    const path = await configWith('clients:\n  - { id: me, token: too-short, agents: [echo] }\n');
    const { code, lines } = await doctor(path);
    assert.equal(code, 1);
    assert.deepEqual(lines, [
      'fail  config    config: clients[0].token: token must be at least 32 characters (generate one with: airlock tokens new <client>)',
      '1 failed (config): 0 ok',
    ]);
    const missing = await doctor(join(tempDir(), 'nope.yaml'));
    assert.equal(missing.code, 1);
    assert.match(
      missing.lines[0]!,
      /^fail {2}config {4}\/.*nope\.yaml not found: write a starter config with npx airlock init, or name one with --config$/,
    );
  });

  it('a port in use by another process fails', async () => {
    // It reads what it is sent (and so sees the probe hang up), but never answers.
    const server: Server = createServer((socket) => socket.resume());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(() => new Promise((done) => server.close(() => done())));
    const { port } = server.address() as { port: number };
    const path = await configWith('');
    writeFileSync(path, readFileSync(path, 'utf8').replace(/port: \d+/, `port: ${port}`));
    const { code, lines } = await doctor(path);
    assert.equal(code, 1);
    assert.equal(lineOf(lines, 'port'), `fail  port      127.0.0.1:${port} is in use by another process`);
    assert.equal(lines.at(-1), '1 failed (port): 2 ok, 4 skipped');
  });

  it('SQLite: a file behind on migrations, or not a database, fails; doctor migrates nothing', async () => {
    const dir = tempDir();
    const behind = join(dir, 'behind.db');
    const { default: Database } = await import('better-sqlite3');
    const { migrateSqlite, SQLITE_MIGRATIONS } = await import('../src/tasks/stores/migrations/sqlite.js');
    const db = new Database(behind);
    migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, 1));
    db.close();
    const path = await configWith(`store: { type: sqlite, path: ${behind} }\n`);
    const first = await doctor(path);
    assert.equal(first.code, 1);
    assert.equal(
      lineOf(first.lines, 'store'),
      `fail  store     sqlite:${behind}: schema version 1, this build needs ${SQLITE_MIGRATIONS.length}: run npx airlock db migrate --config ${path}`,
    );
    assert.equal(lineOf((await doctor(path)).lines, 'store'), lineOf(first.lines, 'store'), 'still behind');
    await migrateTaskStore({ type: 'sqlite', path: behind });
    assert.equal(
      lineOf((await doctor(path)).lines, 'store'),
      `ok    store     sqlite:${behind}: schema version ${SQLITE_MIGRATIONS.length} (current)`,
    );
    const corrupt = join(dir, 'corrupt.db');
    writeFileSync(corrupt, 'not a database '.repeat(100));
    const broken = await doctor(await configWith(`store: { type: sqlite, path: ${corrupt} }\n`));
    assert.equal(
      lineOf(broken.lines, 'store'),
      `fail  store     sqlite:${corrupt} cannot be read: file is not a database`,
    );
  });

  it('PostgreSQL: behind fails, current passes, unreachable fails', { skip: pgSkip }, async () => {
    const schema = uniqueName('doctor');
    cleanups.push(() => dropSchema(schema));
    const store = `store: { type: postgres, url: '${POSTGRES_URL}', schema: ${schema} }\n`;
    const path = await configWith(store);
    const shown = `postgres://postgres@127.0.0.1:5432/test (schema ${schema})`;
    const fresh = await doctor(path);
    assert.equal(
      lineOf(fresh.lines, 'store'),
      `fail  store     ${shown}: schema version 0, this build needs ${POSTGRES_MIGRATIONS.length}: run npx airlock db migrate --config ${path}`,
    );
    assert.equal(fresh.code, 1);
    await migrateTaskStore({ type: 'postgres', url: POSTGRES_URL, schema });
    const current = await doctor(path);
    assert.equal(
      lineOf(current.lines, 'store'),
      `ok    store     ${shown}: schema version ${POSTGRES_MIGRATIONS.length} (current)`,
    );
    assert.equal(current.code, 0);
    const port = await freePort();
    const down = await doctor(
      await configWith(`store: { type: postgres, url: 'postgres://airlock:pw@127.0.0.1:${port}/x' }\n`),
    );
    assert.equal(
      lineOf(down.lines, 'store'),
      `fail  store     postgres://airlock@127.0.0.1:${port}/x is unreachable: ECONNREFUSED`,
    );
    assert.ok(!down.lines.join('\n').includes('pw@'), 'no password printed');
  });

  it('Redis: PING answered passes, an unreachable port fails', { skip: redisSkipped }, async () => {
    const up = await doctor(await configWith(`redis: { url: '${REDIS_URL}' }\n`));
    assert.equal(lineOf(up.lines, 'redis'), `ok    redis     ${REDIS_URL} answers PING`);
    assert.equal(up.code, 0);
    const port = await freePort();
    const down = await doctor(await configWith(`redis: { url: 'redis://:secret@127.0.0.1:${port}' }\n`));
    assert.equal(lineOf(down.lines, 'redis'), `fail  redis     redis://127.0.0.1:${port} is unreachable: ECONNREFUSED`);
    assert.equal(down.code, 1);
  });

  it('the audit file: an intact chain passes, a tampered one fails at its line', async () => {
    const file = join(tempDir(), 'audit.jsonl');
    const sink = new JsonlAuditSink(file);
    const time = auditTime(new Date('2026-01-01T00:00:00.000Z'));
    for (const inputChars of [5, 7]) {
      sink.write({
        type: 'a2a.task.submitted',
        time,
        outcome: 'ok',
        client: 'me',
        agent: 'echo',
        taskId: `t-${inputChars}`,
        contextId: 'c',
        inputChars,
      });
    }
    sink.close();
    const path = await configWith(`audit: { file: ${file} }\n`);
    assert.equal(lineOf((await doctor(path)).lines, 'audit'), `ok    audit     ${file}: chain intact, 2 rows`);
    writeFileSync(file, readFileSync(file, 'utf8').replace('"inputChars":7', '"inputChars":8'));
    const tampered = await doctor(path);
    assert.equal(
      lineOf(tampered.lines, 'audit'),
      `fail  audit     ${file}: chain broken at line 2: bad_hash (1 rows checked); move it aside before serving`,
    );
    assert.equal(tampered.code, 1);
  });

  it('the registry: a card that matches passes without being pinned; a pin it does not match fails', async () => {
    // Its own instance id: in this one process, the outbound hop header would otherwise name it (a loop).
    const upstream = await startGateway(undefined, { server: { instanceId: 'doctor-test-upstream' } });
    cleanups.push(() => upstream.close());
    const dir = tempDir();
    const registry = join(dir, 'registry.yaml');
    writeFileSync(
      registry,
      `agents:\n  - name: upstream\n    card_url: ${upstream.url}/a2a/echo/.well-known/agent-card.json\n    description: The echo upstream.\n    effect: read_only\n`,
    );
    const pins = join(dir, 'pins.json');
    const path = await configWith(`upstreams: { registry: ${registry}, pins: ${pins} }\n`);
    const first = await doctor(path);
    const line = lineOf(first.lines, 'registry');
    assert.match(line, /^ok {4}registry {2}upstream: card ok, not pinned yet: the first call pins [0-9a-f]{12}$/);
    assert.equal(existsSync(pins), false, 'doctor pinned nothing');
    writeFileSync(
      pins,
      JSON.stringify({
        version: 1,
        pins: { upstream: { digest: 'a'.repeat(64), pinnedAt: '2026-01-01T00:00:00.000Z', source: 'operator' } },
      }),
    );
    const drifted = await doctor(path);
    assert.match(lineOf(drifted.lines, 'registry'), /^fail {2}registry {2}upstream: card_pin_mismatch: /);
    assert.equal(drifted.code, 1);
    assert.doesNotMatch(readFileSync(pins, 'utf8'), /drift/, 'no drift mark written');
  });
});
