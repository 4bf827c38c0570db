/**
 * Graceful stop (SIGTERM) of the real `airlock serve` process on SQLite: `/readyz` answers 503 at
 * once while `/healthz` stays up, a new turn is refused with 503 + Retry-After (audited
 * `draining`), the running tasks and an open stream finish, and the process exits 0 — with no
 * acknowledged task lost (a restart on the same data finds each one completed) and the audit
 * chain intact. With a turn longer than `drainSeconds`, the task is failed saying why, and the
 * process still exits 0.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { verifyAuditFile } from '../src/audit/verify.js';
import { TOKEN_A, rpc, rpcStream } from './helpers/gateway.js';
import { exitOf, killHard, startServe, type ServeProcess } from './helpers/serve-process.js';

const v1 = { token: TOKEN_A, version: '1.0' } as const;

function config(dir: string, chunkDelayMs: number, drainSeconds: number): string {
  const path = join(dir, 'airlock.yaml');
  writeFileSync(
    path,
    `
server: { host: 127.0.0.1, port: 0, drainSeconds: ${drainSeconds} }
audit: { file: ${JSON.stringify(join(dir, 'audit.jsonl'))} }
agents:
  - slug: writer
    name: Writer
    description: Writes slowly.
    skills: [{ id: write, name: Write, description: Writes }]
    backend: { type: writer, chunkDelayMs: ${chunkDelayMs} }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [writer] }
`,
  );
  return path;
}

function message(text: string): unknown {
  return { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] };
}

async function startTask(base: string, text: string): Promise<string> {
  const sent = await rpc(
    `${base}/a2a/writer`,
    'SendMessage',
    { message: message(text), configuration: { returnImmediately: true } },
    v1,
  );
  const id = sent.body.result?.task?.id;
  assert.equal(typeof id, 'string', JSON.stringify(sent.body));
  return id as string;
}

const running: ServeProcess[] = [];
const dirs: string[] = [];
after(async () => {
  for (const server of running) await killHard(server);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-drain-'));
  dirs.push(dir);
  return dir;
}

describe('drain on SIGTERM', () => {
  it(
    'refuses new turns, lets running ones and their stream finish, exits 0, loses nothing',
    { timeout: 60_000 },
    async () => {
      const dir = tempDir();
      const path = config(dir, 300, 20);
      const server = await startServe(path, join(dir, 'data'), { TOKEN_A });
      running.push(server);
      const base = server.url;
      assert.equal((await fetch(`${base}/readyz`)).status, 200);

      const ids = await Promise.all(['tides', 'rivers', 'rain'].map((text) => startTask(base, text)));
      const stream = rpcStream(`${base}/a2a/writer`, 'SendStreamingMessage', { message: message('wind') }, v1);
      await new Promise((resolve) => setTimeout(resolve, 150));

      server.child.kill('SIGTERM');
      const started = Date.now();
      // Not ready at once; still alive.
      let ready = await fetch(`${base}/readyz`);
      for (let attempt = 0; ready.status === 200 && attempt < 40; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        ready = await fetch(`${base}/readyz`);
      }
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), { status: 'not_ready', reason: 'draining' });
      assert.ok(Date.now() - started < 1_500, 'readiness turned at once');
      assert.equal((await fetch(`${base}/healthz`)).status, 200);

      // A new turn is refused, saying why and when to come back; reading a running task is not.
      const refused = await rpc(`${base}/a2a/writer`, 'SendMessage', { message: message('late') }, v1);
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.match(JSON.stringify(refused.body), /shutting down/);
      const read = await rpc(`${base}/a2a/writer`, 'GetTask', { id: ids[0] }, v1);
      assert.ok(read.body.result?.id === ids[0], JSON.stringify(read.body));

      // The stream that was open ends with its task completed.
      const streamed = await stream;
      const states = streamed.events.map((event: any) => event.result?.statusUpdate?.status?.state).filter(Boolean);
      assert.equal(states.at(-1), 'TASK_STATE_COMPLETED', JSON.stringify(states));

      assert.equal(await exitOf(server), 0, server.output());

      // Restart on the same data: every acknowledged task is there, completed (not failed by the stop).
      const again = await startServe(path, join(dir, 'data'), { TOKEN_A });
      running.push(again);
      for (const id of ids) {
        const got = await rpc(`${again.url}/a2a/writer`, 'GetTask', { id }, v1);
        assert.equal(got.body.result?.status?.state, 'TASK_STATE_COMPLETED', `${id}: ${JSON.stringify(got.body)}`);
      }
      again.child.kill('SIGTERM');
      assert.equal(await exitOf(again), 0);

      const verified = await verifyAuditFile(join(dir, 'audit.jsonl'));
      assert.equal(verified.ok, true, JSON.stringify(verified));
      const rows = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
      assert.match(rows, /"reason":"draining"/);
    },
  );

  it('fails a turn that outlasts drainSeconds, saying why, and still exits 0', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const path = config(dir, 2_000, 1);
    const server = await startServe(path, join(dir, 'data'), { TOKEN_A });
    running.push(server);
    const id = await startTask(server.url, 'a very long piece');
    await new Promise((resolve) => setTimeout(resolve, 100));
    server.child.kill('SIGTERM');
    assert.equal(await exitOf(server), 0, server.output());
    const again = await startServe(path, join(dir, 'data'), { TOKEN_A });
    running.push(again);
    const got = await rpc(`${again.url}/a2a/writer`, 'GetTask', { id }, v1);
    assert.equal(got.body.result?.status?.state, 'TASK_STATE_FAILED');
    assert.match(JSON.stringify(got.body.result.status), /shut down/);
  });
});
