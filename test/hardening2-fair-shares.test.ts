/**
 * Fair shares of shared capacity, end to end over HTTP (issue 16): one client's parked tasks, its
 * flood of finished tasks, its running tasks, its big tasks and its pending approvals never take
 * another client's room. Each case runs its own gateway on loopback with small quotas, client A
 * as the hostile one and client B as the bystander whose sends and results must survive.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import type { AgentBackend, AgentEvent, AgentTurn } from '../src/agents/backend.js';
import { MemoryAuditSink } from '../src/audit/index.js';
import { rpc, startGateway, TOKEN_A, TOKEN_B, v10Message, type TestGateway } from './helpers/gateway.js';

/** Parks every turn on a question (input-required). */
class AskBackend implements AgentBackend {
  readonly kind = 'test-ask';
  async *run(): AsyncIterable<AgentEvent> {
    yield { type: 'input-required', question: 'Which day?' };
  }
}

/** Proposes an L3 action on every fresh turn (parks the task on a person's decision). */
class ProposeBackend implements AgentBackend {
  readonly kind = 'test-propose';
  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    if (turn.approvedAction !== undefined) {
      yield { type: 'completed', text: 'done' };
      return;
    }
    yield { type: 'propose-action', action: { tool: 'deploy', args: { env: 'staging' }, level: 'L3' } };
  }
}

const ALICE_TOKEN = 'alice-person-token-0123456789abcdef012345678';
const BOB_TOKEN = 'bob-person-token-0123456789abcdef01234567890';

function yaml(options: { limits?: string; store?: string; approvals?: string; clients?: string } = {}): string {
  return `
server: { host: 127.0.0.1, port: 0 }
limits: ${options.limits ?? '{}'}
store: ${options.store ?? '{ type: memory }'}
${options.approvals ?? ''}
agents:
  - slug: ask
    name: Ask
    description: Always asks back.
    skills: [{ id: ask, name: Ask, description: Asks }]
    backend: { type: echo }
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes text }]
    backend: { type: echo }
  - slug: slow
    name: Slow
    description: Writes slowly.
    skills: [{ id: write, name: Write, description: Writes text }]
    backend: { type: writer, chunkDelayMs: 10000 }
  - slug: ops
    name: Ops
    description: Acts on your behalf.
    skills: [{ id: ops, name: Ops, description: Deploys }]
    backend: { type: echo }
${options.approvals !== undefined ? '    actions: { maxLevel: L4 }' : ''}
clients:
${
  options.clients ??
  `  - { id: a, token: "\${TOKEN_A}", agents: [ask, echo, slow, ops] }
  - { id: b, token: "\${TOKEN_B}", agents: [ask, echo, slow, ops] }`
}
`;
}

const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gw) => gw.close()));
});

async function start(text: string, audit: MemoryAuditSink): Promise<TestGateway> {
  const gw = await startGateway(text, {
    auditSink: audit,
    env: { ALICE_TOKEN, BOB_TOKEN },
    backends: { ask: new AskBackend(), ops: new ProposeBackend() },
  });
  gateways.push(gw);
  return gw;
}

async function send(
  gw: TestGateway,
  agent: string,
  token: string,
  text: string,
  configuration?: Record<string, unknown>,
): Promise<{ status: number; body: any; headers: Headers }> {
  return rpc(
    `${gw.url}/a2a/${agent}`,
    'SendMessage',
    { message: v10Message(text), ...(configuration !== undefined && { configuration }) },
    { token, version: '1.0' },
  );
}

function taskOf(call: { status: number; body: any }): any {
  assert.equal(call.status, 200, JSON.stringify(call.body));
  assert.ok(call.body.result?.task, JSON.stringify(call.body));
  return call.body.result.task;
}

async function getTask(gw: TestGateway, agent: string, token: string, id: string): Promise<any> {
  return rpc(`${gw.url}/a2a/${agent}`, 'GetTask', { id }, { token, version: '1.0' });
}

