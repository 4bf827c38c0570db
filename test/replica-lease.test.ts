/**
 * A replica that dies mid-turn: two `airlock serve` processes (`replicas: 2`) on one PostgreSQL
 * schema (store, task events and limits all over PostgreSQL) with `store.leaseSeconds: 2` and a
 * slow module agent. A turn starts on replica A and is followed from replica B; A is killed with
 * SIGKILL. Within the lease (plus a sweep) B's subscriber sees the task `failed` with the stated
 * reason, GetTask on B agrees, B's audit file holds the row (`replica_lost`), and the caller's
 * in-flight slot (one per principal here) is free again. Before the kill, a long turn on B runs
 * past three lease periods while A sweeps, and completes: a renewing replica is never failed. A
 * task parked on its caller on A holds no turn, and is still waiting after A died.
 *
 * @example
 * ```sh
 * node --import tsx --test test/replica-lease.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PostgresTaskStore } from '../src/tasks/stores/postgres.js';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName } from './helpers/backing-services.js';
import { rpc, rpcStream, TOKEN_A, TOKEN_B, TOKEN_C, v10Message } from './helpers/gateway.js';
import { killHard, startServe, type ServeProcess } from './helpers/serve-process.js';

const pgSkip = await postgresSkip();
const LEASE_SECONDS = 2;
const v1 = { version: '1.0' } as const;

/** Waits `wait N` ms (from the message text) while its signal allows, then completes; `ask` parks. */
const SLOW_MODULE = `import { setTimeout as sleep } from 'node:timers/promises';
export default {
  kind: 'slow',
  async *run(turn) {
    const text = turn.message.parts.map((part) => part.text ?? '').join('');
    const ms = Number(/wait (\\d+)/.exec(text)?.[1] ?? 0);
    yield { type: 'working', text: 'started' };
    if (text.startsWith('ask')) {
      yield { type: 'input-required', question: 'Which one?' };
      return;
    }
    try {
      await sleep(ms, undefined, { signal: turn.signal });
    } catch {
      return;
    }
    yield { type: 'completed', text: 'done after ' + ms + ' ms' };
  },
};
`;

function configYaml(modulePath: string, schema: string): string {
  return `
server: { host: 127.0.0.1, port: 0 }
replicas: 2
store: { type: postgres, url: "${POSTGRES_URL}", schema: ${schema}, poolSize: 4, leaseSeconds: ${LEASE_SECONDS} }
limits: { maxConcurrentTasksPerPrincipal: 1 }
audit: { file: "\${AUDIT_FILE}" }
agents:
  - slug: slow
    name: Slow
    description: Waits as told.
    skills: [{ id: slow, name: Slow, description: Waits, tags: [test] }]
    backend: { type: module, module: ${JSON.stringify(modulePath)} }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [slow] }
  - { id: b, token: "\${TOKEN_B}", agents: [slow] }
  - { id: c, token: "\${TOKEN_C}", agents: [slow] }
`;
}

/** An open SSE stream: the JSON-RPC frames so far, and a wait for one that matches. */
interface OpenStream {
  frames: any[];
  until(match: (frame: any) => boolean, timeoutMs: number): Promise<any>;
  close(): void;
}

