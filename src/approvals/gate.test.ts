import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { AgentBackend, AgentEvent, AgentTurn } from '../agents/backend.js';
import type { AuditEvent } from '../audit/events.js';
import type { Message, SendParams, Task } from '../protocol/model.js';
import { TaskService } from '../tasks/service.js';
import type { CallContext } from '../tasks/call-context.js';
import type { ApprovalRecords } from '../tasks/stores/approval-records.js';
import { MemoryTaskStore } from '../tasks/stores/memory.js';
import { SqliteTaskStore } from '../tasks/stores/sqlite.js';
import { ApprovalService, parkedOn } from './gate.js';

const ALICE = 'person:alice';

function approvals(
  rows: AuditEvent[] = [],
  now: () => number = Date.now,
  audit?: (event: AuditEvent) => void,
  records?: ApprovalRecords,
) {
  return new ApprovalService({
    ...(records !== undefined && { records }),
    settings: { ttlMs: 60_000, serviceMaxLevel: 'L2', maxPending: 100 },
    agentMaxLevels: new Map([['ops', 'L4']]),
    clientOwners: new Map([['bot', ALICE]]),
    secrets: [],
    audit: (event) => {
      audit?.(event);
      rows.push(event);
    },
    baseUrl: () => 'http://127.0.0.1:1',
    now,
  });
}

function ctx(backend: AgentBackend, kind: 'client' | 'service' | 'delegated' = 'client'): CallContext {
  return {
    principalKey: `${kind}:bot::bot`,
    agentSlug: 'ops',
    backend,
    caller: { clientId: 'bot', kind, subject: 'bot' },
  };
}

function send(text: string, taskId?: string): SendParams {
  const message: Message = { messageId: `m-${Math.random()}`, role: 'user', parts: [{ kind: 'text', text }] };
  if (taskId !== undefined) message.taskId = taskId;
  return { message, configuration: { returnImmediately: false } };
}

function taskOf(result: Awaited<ReturnType<TaskService['send']>>): Task {
  assert.equal(result.kind, 'task');
  return result.task;
}

/** Proposes on a fresh turn, completes when it carries an approval or an answer; counts its turns. */
function proposer(level = 'L4', sync = false): AgentBackend & { turns: AgentTurn[] } {
  const turns: AgentTurn[] = [];
  const events = (turn: AgentTurn): AgentEvent[] => {
    turns.push(turn);
    if (turn.approvedAction !== undefined) return [{ type: 'completed', text: 'done' }];
    return [{ type: 'propose-action', action: { tool: 'deploy', args: { env: 'prod' }, level } }];
  };
  return sync
    ? { kind: 'sync', turns, run: async function* () {}, runSync: (turn) => events(turn) }
    : {
        kind: 'async',
        turns,
        run: async function* (turn) {
          yield* events(turn);
        },
      };
}

