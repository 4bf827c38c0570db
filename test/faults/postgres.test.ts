/**
 * Fault catalogue, the durable task store: PostgreSQL goes away mid-load and comes back. The
 * gateway keeps tasks in PostgreSQL (a schema of its own, dropped after) through a TCP proxy
 * the test cuts: every connection through it is reset and new ones are refused for ~2 s, then it
 * listens again on the same port. The system PostgreSQL itself is never touched. Skipped when
 * PostgreSQL cannot be reached, except under CI (`CI=true`), where that fails
 * (test/helpers/backing-services.ts).
 *
 * | Fault                                  | Expected behaviour                                                                                         | Asserted in             |
 * | -------------------------------------- | ---------------------------------------------------------------------------------------------------------- | ----------------------- |
 * | PostgreSQL unreachable mid-load        | every request answers within the statement/connect timeouts + margin (< 5 s), never hangs; a failure is    | outage › under load     |
 * | (6 concurrent sequential senders)      | -32603 "Task storage is unavailable; retry shortly" (HTTP 200), or the in-flight cap's HTTP 503 "Too many   |                         |
 * |                                        | tasks are running…" (stalled turns still count); REST: 503 + Retry-After: 1                               |                         |
 * | PostgreSQL back                        | requests succeed again without a restart (first within 10 s; none fails on storage 0.5 s after that)      | outage › under load     |
 * | acknowledged tasks                     | every task id the gateway acknowledged (before, during, after) reads back with GetTask, same id; echo tasks | outage › no ack lost    |
 * |                                        | COMPLETED (a final state the store refused is written again once it is back)                                 |                         |
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { STORE_UNAVAILABLE_MESSAGE } from '../../src/server/rpc.js';
import { PostgresTaskStore } from '../../src/tasks/stores/postgres.js';
import {
  dropSchema,
  postgresSkip,
  POSTGRES_URL,
  startTcpProxy,
  uniqueName,
  type TcpProxy,
} from '../helpers/backing-services.js';
import { eventually, TOKEN_A, v10Message } from '../helpers/gateway.js';
import { sleep, startFaultGateway, type FaultGateway } from './support.js';

const pgSkip = await postgresSkip();
const WORKERS = 6;
/** No answer may take longer: connect 1 s + statement 1 s, with room for a loaded machine. */
const ANSWER_BOUND_MS = 5_000;

interface Outcome {
  agent: 'echo' | 'writer';
  phase: 'before' | 'outage' | 'after';
  ms: number;
  /** When the request was sent (epoch ms). */
  startedAt: number;
  status: number;
  /** The task id, when the gateway acknowledged one. */
  id?: string;
  state?: string;
  error?: { code: number; message: string };
  /** The request failed below HTTP (no answer at all). */
  network?: string;
}

function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return `${(error as Error).message}${cause === undefined ? '' : ` (${cause.code}: ${cause.message})`}`;
}

async function call(url: string, method: string, params: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}`, 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    // A hung request fails the test instead of hanging it.
    signal: AbortSignal.timeout(ANSWER_BOUND_MS * 2),
  });
  return { status: response.status, body: await response.json() };
}

describe('fault: PostgreSQL stops and starts mid-load (durable store)', { skip: pgSkip }, () => {
  const schema = uniqueName('airlock_faults');
  let proxy: TcpProxy;
  let gw: FaultGateway;
  let phase: Outcome['phase'] = 'before';
  const outcomes: Outcome[] = [];
  /** Acknowledged writer tasks not in a final state after the load (phase: state). */
  let stuck: string[] = [];

  before(async () => {
    proxy = await startTcpProxy(Number(new URL(POSTGRES_URL).port || 5432));
    const store = await PostgresTaskStore.open({
      url: proxy.url(POSTGRES_URL),
      schema,
      connectTimeoutMs: 1_000,
      statementTimeoutMs: 1_000,
    });
    gw = await startFaultGateway(
      `
server: { host: 127.0.0.1, port: 0, defaultAgent: echo, rest: true }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes text, tags: [demo] }]
    backend: { type: echo }
  - slug: writer
    name: Writer
    description: Writes.
    skills: [{ id: write, name: Write, description: Writes text, tags: [demo] }]
    backend: { type: writer, chunkDelayMs: 20 }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, writer] }
