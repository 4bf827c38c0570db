/**
 * The bench's floors (bench/peers/floor-http.ts) are what Airlock's rows are judged against, so a
 * floor that answered without doing its work would flatter nothing but would mislead every
 * reading. These start the guarded floor as `bench:pair` does and check that it does the work and
 * refuses what Airlock refuses: on the memory row (audit rows written), on the SQLite row (its
 * tasks in the SQLite table, no audit rows) and on the PostgreSQL row (its tasks in its schema's
 * table, each client's share kept).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { BENCH_DATABASE_URL } from '../bench/lib/common.js';
import { messageSend, requestHeaders } from '../bench/lib/inbound-config.js';

const TOKEN = 'floor-test-token-0123456789abcdef';
const children: ChildProcess[] = [];
const dirs: string[] = [];

after(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Starts the floor with `env`; its base URL once it prints its listening line. */
async function startFloor(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/peers/floor-http.ts'], {
    env: { ...process.env, BENCH_TOKEN: TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const match = /listening on (http:\/\/\S+)/.exec(seen);
      if (match !== null) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`floor exited (${code}) before listening`)));
  });
  return { url, child };
}

/** A POST declaring `length` bytes and sending none: its status and `Connection` header. */
function declareOnly(url: string, length: number): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((answered, failed) => {
    const req = request(url, {
      method: 'POST',
      headers: { ...requestHeaders(TOKEN), 'content-length': String(length) },
    });
    req.on('response', (res) => {
      res.resume();
      answered({ status: res.statusCode ?? 0, connection: res.headers.connection });
    });
    req.on('error', failed);
    req.flushHeaders();
  });
}

function send(url: string, headers: Record<string, string>, body = messageSend('hello')): Promise<Response> {
  return fetch(url, { method: 'POST', headers, body });
}

describe('the guarded floor (bench/peers/floor-http.ts, FLOOR_GUARDS=1)', () => {
  it('on the memory row: answers a completed task, writes its two audit rows, refuses what Airlock refuses', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floor-test-'));
    dirs.push(dir);
    const auditFile = join(dir, 'audit.jsonl');
    const { url } = await startFloor({ FLOOR_GUARDS: '1', FLOOR_AUDIT_FILE: auditFile });
    const ok = await send(url, requestHeaders(TOKEN));
    assert.equal(ok.status, 200);
    const reply = (await ok.json()) as {
      result: { status: { state: string }; artifacts: { parts: { text: string }[] }[] };
    };
    assert.equal(reply.result.status.state, 'completed');
    assert.equal(reply.result.artifacts[0]!.parts[0]!.text, 'hello');
    const rows = readFileSync(auditFile, 'utf8').trim().split('\n');
    assert.deepEqual(
      rows.map((row) => (JSON.parse(row) as { type: string }).type),
      ['a2a.task.submitted', 'a2a.task.completed'],
    );
    // The guards run: no token, a form Content-Type, JSON nested past the depth limit.
    assert.equal((await send(url, { 'content-type': 'application/json' })).status, 401);
    // As Airlock's JSON-RPC route answers it: a JSON-RPC error (-32005) over HTTP 200.
    const form = await send(url, { ...requestHeaders(TOKEN), 'content-type': 'text/plain' });
    assert.equal(((await form.json()) as { error: { code: number } }).error.code, -32005);
    const deep = `${'['.repeat(100)}${']'.repeat(100)}`;
    assert.equal((await send(url, requestHeaders(TOKEN), deep)).status, 400);
    // Over the body cap (1 MiB) by its Content-Length: 413 before any byte is read, as Airlock
    // answers it (the project's bodyRefused), and the connection closed.
    assert.deepEqual(await declareOnly(url, 1024 * 1024 + 1), { status: 413, connection: 'close' });
  });

  it('on the SQLite row: the task is in its table, and no audit row is written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floor-test-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const { url } = await startFloor({ FLOOR_GUARDS: '1', FLOOR_AUDIT: '0', FLOOR_STORE: 'sqlite', FLOOR_DATA: data });
    const ok = await send(url, requestHeaders(TOKEN));
    assert.equal(ok.status, 200);
    const { result } = (await ok.json()) as { result: { id: string; status: { state: string } } };
    assert.equal(result.status.state, 'completed');
    // The reply is sent after the turn's transaction: the row is there by now.
    const db = new Database(join(data, 'floor.db'), { readonly: true });
    try {
      assert.equal(db.prepare('SELECT count(*) FROM tasks WHERE id = ?').pluck().get(result.id), 1);
    } finally {
      db.close();
    }
    assert.equal(existsSync(join(dir, 'audit.jsonl')), false);
    assert.equal((await send(url, { 'content-type': 'application/json' })).status, 401);
  });

  it('on the PostgreSQL row: the task is in its schema before the reply, and the share of 1,000 holds', async () => {
    const schema = `airlock_floor_test_${process.pid}`;
    const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      const { url } = await startFloor({
        FLOOR_GUARDS: '1',
        FLOOR_AUDIT: '0',
        FLOOR_STORE: 'postgres',
        DATABASE_URL: BENCH_DATABASE_URL,
        FLOOR_SCHEMA: schema,
      });
      const ok = await send(url, requestHeaders(TOKEN));
      assert.equal(ok.status, 200);
      const { result } = (await ok.json()) as { result: { id: string } };
      // The reply is sent after its batch's commit: the row is there by now.
      const one = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.tasks WHERE id = $1`, [
        result.id,
      ]);
      assert.equal(one.rows[0]!.n, 1);
      // 1,010 tasks of one client, 20 at a time: its oldest finished ones give way past 1,000.
      let next = 0;
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          while (next++ < 1_009) assert.equal((await send(url, requestHeaders(TOKEN))).status, 200);
        }),
      );
      const all = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.tasks`);
      assert.equal(all.rows[0]!.n, 1_000);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  });
});