describe('ApprovalService with the task service', () => {
  it('a backend whose events are ready (runSync) parks in one step, and resumes after approval', async () => {
    const gate = approvals();
    const service = new TaskService({ store: new MemoryTaskStore(), gate });
    const backend = proposer('L4', true);
    const parked = taskOf(await service.send(ctx(backend), send('deploy')));
    assert.equal(parked.status.state, 'input-required');
    const on = parkedOn(parked);
    assert.equal(on?.kind, 'action');
    await gate.decide(on.id, ALICE, 'approve');
    const done = taskOf(await service.send(ctx(backend), send('go', parked.id)));
    assert.equal(done.status.state, 'completed');
    assert.equal(backend.turns.at(-1)?.approvedAction?.tool, 'deploy');
  });

  it('five concurrent resumes after one approval: the action runs exactly once', async () => {
    const gate = approvals();
    const service = new TaskService({ store: new MemoryTaskStore(), gate });
    const backend = proposer();
    const parked = taskOf(await service.send(ctx(backend), send('deploy')));
    await gate.decide(parkedOn(parked)!.id, ALICE, 'approve');
    const settled = await Promise.allSettled(
      Array.from({ length: 5 }, () => service.send(ctx(backend), send('go', parked.id))),
    );
    const ran = backend.turns.filter((turn) => turn.approvedAction !== undefined).length;
    assert.equal(ran, 1);
    assert.ok(settled.some((outcome) => outcome.status === 'fulfilled'));
  });

  it('an auto-allowed action loop is stopped after 8 actions in one turn', async () => {
    const gate = approvals();
    const service = new TaskService({ store: new MemoryTaskStore(), gate });
    let turns = 0;
    const looping: AgentBackend = {
      kind: 'loop',
      run: async function* () {
        turns++;
        yield { type: 'propose-action', action: { tool: 'search', args: {}, level: 'L1' } };
      },
    };
    const failed = taskOf(await service.send(ctx(looping), send('look')));
    assert.equal(failed.status.state, 'failed');
    assert.equal(turns, 9);
  });

  it('a proposal with a bad tool name or level is refused, with its audit row', async () => {
    const rows: AuditEvent[] = [];
    const service = new TaskService({ store: new MemoryTaskStore(), gate: approvals(rows) });
    for (const action of [
      { tool: 'rm -rf /', level: 'L3' },
      { tool: 'deploy', level: 'L9' },
    ]) {
      const backend: AgentBackend = {
        kind: 'bad',
        run: async function* () {
          yield { type: 'propose-action', action };
        },
      };
      const failed = taskOf(await service.send(ctx(backend), send('x')));
      assert.equal(failed.status.state, 'failed');
    }
    assert.equal(
      rows.filter((row) => row.type === 'a2a.approval.refused' && row.reason === 'invalid_proposal').length,
      2,
    );
  });

  it('a continuation over 256 KiB, or not JSON, is refused; a bounded one comes back as a copy on approval', async () => {
    const rows: AuditEvent[] = [];
    const gate = approvals(rows);
    const service = new TaskService({ store: new MemoryTaskStore(), gate });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const continuation of ['x'.repeat(256 * 1024 + 1), cyclic]) {
      const backend: AgentBackend = {
        kind: 'keeps-too-much',
        run: async function* () {
          yield { type: 'propose-action', action: { tool: 'deploy', level: 'L4' }, continuation };
        },
      };
      assert.equal(taskOf(await service.send(ctx(backend), send('x'))).status.state, 'failed');
    }
    assert.equal(rows.filter((row) => row.type === 'a2a.approval.refused').length, 2);

    const kept = { transcript: ['one', 'two'] };
    const seen: unknown[] = [];
    const backend: AgentBackend = {
      kind: 'keeps',
      run: async function* (turn) {
        if (turn.approvedAction !== undefined) {
          seen.push(turn.approvedAction.continuation);
          yield { type: 'completed' };
          return;
        }
        yield { type: 'propose-action', action: { tool: 'deploy', level: 'L4' }, continuation: kept };
      },
    };
    const parked = taskOf(await service.send(ctx(backend), send('x')));
    kept.transcript.push('changed after the proposal');
    const data = parked.status.message?.parts.find((part) => part.kind === 'data');
    const actionId = (data as unknown as { data: { action_id: string } }).data.action_id;
    await gate.decide(actionId, ALICE, 'approve');
    taskOf(await service.send(ctx(backend), send('go', parked.id)));
    assert.deepEqual(seen, [{ transcript: ['one', 'two'] }], 'what was proposed, not what the backend changed since');
  });

  it('an approval that cannot be audited is not requested: the task fails instead of parking unaudited', async () => {
    const gate = approvals([], Date.now, (event) => {
      if (event.type === 'a2a.approval.requested') throw new Error('disk full');
    });
    const service = new TaskService({ store: new MemoryTaskStore(), gate });
    const failed = taskOf(await service.send(ctx(proposer()), send('deploy')));
    assert.equal(failed.status.state, 'failed');
    assert.deepEqual(await gate.pending(ALICE), []);
  });

  it('what the service remembers beside its stores stays bounded by maxPending', async () => {
    const gate = new ApprovalService({
      settings: { ttlMs: 60_000, serviceMaxLevel: 'L2', maxPending: 4 },
      agentMaxLevels: new Map([['ops', 'L4']]),
      clientOwners: new Map([['bot', ALICE]]),
      secrets: [],
      baseUrl: () => 'http://127.0.0.1:1',
    });
    const service = new TaskService({ store: new MemoryTaskStore(), gate });
    const backend = proposer();
    for (let i = 0; i < 20; i++) {
      const parked = taskOf(await service.send(ctx(backend), send(`deploy ${i}`)));
      await gate.decide(parkedOn(parked)!.id, ALICE, 'approve');
      assert.equal(taskOf(await service.send(ctx(backend), send('go', parked.id))).status.state, 'completed');
      assert.ok(gate.remembered <= 4, `remembers ${gate.remembered}`);
    }
  });

  it('without a gate, a proposal fails its task', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    const failed = taskOf(await service.send(ctx(proposer('L1')), send('x')));
    assert.equal(failed.status.state, 'failed');
  });
});

