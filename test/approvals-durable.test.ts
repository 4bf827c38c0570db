/**
 * Approvals that last (issue "Agent tools", point 6): with a durable store, pending actions,
 * their decisions and what the agent kept to go on live in the task store, so
 * - a gateway restarted on the same SQLite file lists the action, the person approves it there,
 *   and the gateway resumes the task with the unredacted arguments and the continuation, once;
 * - a decision recorded just before a restart (the process stopped before it could resume) is
 *   resumed by the next process when it starts;
 * - two replicas on one PostgreSQL schema: an action parked on A is listed and approved on B,
 *   B resumes the task, A's caller sees it completed; a second decision on A is refused, and the
 *   action runs once.
 * Every gateway here is a real HTTP server on loopback, with the real stores.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { AgentBackend, AgentEvent, AgentTurn, ApprovedAction } from '../src/agents/backend.js';
import { RecordApprovalStore } from '../src/approvals/records-store.js';
import { parseConfig } from '../src/config/load.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';
import type { TaskStore } from '../src/tasks/store.js';
import { PostgresTaskStore } from '../src/tasks/stores/postgres.js';
import { SqliteTaskStore } from '../src/tasks/stores/sqlite.js';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName, waitFor } from './helpers/backing-services.js';
import { rpc } from './helpers/gateway.js';

const BOT_TOKEN = 'bot-client-token-0123456789abcdef0123456789';
const ALICE_TOKEN = 'alice-person-token-0123456789abcdef012345678';
const API_KEY = 'sk-live-abcdefghijklmnopqrstuvwxyz012345';
const ENV = { BOT_TOKEN, ALICE_TOKEN, API_KEY };
const BOUNDED = { timeout: 30_000 };

const YAML = `
server: { host: 127.0.0.1, port: 0 }
content: { scrubSecrets: ["\${API_KEY}"] }
approvals:
  ttlMinutes: 30
  people:
    - { id: alice, token: "\${ALICE_TOKEN}" }
agents:
  - slug: ops
    name: Ops
    description: Acts on your behalf.
    skills: [{ id: ops, name: Ops, description: Sends mail, tags: [demo] }]
    backend: { type: echo }
    actions: { maxLevel: L4 }
clients:
  - { id: bot, token: "\${BOT_TOKEN}", agents: [ops], owner: alice }
`;

const REAL_ARGS = { to: 'bob@example.com', subject: 'Quarterly', apiKey: API_KEY };
const CONTINUATION = { step: 'after-send', notes: ['kept by the agent'] };

/** Proposes `send_email` (L4) with a continuation; takes the approval when a turn carries it. */
class MailBackend implements AgentBackend {
  readonly kind = 'test-mail';
  readonly approved: ApprovedAction[] = [];
  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    if (turn.approvedAction !== undefined) {
      this.approved.push(turn.approvedAction);
      yield { type: 'completed', text: `sent to ${String((turn.approvedAction.args as { to: string }).to)}` };
      return;
    }
    yield {
      type: 'propose-action',
      action: { tool: 'send_email', args: REAL_ARGS, level: 'L4' },
      continuation: CONTINUATION,
    };
  }
}

/** The same, with every event ready: the gateway drives it without awaiting (runSync). */
class ReadyMailBackend extends MailBackend {
  *runSync(turn: AgentTurn): Iterable<AgentEvent> {
    if (turn.approvedAction !== undefined) {
      this.approved.push(turn.approvedAction);
      yield { type: 'completed', text: 'sent' };
      return;
    }
    yield {
      type: 'propose-action',
      action: { tool: 'send_email', args: REAL_ARGS, level: 'L4' },
      continuation: CONTINUATION,
    };
  }
}

interface Running {
  readonly url: string;
  readonly gateway: Gateway;
  readonly backend: MailBackend;
}

async function serve(store: TaskStore, backend: MailBackend = new MailBackend()): Promise<Running> {
  const gateway = createGateway(parseConfig(YAML, ENV), { logger: silentLogger, store, backends: { ops: backend } });
  const url = await gateway.listen();
  return { url, gateway, backend };
}