limits: { requestsPerMinute: 1000000 }
`,
      { store },
    );
  });

  after(async () => {
    await gw?.close();
    await proxy?.close();
    await dropSchema(schema);
  });

  /** One sender: sequential SendMessage calls, alternating agents, until `stop()` says so. */
  async function sender(worker: number, stop: () => boolean): Promise<void> {
    for (let i = 0; !stop(); i++) {
      const agent = (worker + i) % 3 === 0 ? 'writer' : 'echo';
      const at = phase;
      const started = Date.now();
      const params = {
        message: v10Message(`load ${worker}.${i}`),
        ...(agent === 'writer' && { configuration: { returnImmediately: true } }),
      };
      let reply: { status: number; body: any };
      try {
        reply = await call(gw.agent(agent), 'SendMessage', params);
      } catch (error) {
        outcomes.push({
          agent,
          phase: at,
          ms: Date.now() - started,
          startedAt: started,
          status: 0,
          network: describeError(error),
        });
        await sleep(50);
        continue;
      }
      const { status, body } = reply;
      const outcome: Outcome = { agent, phase: at, ms: Date.now() - started, startedAt: started, status };
      if (body.result !== undefined) {
        outcome.id = body.result.task.id;
        outcome.state = body.result.task.status.state;
      } else {
        outcome.error = { code: body.error.code, message: body.error.message };
        // A caller told to retry shortly does so, a little later.
        await sleep(50);
      }
      outcomes.push(outcome);
    }
  }

  it(
    'answers -32603 "retry shortly" within the timeouts during the outage, never hangs, and recovers by itself',
    { timeout: 60_000 },
    async () => {
      let stopping = false;
      const senders = Array.from({ length: WORKERS }, (_, worker) => sender(worker, () => stopping));
      await sleep(500);

      await proxy.cut();
      phase = 'outage';
      await sleep(1_000);
      const rest = await fetch(`${gw.url}/a2a/echo/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}` },
        body: JSON.stringify({ message: 'during the outage' }),
        signal: AbortSignal.timeout(ANSWER_BOUND_MS * 2),
      });
      assert.equal(rest.status, 503);
      assert.equal(rest.headers.get('retry-after'), '1');
      await sleep(1_000);
      await proxy.restore();
      phase = 'after';
      const restoredAt = Date.now();
      await eventually(
        () => outcomes.some((row) => row.phase === 'after' && row.id !== undefined && row.agent === 'echo'),
        10_000,
        'a request to succeed after the restore',
      );
      const recoveredMs = Date.now() - restoredAt;
      // A pooled connection opened while the proxy came back may still fail once: settle 500 ms.
      const settledAt = Date.now() + 500;
      await sleep(1_000);
      stopping = true;
      await Promise.all(senders);

      const by = (at: Outcome['phase']) => outcomes.filter((row) => row.phase === at);
      const answered = outcomes.filter((row) => row.network === undefined);
      assert.ok(by('before').length > 0 && by('before').some((row) => row.id !== undefined), 'fine before the outage');
      const slowest = Math.max(...outcomes.map((row) => row.ms));
      // Requests dropped without an answer are counted apart (see the todo test below).
      assert.ok(slowest < ANSWER_BOUND_MS, `slowest answer ${slowest} ms`);
      const failures = answered.filter((row) => row.error !== undefined);
      assert.ok(
        by('outage').some((row) => row.error !== undefined),
        'requests during the outage were refused',
      );
      for (const row of failures) {
        // Turns stalled on the dead store still count as running: the in-flight cap may shed
        // load first (HTTP 503, a bounded and clear answer too).
        if (row.status === 503) {
          assert.match(row.error!.message, /^Too many tasks are running/, JSON.stringify(row));
          continue;
        }
        assert.equal(row.status, 200, JSON.stringify(row));
        assert.deepEqual(row.error, { code: -32603, message: STORE_UNAVAILABLE_MESSAGE });
      }
      assert.equal(STORE_UNAVAILABLE_MESSAGE, 'Task storage is unavailable; retry shortly');
      // Once one request got through, the rest did too (the pool reconnected; no restart).
      const later = outcomes.filter((row) => row.startedAt >= settledAt && row.network === undefined);
      assert.ok(later.length > 0);
      assert.deepEqual(
        later.filter((row) => row.error !== undefined && row.status !== 503),
        [],
        `recovered after ${recoveredMs} ms, then storage failures`,
      );
      assert.ok(later.filter((row) => row.id !== undefined).length > later.length / 2, 'mostly served after');
      // Once the load is gone, the in-flight cap frees up: nothing stays counted as running.
      await eventually(
        async () =>
          (await call(gw.agent('writer'), 'SendMessage', { message: v10Message('after the load') })).body.result !==
          undefined,
        5_000,
        'a writer task to be accepted after the load',
      );
      for (const row of outcomes.filter((each) => each.agent === 'echo' && each.id !== undefined)) {
        assert.equal(row.state, 'TASK_STATE_COMPLETED');
      }
    },
  );

  it(
    'loses no acknowledged task: every id acknowledged before, during or after reads back with GetTask',
    { timeout: 20_000 },
    async () => {
      const acknowledged = outcomes.filter((row) => row.id !== undefined);
      assert.ok(acknowledged.length > WORKERS, `${acknowledged.length} acknowledged`);
      const unread: string[] = [];
      const states = new Map<string, number>();
      for (const row of acknowledged) {
        const got = await call(gw.agent(row.agent), 'GetTask', { id: row.id });
        if (got.body.result?.id !== row.id) {
          unread.push(`${row.agent} ${row.id} (${row.phase}): ${JSON.stringify(got.body.error)}`);
          continue;
        }
        const state = `${row.agent} ${got.body.result.status.state}`;
        states.set(state, (states.get(state) ?? 0) + 1);
        if (row.agent === 'echo') assert.equal(got.body.result.status.state, 'TASK_STATE_COMPLETED');
      }
      assert.deepEqual(unread, [], `read back: ${JSON.stringify([...states])}`);
      // A turn that ended during the outage has its final state written again until the store
      // takes it (backoff from 250 ms, at most 5 s apart): give that a few seconds.
      const writers = acknowledged.filter((each) => each.agent === 'writer');
      const deadline = Date.now() + 12_000;
      for (;;) {
        stuck = [];
        for (const row of writers) {
          const got = await call(gw.agent('writer'), 'GetTask', { id: row.id });
          const state = got.body.result.status.state;
          if (state !== 'TASK_STATE_COMPLETED' && state !== 'TASK_STATE_FAILED') stuck.push(`${row.phase}: ${state}`);
        }
        if (stuck.length === 0 || Date.now() > deadline) break;
        await sleep(500);
      }
    },
  );

  // Fails if the service stops rewriting a final state the store refused (#writeLater).
  it('every acknowledged writer task reaches a final state once the store is back', () => {
    assert.deepEqual(stuck, []);
  });
});