async function openStream(url: string, method: string, params: unknown, token: string): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${token}`,
      'a2a-version': '1.0',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const frames: any[] = [];
  const waiters: (() => void)[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const data = buffered
            .slice(0, end)
            .split('\n')
            .find((line) => line.startsWith('data: '));
          buffered = buffered.slice(end + 2);
          if (data !== undefined) frames.push(JSON.parse(data.slice(6)));
        }
        for (const wake of waiters.splice(0)) wake();
      }
    } catch {
      // Closed by the test.
    }
  })();
  return {
    frames,
    close: () => controller.abort(),
    until: async (match, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = frames.find(match);
        if (found !== undefined) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms: ${JSON.stringify(frames)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 100));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}

describe('turn leases: a replica killed mid-turn', { skip: pgSkip }, () => {
  const schema = uniqueName('airlock_test');
  let dir: string;
  let a: ServeProcess;
  let b: ServeProcess;
  const slow = (replica: ServeProcess): string => `${replica.url}/a2a/slow`;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-lease-'));
    await writeFile(join(dir, 'slow.mjs'), SLOW_MODULE);
    await writeFile(join(dir, 'airlock.yaml'), configYaml(join(dir, 'slow.mjs'), schema));
    await PostgresTaskStore.migrate({ url: POSTGRES_URL, schema });
    const env = (name: string): Record<string, string> => ({
      TOKEN_A,
      TOKEN_B,
      TOKEN_C,
      AUDIT_FILE: join(dir, `audit-${name}.jsonl`),
    });
    // One after the other: on a busy machine two cold starts at once can pass startServe's wait.
    a = await startServe(join(dir, 'airlock.yaml'), undefined, env('a'));
    b = await startServe(join(dir, 'airlock.yaml'), undefined, env('b'));
  });

  after(async () => {
    await Promise.allSettled([a && killHard(a), b && killHard(b)]);
    await dropSchema(schema);
    await rm(dir, { recursive: true, force: true });
  });

  it('fails the dead replica’s task on the other within the lease, and never a live replica’s long turn', async (t) => {
    // The negative control: a turn on B outlasting three leases while A sweeps too (A would claim
    // B's lease and fail the task if B's renewals stopped).
    const longStarted = Date.now();
    const long = rpcStream(
      slow(b),
      'SendStreamingMessage',
      { message: v10Message(`wait ${3 * LEASE_SECONDS * 1000 + 500}`) },
      { ...v1, token: TOKEN_B },
    );

    const sent = await rpc(
      slow(a),
      'SendMessage',
      { message: v10Message('wait 60000'), configuration: { returnImmediately: true } },
      v1,
    );
    const id: string = sent.body.result.task.id;
    // Client a's one in-flight slot is held by A's turn, for every replica.
    const busy = await rpc(slow(b), 'SendMessage', { message: v10Message('wait 0') }, v1);
    assert.equal(busy.status, 503, JSON.stringify(busy.body));

    // A task parked on its caller on A holds no turn: it must outlive A's death untouched.
    const parked = await rpc(slow(a), 'SendMessage', { message: v10Message('ask me') }, { ...v1, token: TOKEN_C });
    const parkedTask = parked.body.result.task;
    assert.equal(parkedTask.status.state, 'TASK_STATE_INPUT_REQUIRED', JSON.stringify(parked.body));

    const subscription = await openStream(slow(b), 'SubscribeToTask', { id }, TOKEN_A);
    await subscription.until((frame) => frame.result?.task?.id === id, 5_000);

    // B's own long turn was renewed all along (A swept meanwhile): it completes.
    const { events } = await long;
    const last = events[events.length - 1].result.statusUpdate;
    assert.equal(last.status.state, 'TASK_STATE_COMPLETED');
    assert.ok(Date.now() - longStarted >= 3 * LEASE_SECONDS * 1000);
    const stillWorking = await rpc(slow(b), 'GetTask', { id }, v1);
    assert.equal(stillWorking.body.result.status.state, 'TASK_STATE_WORKING', 'A’s turn, renewed by A, runs on');

    await killHard(a);
    const killed = Date.now();

    const failedFrame = await subscription.until(
      (frame) => frame.result?.statusUpdate?.status?.state === 'TASK_STATE_FAILED',
      (LEASE_SECONDS + 4) * 1000,
    );
    const seenAfterMs = Date.now() - killed;
    subscription.close();
    t.diagnostic(`failed seen on B's subscription ${seenAfterMs} ms after SIGKILL (lease ${LEASE_SECONDS} s)`);
    // The lease lapses within LEASE_SECONDS of the kill; a sweep runs every ~LEASE_SECONDS/2.
    assert.ok(seenAfterMs <= LEASE_SECONDS * 1000 * 1.5 + 1_000, `seen ${seenAfterMs} ms after the kill`);
    const status = failedFrame.result.statusUpdate.status;
    assert.match(status.message.parts[0].text, /replica running this task stopped/);

    const got = await rpc(slow(b), 'GetTask', { id }, v1);
    assert.equal(got.body.result.status.state, 'TASK_STATE_FAILED');
    assert.match(got.body.result.status.message.parts[0].text, /replica running this task stopped/);

    const rows = (await readFile(join(dir, 'audit-b.jsonl'), 'utf8'))
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const failedRows = rows.filter((row) => row.type === 'a2a.task.failed' && row.taskId === id);
    assert.equal(failedRows.length, 1, 'one audit row, from the one replica that claimed the lease');
    assert.equal(failedRows[0]!.reason, 'replica_lost');
    assert.equal(failedRows[0]!.client, 'a');

    // The dead replica's slot ran out before its task was failed: the caller may send again.
    const again = await rpc(slow(b), 'SendMessage', { message: v10Message('wait 0') }, v1);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.result.task.status.state, 'TASK_STATE_COMPLETED');

    // The parked task is as it was: waiting for its caller, who may still answer it on B.
    const stillParked = await rpc(slow(b), 'GetTask', { id: parkedTask.id }, { ...v1, token: TOKEN_C });
    assert.equal(stillParked.body.result.status.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.doesNotMatch(b.output(), /turn_lease_lost/);
  });
});