async function park(
  base: string,
  text = 'mail bob the numbers\nand the second line',
): Promise<{ taskId: string; actionId: string }> {
  const sent = await rpc(
    `${base}/a2a/ops`,
    'SendMessage',
    { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } },
    { token: BOT_TOKEN, version: '1.0' },
  );
  const task = sent.body.result?.task;
  assert.equal(task?.status?.state, 'TASK_STATE_INPUT_REQUIRED', JSON.stringify(sent.body));
  const data = task.status.message.parts.find((part: { data?: unknown }) => part.data !== undefined)?.data;
  return { taskId: task.id, actionId: data.action_id };
}

async function approvals(base: string): Promise<any[]> {
  const response = await fetch(`${base}/approvals`, { headers: { authorization: `Bearer ${ALICE_TOKEN}` } });
  assert.equal(response.status, 200);
  return ((await response.json()) as { approvals: any[] }).approvals;
}

async function decide(
  base: string,
  actionId: string,
  decision: 'approve' | 'deny',
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}/approvals/${actionId}/${decision}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_TOKEN}` },
  });
  return { status: response.status, body: await response.json() };
}

async function stateOf(base: string, taskId: string): Promise<string> {
  const got = await rpc(`${base}/a2a/ops`, 'GetTask', { id: taskId }, { token: BOT_TOKEN, version: '1.0' });
  return String(got.body.result?.status?.state);
}

async function completes(base: string, taskId: string): Promise<void> {
  await waitFor(
    async () => (await stateOf(base, taskId)) === 'TASK_STATE_COMPLETED',
    10_000,
    `task ${taskId} completed`,
  );
}

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

function tempData(): string {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-durable-approvals-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'airlock.db');
}

/**
 * Parks a task on a first gateway, stops it, records the person's decision in the store as a
 * process that stopped before resuming would have left it, and starts a second gateway.
 */
async function decidedWhileStopped(decision: 'approve' | 'deny'): Promise<{ second: Running; taskId: string }> {
  const path = tempData();
  const first = await serve(await SqliteTaskStore.open({ path }));
  const { taskId, actionId } = await park(first.url);
  await first.gateway.close();
  const between = await SqliteTaskStore.open({ path });
  await new RecordApprovalStore(between.approvals).decide(
    actionId,
    { kind: 'user', userId: 'person:alice' },
    decision,
    Date.now(),
  );
  await between.close();
  const second = await serve(await SqliteTaskStore.open({ path }));
  cleanups.push(() => second.gateway.close());
  return { second, taskId };
}

describe('approvals that last: SQLite (--data)', () => {
  it(
    'a restarted gateway lists the action, the person approves it there, and the task resumes once with what the agent kept',
    BOUNDED,
    async () => {
      const path = tempData();
      const first = await serve(await SqliteTaskStore.open({ path }));
      const { taskId, actionId } = await park(first.url);
      await first.gateway.close();

      const second = await serve(await SqliteTaskStore.open({ path }));
      cleanups.push(() => second.gateway.close());
      const listed = await approvals(second.url);
      assert.deepEqual(
        listed.map((view) => view.actionId),
        [actionId],
      );
      // The person's card: the task, the agent, the caller and the first line of the request.
      assert.equal(listed[0].taskId, taskId);
      assert.equal(listed[0].agent, 'ops');
      assert.equal(listed[0].client, 'bot');
      assert.equal(listed[0].request, 'mail bob the numbers');
      assert.ok(!JSON.stringify(listed[0]).includes(API_KEY));
      assert.ok(!JSON.stringify(listed[0]).includes('bob@example.com'));

      const approved = await decide(second.url, actionId, 'approve');
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      await completes(second.url, taskId);
      assert.equal(second.backend.approved.length, 1);
      const ran = second.backend.approved[0] as ApprovedAction;
      assert.deepEqual(ran.args, REAL_ARGS);
      assert.deepEqual(ran.continuation, CONTINUATION);
      assert.equal(ran.approvedBy, 'person:alice');

      assert.equal((await decide(second.url, actionId, 'approve')).status, 409);
      assert.deepEqual(await approvals(second.url), []);
      assert.equal(second.backend.approved.length, 1, 'the action ran once');
    },
  );

  it(
    'a backend whose events are all ready parks once its action is recorded, and resumes after the approval',
    BOUNDED,
    async () => {
      const running = await serve(await SqliteTaskStore.open({ path: tempData() }), new ReadyMailBackend());
      cleanups.push(() => running.gateway.close());
      const { taskId, actionId } = await park(running.url);
      assert.deepEqual(
        (await approvals(running.url)).map((view) => view.actionId),
        [actionId],
      );
      assert.equal((await decide(running.url, actionId, 'approve')).status, 200);
      await completes(running.url, taskId);
      assert.deepEqual(running.backend.approved[0]?.args, REAL_ARGS);
      assert.deepEqual(running.backend.approved[0]?.continuation, CONTINUATION);
    },
  );

  it('a decision recorded before a restart is resumed by the next process when it starts', BOUNDED, async () => {
    const { second, taskId } = await decidedWhileStopped('approve');
    assert.equal(await second.gateway.resumeDecided(), 1);
    await completes(second.url, taskId);
    assert.deepEqual(second.backend.approved[0]?.args, REAL_ARGS);
    assert.deepEqual(second.backend.approved[0]?.continuation, CONTINUATION);
    // Nothing is left to resume: a later start hands on nothing.
    assert.equal(await second.gateway.resumeDecided(), 0);
  });

  it('a denial recorded before a restart fails the task when the next process starts', BOUNDED, async () => {
    const { second, taskId } = await decidedWhileStopped('deny');
    await second.gateway.resumeDecided();
    await waitFor(async () => (await stateOf(second.url, taskId)) === 'TASK_STATE_FAILED', 10_000, 'failed');
    assert.equal(second.backend.approved.length, 0);
  });
});

const pgSkip = await postgresSkip();

/** Two gateways on one fresh PostgreSQL schema, as two replicas. */
async function twoReplicas(): Promise<[Running, Running]> {
  const schema = uniqueName('airlock_test');
  cleanups.push(() => dropSchema(schema));
  const open = (): Promise<PostgresTaskStore> => PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 4 });
  const a = await serve(await open());
  cleanups.push(() => a.gateway.close());
  const b = await serve(await open());
  cleanups.push(() => b.gateway.close());
  return [a, b];
}

describe('approvals that last: two replicas on PostgreSQL', { skip: pgSkip }, () => {
  it('parked on A, approved on B: B resumes it, A sees it completed, the action runs once', BOUNDED, async () => {
    const [a, b] = await twoReplicas();

    const { taskId, actionId } = await park(a.url);
    assert.deepEqual(
      (await approvals(b.url)).map((view) => view.actionId),
      [actionId],
    );
    const approved = await decide(b.url, actionId, 'approve');
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    await completes(a.url, taskId);
    const again = await decide(a.url, actionId, 'deny');
    assert.equal(again.status, 409);
    assert.equal(again.body.error.reason, 'already_decided');
    assert.equal(a.backend.approved.length + b.backend.approved.length, 1, 'the action ran once');
    assert.deepEqual(b.backend.approved[0]?.args, REAL_ARGS);

    // A caller's message after the decision does not run it again.
    const resumed = await rpc(
      `${a.url}/a2a/ops`,
      'SendMessage',
      { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'go on' }], taskId } },
      { token: BOT_TOKEN, version: '1.0' },
    );
    assert.ok(resumed.body.error !== undefined || resumed.body.result?.task?.status?.state === 'TASK_STATE_COMPLETED');
    assert.equal(a.backend.approved.length + b.backend.approved.length, 1);
  });

  it('a task canceled on A withdraws its action everywhere', BOUNDED, async () => {
    const [a, b] = await twoReplicas();
    const { taskId, actionId } = await park(a.url);
    const canceled = await rpc(`${a.url}/a2a/ops`, 'CancelTask', { id: taskId }, { token: BOT_TOKEN, version: '1.0' });
    assert.equal(canceled.body.result?.status?.state, 'TASK_STATE_CANCELED', JSON.stringify(canceled.body));
    await waitFor(async () => (await approvals(b.url)).length === 0, 5_000, 'withdrawn');
    assert.equal((await decide(b.url, actionId, 'approve')).status, 404);
  });
});
