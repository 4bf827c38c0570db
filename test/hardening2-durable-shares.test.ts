/**
 * Fair shares over the durable stores, end to end over HTTP (issue 16): the same hostile client A
 * and bystander B as `hardening2-fair-shares.test.ts`, against a gateway whose tasks live in
 * SQLite and in PostgreSQL, opened the way `airlock serve` opens them (the config's quotas and
 * parked TTL, events to the gateway's audit trail). A's parked tasks, its flood of finished
 * tasks and its running tasks take only its own share; a parked task past its TTL is failed by
 * the sweep, audited, and frees the slot.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { AgentBackend, AgentEvent } from '../src/agents/backend.js';
import { MemoryAuditSink } from '../src/audit/index.js';
import { parseConfig } from '../src/config/load.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';
import { storeShareOptions } from '../src/server/store-shares.js';
import type { TaskStore } from '../src/tasks/store.js';
import { openTaskStore } from '../src/tasks/stores/index.js';
import { dropSchema, POSTGRES_URL, postgresSkip, uniqueName } from './helpers/backing-services.js';
import { rpc, TOKEN_A, TOKEN_B, v10Message } from './helpers/gateway.js';

/** Parks every turn on a question (input-required). */
class AskBackend implements AgentBackend {
  readonly kind = 'test-ask';
  async *run(): AsyncIterable<AgentEvent> {
    yield { type: 'input-required', question: 'Which day?' };
  }
}

const pgSkip = await postgresSkip();

function yaml(store: string, limits: string): string {
  return `
server: { host: 127.0.0.1, port: 0 }
limits: ${limits}
store: ${store}
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
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [ask, echo, slow] }
  - { id: b, token: "\${TOKEN_B}", agents: [ask, echo, slow] }
`;
}

interface DurableGateway {
  url: string;
  audit: MemoryAuditSink;
  store: TaskStore & { sweep(): Promise<number> | number };
  close(): Promise<void>;
}

/** A gateway over the configured durable store, wired as `airlock serve` wires it. */
async function start(store: string, limits: string): Promise<DurableGateway> {
  const config = parseConfig(yaml(store, limits), { TOKEN_A, TOKEN_B });
  const audit = new MemoryAuditSink();
  // The store reports to the gateway made after it, as in `airlock serve`.
  const late: { gateway?: Gateway } = {};
  const opened = (await openTaskStore(config.store, {
    ...storeShareOptions(config, (event) => late.gateway?.onStoreEvent(event)),
  })) as DurableGateway['store'];
  const gateway = createGateway(config, {
    logger: silentLogger,
    auditSink: audit,
    store: opened,
    backends: { ask: new AskBackend() },
  });
  late.gateway = gateway;
  const url = await gateway.listen();
  return { url, audit, store: opened, close: () => gateway.close() };
}

async function send(gw: DurableGateway, agent: string, token: string, text: string, immediately = false) {
  return rpc(
    `${gw.url}/a2a/${agent}`,
    'SendMessage',
    { message: v10Message(text), ...(immediately && { configuration: { returnImmediately: true } }) },
    { token, version: '1.0' },
  );
}

function taskOf(call: { status: number; body: any }): any {
  assert.equal(call.status, 200, JSON.stringify(call.body));
  assert.ok(call.body.result?.task, JSON.stringify(call.body));
  return call.body.result.task;
}

async function stateOf(gw: DurableGateway, agent: string, token: string, id: string): Promise<string | number> {
  const read = await rpc(`${gw.url}/a2a/${agent}`, 'GetTask', { id }, { token, version: '1.0' });
  return read.body.result?.status.state ?? read.body.error?.code;
}

function assertQuotaRefusal(call: { status: number; body: any; headers: Headers }, setting: RegExp): void {
  assert.equal(call.status, 503, JSON.stringify(call.body));
  assert.match(call.body.error.message, setting);
  assert.ok(Number(call.headers.get('retry-after')) >= 1);
}

const BOUNDED = { timeout: 30_000 };