/** A refusal of the caller's own share: 503, Retry-After, a message naming the setting. */
function assertQuotaRefusal(call: { status: number; body: any; headers: Headers }, setting: RegExp): void {
  assert.equal(call.status, 503, JSON.stringify(call.body));
  assert.equal(call.body.error.status, 'UNAVAILABLE', JSON.stringify(call.body));
  assert.match(call.body.error.message, setting);
  const retryAfter = Number(call.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${call.headers.get('retry-after')}`);
}

const BOUNDED = { timeout: 20_000 };

describe('fair shares of the task store (issue 16)', () => {
  it(
    'A parks tasks until refused: its refusal names limits.maxParkedTasksPerPrincipal (503 + Retry-After, audited); B still sends',
    BOUNDED,
    async () => {
      const audit = new MemoryAuditSink();
      // Without per-principal quotas A's parked tasks would fill all 8 slots: "store full" for B too.
      const gw = await start(
        yaml({ limits: '{ maxParkedTasksPerPrincipal: 3 }', store: '{ type: memory, maxTasks: 8 }' }),
        audit,
      );
      let refused: { status: number; body: any; headers: Headers } | undefined;
      let parked = 0;
      for (let i = 0; i < 12 && refused === undefined; i++) {
        const call = await send(gw, 'ask', TOKEN_A, `question ${i}`);
        if (call.status === 200) {
          assert.equal(taskOf(call).status.state, 'TASK_STATE_INPUT_REQUIRED');
          parked++;
        } else refused = call;
      }
      assert.equal(parked, 3, 'A parks exactly its quota');
      assert.ok(refused !== undefined);
      assertQuotaRefusal(refused, /limits\.maxParkedTasksPerPrincipal/);
      const row = audit.events.find((event) => event.type === 'a2a.task.rejected' && event.reason === 'parked_quota');
      assert.ok(row, 'the refusal is audited with its reason');
      assert.equal((row as { client?: string }).client, 'a');
      // B is untouched: it parks and completes tasks of its own.
      assert.equal(taskOf(await send(gw, 'ask', TOKEN_B, 'my question')).status.state, 'TASK_STATE_INPUT_REQUIRED');
      assert.equal(taskOf(await send(gw, 'echo', TOKEN_B, 'hello')).status.state, 'TASK_STATE_COMPLETED');
    },
  );

  it('A floods finished tasks: B’s finished results stay readable; A gives up its own oldest', BOUNDED, async () => {
    const audit = new MemoryAuditSink();
    const gw = await start(
      yaml({ limits: '{ maxTasksPerPrincipal: 5 }', store: '{ type: memory, maxTasks: 50 }' }),
      audit,
    );
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(taskOf(await send(gw, 'echo', TOKEN_B, `result ${i}`)));
    const flood = [];
    for (let i = 0; i < 60; i++) flood.push(taskOf(await send(gw, 'echo', TOKEN_A, `flood ${i}`)));
    for (const task of mine) {
      const read = await getTask(gw, 'echo', TOKEN_B, task.id);
      assert.equal(
        read.body.result?.status.state,
        'TASK_STATE_COMPLETED',
        `B's ${task.id}: ${JSON.stringify(read.body)}`,
      );
    }
    // A keeps its newest five, and lost its oldest (its own quota made the room).
    assert.equal((await getTask(gw, 'echo', TOKEN_A, flood[0].id)).body.error?.code, -32001);
    assert.equal((await getTask(gw, 'echo', TOKEN_A, flood[59].id)).body.result?.status.state, 'TASK_STATE_COMPLETED');
  });

  it(
    'A holds its quota of running tasks: its next send is refused naming limits.maxTasksPerPrincipal; B still sends',
    BOUNDED,
    async () => {
      const audit = new MemoryAuditSink();
      const gw = await start(yaml({ limits: '{ maxTasksPerPrincipal: 4 }' }), audit);
      const held = [];
      for (let i = 0; i < 4; i++)
        held.push(taskOf(await send(gw, 'slow', TOKEN_A, `story ${i}`, { returnImmediately: true })));
      assertQuotaRefusal(await send(gw, 'echo', TOKEN_A, 'one more'), /limits\.maxTasksPerPrincipal/);
      assert.ok(audit.events.some((event) => event.type === 'a2a.task.rejected' && event.reason === 'task_quota'));
      assert.equal(taskOf(await send(gw, 'echo', TOKEN_B, 'hello')).status.state, 'TASK_STATE_COMPLETED');
      for (const task of held)
        await rpc(`${gw.url}/a2a/slow`, 'CancelTask', { id: task.id }, { token: TOKEN_A, version: '1.0' });
      // Canceled tasks are finished: A's own oldest make room again.
      assert.equal(taskOf(await send(gw, 'echo', TOKEN_A, 'again')).status.state, 'TASK_STATE_COMPLETED');
    },
  );

  it(
    'a parked task past store.parkedTtlMinutes fails, saying why (audited parked_ttl), and frees its slot',
    BOUNDED,
    async () => {
      const audit = new MemoryAuditSink();
      // 0.002 minutes: 120 ms.
      const gw = await start(
        yaml({ limits: '{ maxParkedTasksPerPrincipal: 1 }', store: '{ type: memory, parkedTtlMinutes: 0.002 }' }),
        audit,
      );
      const parked = taskOf(await send(gw, 'ask', TOKEN_A, 'question'));
      assert.equal(parked.status.state, 'TASK_STATE_INPUT_REQUIRED');
      assertQuotaRefusal(await send(gw, 'ask', TOKEN_A, 'another'), /maxParkedTasksPerPrincipal/);
      await sleep(250);
      const read = await getTask(gw, 'ask', TOKEN_A, parked.id);
      assert.equal(read.body.result?.status.state, 'TASK_STATE_FAILED', JSON.stringify(read.body));
      assert.match(JSON.stringify(read.body.result.status.message), /waited too long for input/);
      const row = audit.events.find((event) => event.type === 'a2a.task.failed' && event.reason === 'parked_ttl');
      assert.ok(row, 'the expiry is audited');
      assert.equal((row as { taskId?: string }).taskId, parked.id);
      assert.equal(taskOf(await send(gw, 'ask', TOKEN_A, 'another')).status.state, 'TASK_STATE_INPUT_REQUIRED');
    },
  );

  it('store.maxBytes bounds the bytes held: A’s big tasks evict A’s own, B’s result stays', BOUNDED, async () => {
    const audit = new MemoryAuditSink();
    const gw = await start(
      yaml({ limits: '{ maxInputChars: 200000 }', store: '{ type: memory, maxTasks: 10000, maxBytes: 1048576 }' }),
      audit,
    );
    const bystander = taskOf(await send(gw, 'echo', TOKEN_B, 'small result'));
    const big = 'x'.repeat(150_000);
    const flood = [];
    // Each echoed task holds the text twice (history and reply): ~300 kB, so ~3 fit in 1 MiB.
    for (let i = 0; i < 12; i++) flood.push(taskOf(await send(gw, 'echo', TOKEN_A, `${i} ${big}`)));
    assert.equal((await getTask(gw, 'echo', TOKEN_B, bystander.id)).body.result?.status.state, 'TASK_STATE_COMPLETED');
    assert.equal((await getTask(gw, 'echo', TOKEN_A, flood[0].id)).body.error?.code, -32001, 'A’s oldest went');
    assert.equal((await getTask(gw, 'echo', TOKEN_A, flood[11].id)).body.result?.status.state, 'TASK_STATE_COMPLETED');
  });
});