describe('remote questions through the gate', () => {
  function asker(): AgentBackend & { answers: string[] } {
    const answers: string[] = [];
    return {
      kind: 'asker',
      answers,
      run: async function* (turn) {
        if (turn.personAnswer !== undefined) {
          answers.push(turn.personAnswer.text);
          yield { type: 'completed', text: 'thanks' };
          return;
        }
        yield {
          type: 'ask-person',
          remote: {
            question: 'Which day?',
            agent: 'travel',
            taskId: 'r-1',
            contextId: 'rc-1',
            state: 'input-required',
          },
        };
      },
    };
  }

  it('park → caller reply re-parks → wrong person refused → the person answers → resume carries the answer', async () => {
    const rows: AuditEvent[] = [];
    const gate = approvals(rows);
    const service = new TaskService({ store: new MemoryTaskStore(), gate });
    const backend = asker();
    const parked = taskOf(await service.send(ctx(backend), send('book it')));
    assert.equal(parked.status.state, 'input-required');
    const on = parkedOn(parked);
    assert.equal(on?.kind, 'question');
    const again = taskOf(await service.send(ctx(backend), send('Tuesday', parked.id)));
    assert.equal(again.status.state, 'input-required');
    assert.deepEqual(backend.answers, [], 'the caller’s reply never reaches the remote');
    const [question] = await gate.questions(ALICE);
    assert.equal(question?.question, 'Which day?');
    await assert.rejects(gate.answer(on.id, 'person:mallory', 'Friday'), { code: 'not_decider' });
    await gate.answer(on.id, ALICE, 'Wednesday');
    const done = taskOf(await service.send(ctx(backend), send('go on', parked.id)));
    assert.equal(done.status.state, 'completed');
    assert.deepEqual(backend.answers, ['Wednesday']);
    const types = rows.map((row) => row.type);
    for (const type of [
      'a2a.question.asked',
      'a2a.approval.reparked',
      'a2a.question.answered',
      'a2a.question.consumed',
    ]) {
      assert.ok(types.includes(type as never), `${type} in ${types.join(', ')}`);
    }
  });

  it('without approvals configured the question goes to the caller as an ordinary input-required', async () => {
    const gate = new ApprovalService({
      agentMaxLevels: new Map(),
      clientOwners: new Map(),
      secrets: [],
      baseUrl: () => 'http://127.0.0.1:1',
    });
    const service = new TaskService({ store: new MemoryTaskStore(), gate });
    const parked = taskOf(await service.send(ctx(asker()), send('book it')));
    assert.equal(parked.status.state, 'input-required');
    assert.equal(parkedOn(parked), undefined);
    assert.equal(parked.status.message?.parts[0]?.kind === 'text' && parked.status.message.parts[0].text, 'Which day?');
  });
});

describe('ApprovalService over a durable store (SQLite records)', () => {
  async function durable(): Promise<{ store: SqliteTaskStore; close: () => Promise<void> }> {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-gate-'));
    const store = await SqliteTaskStore.open({ path: join(dir, 'airlock.db') });
    return {
      store,
      close: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  for (const sync of [true, false]) {
    it(`a backend ${sync ? 'whose events are ready (runSync)' : 'that awaits'} parks once the action is recorded; five concurrent resumes run it once`, async () => {
      const { store, close } = await durable();
      try {
        // A slow record (as over a network): the turn must wait for it, not race it.
        const real = store.approvals;
        const records: ApprovalRecords = {
          create: async (...args) => {
            await new Promise((resolve) => setTimeout(resolve, 30));
            return real.create(...args);
          },
          get: (...args) => real.get(...args),
          latestOnTask: (...args) => real.latestOnTask(...args),
          pendingFor: (...args) => real.pendingFor(...args),
          decidedWaiting: (...args) => real.decidedWaiting(...args),
          transition: (...args) => real.transition(...args),
          takeKept: (...args) => real.takeKept(...args),
          withdraw: (...args) => real.withdraw(...args),
          sweep: (...args) => real.sweep(...args),
        };
        const gate = approvals([], Date.now, undefined, records);
        const service = new TaskService({ store, gate });
        const backend = proposer('L4', sync);
        const parked = taskOf(await service.send(ctx(backend), send('deploy')));
        assert.equal(parked.status.state, 'input-required');
        const on = parkedOn(parked);
        assert.equal(on?.kind, 'action');
        // Recorded before the caller heard of it: the person finds it at once.
        assert.deepEqual(
          (await gate.pending(ALICE)).map((view) => view.actionId),
          [on.id],
        );
        await gate.decide(on.id, ALICE, 'approve');
        const settled = await Promise.allSettled(
          Array.from({ length: 5 }, () => service.send(ctx(backend), send('go', parked.id))),
        );
        assert.ok(settled.some((outcome) => outcome.status === 'fulfilled'));
        assert.equal(backend.turns.filter((turn) => turn.approvedAction !== undefined).length, 1);
        await service.close();
      } finally {
        await close();
      }
    });
  }
});
