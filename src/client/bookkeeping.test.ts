import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertAuditSafe } from '../audit/safety.js';
import { MemoryTaskStore } from '../tasks/stores/memory.js';
import {
  MemoryOutboundLedger,
  clientAuditEvent,
  emitAudit,
  ledgerFromTaskStore,
  mirrorId,
  mirrorTask,
  recordMirror,
} from './bookkeeping.js';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

describe('mirror tasks', () => {
  it('carry the outbound prefix, the agent and the remote id', () => {
    assert.equal(mirrorId('travel', 't-1'), 'a2a-out-travel.t-1');
    assert.match(mirrorId('travel', 'not strict!'), /^a2a-out-travel\.[0-9a-f-]{36}$/);
    assert.match(mirrorId('travel', null), /^a2a-out-travel\.[0-9a-f-]{36}$/);
    const mirror = mirrorTask({ agent: 'travel', remoteTaskId: 't-1', contextId: 'c-1', state: 'working', now: NOW });
    assert.deepEqual(mirror, {
      id: 'a2a-out-travel.t-1',
      contextId: 'c-1',
      status: { state: 'working', timestamp: '2026-03-01T12:00:00.000Z' },
      artifacts: [],
      history: [],
      metadata: { direction: 'outbound', agent: 'travel', remoteTaskId: 't-1' },
    });
  });

  it('hold no content', () => {
    const mirror = mirrorTask({ agent: 'travel', state: 'completed', now: NOW });
    assert.deepEqual(mirror.history, []);
    assert.deepEqual(mirror.artifacts, []);
    assert.equal(mirror.status.message, undefined);
    assert.equal(mirror.contextId, mirror.id, 'a context of its own when the remote gave none');
  });
});

describe('MemoryOutboundLedger', () => {
  it('scopes mirrors by owner and replaces by id', () => {
    const ledger = new MemoryOutboundLedger();
    ledger.record('alice', mirrorTask({ agent: 'a', remoteTaskId: 't', state: 'working', now: NOW }));
    ledger.record('alice', mirrorTask({ agent: 'a', remoteTaskId: 't', state: 'completed', now: NOW }));
    assert.equal(ledger.get('alice', 'a2a-out-a.t')?.status.state, 'completed');
    assert.equal(ledger.get('bob', 'a2a-out-a.t'), undefined);
    assert.equal(ledger.list('alice').length, 1);
  });

  it('evicts the oldest beyond maxTasks', () => {
    const ledger = new MemoryOutboundLedger({ maxTasks: 2 });
    for (const id of ['1', '2', '3'])
      ledger.record('o', mirrorTask({ agent: 'a', remoteTaskId: id, state: 'working', now: NOW }));
    assert.equal(ledger.size, 2);
    assert.equal(ledger.get('o', 'a2a-out-a.1'), undefined);
    assert.ok(ledger.get('o', 'a2a-out-a.3'));
  });

  it('plugs into the shared task store, scoped by owner', async () => {
    const store = new MemoryTaskStore({ maxTasks: 10 });
    try {
      const mirror = mirrorTask({ agent: 'a', remoteTaskId: 't', state: 'working', now: Date.now() });
      await ledgerFromTaskStore(store).record('alice', mirror);
      assert.equal((await store.get('alice', mirror.id))?.id, 'a2a-out-a.t');
      assert.equal(await store.get('bob', mirror.id), undefined);
    } finally {
      await store.close();
    }
  });
});

describe('recordMirror and emitAudit', () => {
  it('swallow failures and log only names', async () => {
    const logs: string[] = [];
    const log = (event: string, fields: Readonly<Record<string, string | number>>) =>
      logs.push(`${event} ${JSON.stringify(fields)}`);
    const mirror = mirrorTask({ agent: 'a', remoteTaskId: 't', state: 'working', now: NOW });
    await recordMirror(
      { record: () => Promise.reject(new Error('contents of the prompt')), get: () => undefined },
      'o',
      mirror,
      log,
    );
    await recordMirror(
      {
        record: () => {
          throw new TypeError('boom');
        },
        get: () => undefined,
      },
      'o',
      mirror,
      log,
    );
    const event = clientAuditEvent('a2a.client.send', { outcome: 'ok', agent: 'a' }, new Date(NOW));
    await emitAudit(
      () => {
        throw Object.assign(new Error('disk'), { code: 'AUDIT_WRITE_FAILED' });
      },
      event,
      log,
    );
    assert.equal(logs.length, 3);
    assert.ok(!logs.join('\n').includes('contents of the prompt'));
    assert.match(logs[1]!, /TypeError/);
    assert.match(logs[2]!, /AUDIT_WRITE_FAILED/);
  });
});

describe('clientAuditEvent', () => {
  it('builds rows every sink accepts', () => {
    const send = clientAuditEvent(
      'a2a.client.send',
      {
        outcome: 'error',
        agent: 'travel',
        taskId: 't-1',
        contextId: 'c-1',
        state: 'working',
        inputChars: 5,
        outputChars: 0,
        reason: 'request_timeout',
      },
      new Date(NOW),
    );
    assertAuditSafe(send);
    assert.deepEqual(send, {
      type: 'a2a.client.send',
      time: '2026-03-01T12:00:00.000Z',
      outcome: 'error',
      agent: 'travel',
      contextId: 'c-1',
      state: 'working',
      outputChars: 0,
      reason: 'request_timeout',
      taskId: 't-1',
      inputChars: 5,
    });
    const get = clientAuditEvent(
      'a2a.client.get',
      { outcome: 'denied', agent: 'bad name\n', taskId: 'x y' },
      new Date(NOW),
    );
    assertAuditSafe(get);
    assert.equal(get.agent, '-');
    assert.equal(get.taskId, '-');
  });
});