function describeDurable(name: string, storeYaml: () => string, skip: string | false): void {
  describe(`fair shares over ${name} (issue 16)`, { skip }, () => {
    it('A parks until refused naming maxParkedTasksPerPrincipal (audited); B still sends', BOUNDED, async () => {
      const gw = await start(storeYaml(), '{ maxParkedTasksPerPrincipal: 3 }');
      try {
        let refused;
        let parked = 0;
        for (let i = 0; i < 8 && refused === undefined; i++) {
          const call = await send(gw, 'ask', TOKEN_A, `question ${i}`);
          if (call.status === 200) parked++;
          else refused = call;
        }
        assert.equal(parked, 3);
        assert.ok(refused !== undefined);
        assertQuotaRefusal(refused, /limits\.maxParkedTasksPerPrincipal/);
        assert.ok(gw.audit.events.some((e) => e.type === 'a2a.task.rejected' && e.reason === 'parked_quota'));
        assert.equal(taskOf(await send(gw, 'ask', TOKEN_B, 'mine')).status.state, 'TASK_STATE_INPUT_REQUIRED');
        assert.equal(taskOf(await send(gw, 'echo', TOKEN_B, 'hello')).status.state, 'TASK_STATE_COMPLETED');
      } finally {
        await gw.close();
      }
    });

    it('A floods finished tasks: B’s results stay; A gives up its own oldest', BOUNDED, async () => {
      const gw = await start(storeYaml(), '{ maxTasksPerPrincipal: 5 }');
      try {
        const mine = [];
        for (let i = 0; i < 3; i++) mine.push(taskOf(await send(gw, 'echo', TOKEN_B, `result ${i}`)));
        const flood = [];
        for (let i = 0; i < 30; i++) flood.push(taskOf(await send(gw, 'echo', TOKEN_A, `flood ${i}`)));
        for (const task of mine) assert.equal(await stateOf(gw, 'echo', TOKEN_B, task.id), 'TASK_STATE_COMPLETED');
        assert.equal(await stateOf(gw, 'echo', TOKEN_A, flood[0].id), -32001, 'A’s oldest went');
        assert.equal(await stateOf(gw, 'echo', TOKEN_A, flood[29].id), 'TASK_STATE_COMPLETED');
      } finally {
        await gw.close();
      }
    });

    it(
      'A holding its quota of running tasks is refused naming maxTasksPerPrincipal; B still sends',
      BOUNDED,
      async () => {
        const gw = await start(storeYaml(), '{ maxTasksPerPrincipal: 3 }');
        try {
          const held = [];
          for (let i = 0; i < 3; i++) held.push(taskOf(await send(gw, 'slow', TOKEN_A, `story ${i}`, true)));
          assertQuotaRefusal(await send(gw, 'echo', TOKEN_A, 'one more'), /limits\.maxTasksPerPrincipal/);
          assert.ok(gw.audit.events.some((e) => e.type === 'a2a.task.rejected' && e.reason === 'task_quota'));
          assert.equal(taskOf(await send(gw, 'echo', TOKEN_B, 'hello')).status.state, 'TASK_STATE_COMPLETED');
          for (const task of held)
            await rpc(`${gw.url}/a2a/slow`, 'CancelTask', { id: task.id }, { token: TOKEN_A, version: '1.0' });
          assert.equal(taskOf(await send(gw, 'echo', TOKEN_A, 'again')).status.state, 'TASK_STATE_COMPLETED');
        } finally {
          await gw.close();
        }
      },
    );

    it(
      'a parked task past store.parkedTtlMinutes is failed by the sweep, audited parked_ttl, and frees its slot',
      BOUNDED,
      async () => {
        // 0.002 minutes: 120 ms.
        const gw = await start(
          storeYaml().replace('}', ', parkedTtlMinutes: 0.002 }'),
          '{ maxParkedTasksPerPrincipal: 1 }',
        );
        try {
          const parked = taskOf(await send(gw, 'ask', TOKEN_A, 'question'));
          assertQuotaRefusal(await send(gw, 'ask', TOKEN_A, 'another'), /maxParkedTasksPerPrincipal/);
          await new Promise((resolve) => setTimeout(resolve, 250));
          assert.equal(await gw.store.sweep(), 1, 'the sweep failed the one parked task');
          assert.equal(await stateOf(gw, 'ask', TOKEN_A, parked.id), 'TASK_STATE_FAILED');
          const row = gw.audit.events.find((e) => e.type === 'a2a.task.failed' && e.reason === 'parked_ttl');
          assert.equal((row as { taskId?: string } | undefined)?.taskId, parked.id, 'the expiry is audited');
          assert.equal(taskOf(await send(gw, 'ask', TOKEN_A, 'another')).status.state, 'TASK_STATE_INPUT_REQUIRED');
        } finally {
          await gw.close();
        }
      },
    );
  });
}

const dir = mkdtempSync(join(tmpdir(), 'airlock-durable-shares-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
describeDurable('SQLite', () => `{ type: sqlite, path: "${join(dir, `airlock-${files++}.db`)}" }`, false);

const schemas: string[] = [];
after(async () => {
  for (const schema of schemas) await dropSchema(schema);
});
describeDurable(
  'PostgreSQL',
  () => {
    const schema = uniqueName('airlock_test');
    schemas.push(schema);
    return `{ type: postgres, url: "${POSTGRES_URL}", schema: ${schema} }`;
  },
  pgSkip,
);
