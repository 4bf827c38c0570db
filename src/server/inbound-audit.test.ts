import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryAuditSink } from '../audit/index.js';
import { A2AError } from '../protocol/errors.js';
import { InboundAudit } from './inbound-audit.js';
import { silentLogger } from './log.js';
import type { CallContext } from '../tasks/call-context.js';

const backend = {
  kind: 'none',
  run: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve({ done: true, value: undefined }) }) }),
} as unknown as CallContext['backend'];

function ctx(clientId: string): CallContext {
  return { principalKey: `service:${clientId}::u`, agentSlug: 'echo', backend, caller: { clientId, kind: 'service' } };
}

describe('InboundAudit', () => {
  it('records a JWT client id that rows cannot hold as a stable digest, so the task still runs', () => {
    const sink = new MemoryAuditSink();
    const audit = new InboundAudit(sink, silentLogger);
    const observe = audit.taskObserver();
    assert.ok(observe !== undefined);
    for (const clientId of ['partner app', 'é'.repeat(10), 'x'.repeat(300)]) {
      observe({
        type: 'submitted',
        ctx: ctx(clientId),
        taskId: 't-1',
        contextId: 'c-1',
        inputChars: 1,
        outputChars: 0,
      });
    }
    const clients = sink.events.map((event) => ('client' in event ? event.client : undefined));
    for (const client of clients) assert.match(client ?? '', /^~[0-9a-f]{32}$/);
    assert.equal(new Set(clients).size, 3);
    observe({
      type: 'submitted',
      ctx: ctx('partner-app'),
      taskId: 't-2',
      contextId: 'c-1',
      inputChars: 1,
      outputChars: 0,
    });
    const last = sink.events.at(-1);
    assert.equal(last !== undefined && 'client' in last ? last.client : undefined, 'partner-app');
  });

  it('refuses to start a task whose submitted row cannot be written, and only then', () => {
    const failing = {
      write: () => {
        throw new Error('disk full');
      },
      close: () => undefined,
    };
    const audit = new InboundAudit(failing, silentLogger);
    const observe = audit.taskObserver();
    assert.ok(observe !== undefined);
    assert.throws(
      () => observe({ type: 'submitted', ctx: ctx('a'), taskId: 't', contextId: 'c', inputChars: 1, outputChars: 0 }),
      (error: unknown) => error instanceof A2AError && error.code === 'INTERNAL',
    );
    // An outcome row that fails is logged: the task already ran.
    observe({ type: 'completed', ctx: ctx('a'), taskId: 't', contextId: 'c', inputChars: 1, outputChars: 2 });
    audit.authFailed('invalid_credentials', 'echo', '127.0.0.1');
  });

  it('writes nothing and costs nothing without a sink', () => {
    const audit = new InboundAudit(undefined, silentLogger);
    assert.equal(audit.enabled, false);
    assert.equal(audit.taskObserver(), undefined);
    audit.forbidden('address_not_allowed', undefined, '203.0.113.9');
    assert.equal(audit.scansInput, false);
  });

  it('scans messages for suspicious patterns only when told to (metrics alone do not)', () => {
    const sink = { write: () => undefined, close: () => undefined };
    assert.equal(new InboundAudit(sink, silentLogger).scansInput, true);
    assert.equal(new InboundAudit(sink, silentLogger, { scanInput: false }).scansInput, false);
    assert.equal(new InboundAudit(undefined, silentLogger, { scanInput: true }).scansInput, false);
  });
});