describe('pending approvals per principal (issue 16)', () => {
  it(
    'A’s proposals over approvals.maxPendingPerPrincipal fail their task saying so (audited principal_quota); B still proposes',
    BOUNDED,
    async () => {
      const audit = new MemoryAuditSink();
      const gw = await start(
        yaml({
          approvals: `approvals:
  maxPendingPerPrincipal: 2
  people:
    - { id: alice, token: "\${ALICE_TOKEN}" }
    - { id: bob, token: "\${BOB_TOKEN}" }`,
          clients: `  - { id: a, token: "\${TOKEN_A}", agents: [ops], owner: alice }
  - { id: b, token: "\${TOKEN_B}", agents: [ops], owner: bob }`,
        }),
        audit,
      );
      for (let i = 0; i < 2; i++) {
        assert.equal(taskOf(await send(gw, 'ops', TOKEN_A, `deploy ${i}`)).status.state, 'TASK_STATE_INPUT_REQUIRED');
      }
      const over = taskOf(await send(gw, 'ops', TOKEN_A, 'deploy again'));
      assert.equal(over.status.state, 'TASK_STATE_FAILED', JSON.stringify(over));
      assert.match(JSON.stringify(over.status.message), /approvals\.maxPendingPerPrincipal/);
      const row = audit.events.find(
        (event) => event.type === 'a2a.approval.refused' && event.reason === 'principal_quota',
      );
      assert.ok(row, 'the refusal is audited');
      assert.equal((row as { taskId?: string }).taskId, over.id);
      // B's own proposals are not refused for A's.
      assert.equal(taskOf(await send(gw, 'ops', TOKEN_B, 'deploy mine')).status.state, 'TASK_STATE_INPUT_REQUIRED');
    },
  );
});
