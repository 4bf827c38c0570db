import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeRow, GENESIS_HEAD } from './chain.js';
import { AUDIT_EVENT_SPEC, AUDIT_EVENT_TYPES, auditTime, type AuditEvent, type AuditEventType } from './events.js';
import { AuditUnsafeEventError, assertAuditSafe } from './safety.js';

const time = auditTime(new Date('2025-06-01T12:00:00.000Z'));
const task = { client: 'partner', agent: 'helpdesk', taskId: 't-1', contextId: 'c-1' } as const;

/** One valid event of every type. */
const SAMPLES: Record<AuditEventType, AuditEvent> = {
  'a2a.task.submitted': { type: 'a2a.task.submitted', time, outcome: 'ok', ...task, inputChars: 12 },
  'a2a.task.completed': {
    type: 'a2a.task.completed',
    time,
    outcome: 'ok',
    ...task,
    principalKind: 'client',
    inputChars: 12,
    outputChars: 40,
  },
  'a2a.task.failed': { type: 'a2a.task.failed', time, outcome: 'error', ...task, reason: 'agent_failed' },
  'a2a.task.canceled': { type: 'a2a.task.canceled', time, outcome: 'ok', ...task, reason: 'canceled_by_client' },
  'a2a.task.rejected': {
    type: 'a2a.task.rejected',
    time,
    outcome: 'denied',
    client: 'partner',
    agent: 'helpdesk',
    reason: 'input_too_long',
    inputChars: 100001,
  },
  'a2a.task.input_required': { type: 'a2a.task.input_required', time, outcome: 'ok', ...task, outputChars: 9 },
  'a2a.approval.requested': {
    type: 'a2a.approval.requested',
    time,
    outcome: 'ok',
    ...task,
    actionId: 'aBc_123-xyz',
    tool: 'send_email',
    level: 'L4',
    user: 'person:alice',
    principalKind: 'client',
  },
  'a2a.approval.refused': {
    type: 'a2a.approval.refused',
    time,
    outcome: 'denied',
    ...task,
    reason: 'service_principal_capped',
    tool: 'deploy',
    level: 'L3',
  },
  'a2a.approval.decided': {
    type: 'a2a.approval.decided',
    time,
    outcome: 'ok',
    user: 'jwt:alice',
    actionId: 'aBc_123-xyz',
    taskId: 't-1',
    agent: 'helpdesk',
    reason: 'approved',
    remote: '127.0.0.1',
  },
  'a2a.approval.decision_refused': {
    type: 'a2a.approval.decision_refused',
    time,
    outcome: 'denied',
    user: 'person:mallory',
    reason: 'not_decider',
    actionId: 'aBc_123-xyz',
  },
  'a2a.approval.consumed': {
    type: 'a2a.approval.consumed',
    time,
    outcome: 'ok',
    ...task,
    actionId: 'aBc_123-xyz',
    user: 'person:alice',
  },
  'a2a.approval.reparked': {
    type: 'a2a.approval.reparked',
    time,
    outcome: 'denied',
    ...task,
    actionId: 'aBc_123-xyz',
    reason: 'not_decided',
  },
  'a2a.question.asked': {
    type: 'a2a.question.asked',
    time,
    outcome: 'ok',
    ...task,
    actionId: 'q_1',
    user: 'person:alice',
    state: 'input-required',
  },
  'a2a.question.answered': {
    type: 'a2a.question.answered',
    time,
    outcome: 'ok',
    user: 'person:alice',
    actionId: 'q_1',
    taskId: 't-1',
    agent: 'helpdesk',
  },
  'a2a.question.consumed': {
    type: 'a2a.question.consumed',
    time,
    outcome: 'ok',
    ...task,
    actionId: 'q_1',
  },
  'a2a.server.auth_failed': {
    type: 'a2a.server.auth_failed',
    time,
    outcome: 'denied',
    reason: 'invalid_credentials',
    agent: 'helpdesk',
    remote: '203.0.113.7',
  },
  'a2a.server.forbidden': {
    type: 'a2a.server.forbidden',
    time,
    outcome: 'denied',
    reason: 'agent_not_allowed',
    client: 'partner',
    principalKind: 'service',
    agent: 'billing',
  },
  'a2a.server.rate_limited': {
    type: 'a2a.server.rate_limited',
    time,
    outcome: 'denied',
    reason: 'auth_failure_limit',
    remote: '2001:db8::1',
  },
  'a2a.task.suspicious_input': {
    type: 'a2a.task.suspicious_input',
    time,
    outcome: 'ok',
    ...task,
    counts: { instruction_override: 2, role_marker: 1 },
  },
  'a2a.client.send': {
    type: 'a2a.client.send',
    time,
    outcome: 'denied',
    agent: 'travel',
    reason: 'insecure_url',
    inputChars: 20,
  },
  'a2a.client.get': {
    type: 'a2a.client.get',
    time,
    outcome: 'ok',
    agent: 'travel',
    taskId: 'remote-7',
    state: 'completed',
    outputChars: 300,
  },
  'a2a.tool.called': {
    type: 'a2a.tool.called',
    time,
    outcome: 'ok',
    ...task,
    tool: 'files.read_file',
    level: 'L1',
    durationMs: 12,
    argsBytes: 24,
    argsDigest: 'a'.repeat(64),
    outputChars: 100,
  },
  'a2a.tool.refused': {
    type: 'a2a.tool.refused',
    time,
    outcome: 'denied',
    ...task,
    tool: 'files.write_file',
    level: 'L4',
    reason: 'service_principal_capped',
  },
  'a2a.tool.parked': {
    type: 'a2a.tool.parked',
    time,
    outcome: 'ok',
    ...task,
    tool: 'files.write_file',
    level: 'L4',
    argsBytes: 24,
    argsDigest: 'b'.repeat(64),
  },
  'a2a.push.delivered': {
    type: 'a2a.push.delivered',
    time,
    outcome: 'ok',
    agent: 'helpdesk',
    taskId: 't-1',
    host: 'hooks.example',
    client: 'partner',
    durationMs: 12,
  },
  'a2a.push.failed': {
    type: 'a2a.push.failed',
    time,
    outcome: 'error',
    agent: 'helpdesk',
    taskId: 't-1',
    host: 'hooks.example',
    reason: 'http_status',
  },
  'a2a.push.refused': {
    type: 'a2a.push.refused',
    time,
    outcome: 'denied',
    agent: 'helpdesk',
    taskId: 't-1',
    host: '169.254.169.254',
    reason: 'address_blocked',
  },
  'config.reloaded': { type: 'config.reloaded', time, outcome: 'ok', sections: 'clients,limits' },
  'config.reload_refused': {
    type: 'config.reload_refused',
    time,
    outcome: 'denied',
    reason: 'needs_restart',
    sections: 'server',
  },
};

function refused(event: unknown, key: string): void {
  assert.throws(
    () => assertAuditSafe(event),
    (error: unknown) => {
      assert.ok(error instanceof AuditUnsafeEventError);
      assert.equal(error.code, 'AUDIT_EVENT_UNSAFE');
      assert.equal(error.key, key);
      return true;
    },
  );
}

describe('audit events', () => {
  it('accepts a valid event of every type', () => {
    assert.deepEqual(Object.keys(SAMPLES).sort(), [...AUDIT_EVENT_TYPES].sort());
    for (const event of Object.values(SAMPLES)) assertAuditSafe(event);
  });

  it("property: every type's row holds the event as JSON.stringify writes it, whatever its ids hold and whichever optional fields it omits", () => {
    const ID_KEYS = new Set(['client', 'agent', 'taskId', 'contextId', 'actionId', 'tool', 'user', 'host']);
    fc.assert(
      fc.property(
        fc.constantFrom(...AUDIT_EVENT_TYPES),
        fc.stringMatching(/^[!-~]{1,40}$/),
        fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }),
        fc.nat({ max: 1e9 }),
        (type, id, drop, seq) => {
          const optional: readonly string[] = AUDIT_EVENT_SPEC[type].optional;
          const event: Record<string, unknown> = { ...SAMPLES[type] };
          Object.keys(event).forEach((key, index) => {
            if (ID_KEYS.has(key)) event[key] = id;
            else if (optional.includes(key) && drop[index] === true) event[key] = undefined;
          });
          const head = seq === 0 ? GENESIS_HEAD : { seq, hash: 'cd'.repeat(32) };
          const row = encodeRow(head, event as AuditEvent);
          const body = JSON.stringify({ seq: head.seq + 1, prev: head.hash, ...event });
          assert.equal(row.line, `${body.slice(0, -1)},"hash":"${row.hash}"}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses keys named like a token, secret or content, at any depth', () => {
    const base = SAMPLES['a2a.task.submitted'];
    for (const key of [
      'token',
      'accessToken',
      'secret',
      'clientSecret',
      'Authorization',
      'password',
      'passwd',
      'content',
      'text',
      'messageText',
      'message',
      'apiKey',
      'x-api-key',
      'cookie',
      'credentials',
    ]) {
      refused({ ...base, [key]: 'x' }, key);
    }
    refused({ ...SAMPLES['a2a.task.suspicious_input'], counts: { token: 1 } }, 'counts.token');
    refused({ ...SAMPLES['a2a.task.suspicious_input'], counts: { hidden_text: 1 } }, 'counts.hidden_text');
  });

  it('refuses any string longer than 256 characters, and accepts 256', () => {
    const base = SAMPLES['a2a.task.submitted'];
    assertAuditSafe({ ...base, contextId: 'c'.repeat(256) });
    refused({ ...base, contextId: 'c'.repeat(257) }, 'contextId');
    refused({ ...base, time: `${time}${' '.repeat(300)}` }, 'time');
  });

  it('never echoes the refused value', () => {
    const secret = 'sk-live-0123456789abcdefghijklmnopqrstuvwxyz';
    for (const event of [
      { ...SAMPLES['a2a.task.submitted'], token: secret },
      { ...SAMPLES['a2a.task.submitted'], client: `${secret} ${secret}` },
      { ...SAMPLES['a2a.task.failed'], reason: secret },
      { ...SAMPLES['a2a.task.suspicious_input'], counts: { [secret]: 1 } },
    ]) {
      assert.throws(
        () => assertAuditSafe(event),
        (error: unknown) => error instanceof AuditUnsafeEventError && !error.message.includes(secret),
      );
    }
  });

  it('refuses what does not fit the type: unknown keys, reasons, outcomes, shapes', () => {
    const submitted = SAMPLES['a2a.task.submitted'];
    refused({ ...submitted, note: 'hi' }, 'note');
    refused({ ...submitted, reason: 'agent_failed' }, 'reason');
    refused({ ...submitted, outcome: 'error' }, 'outcome');
    refused({ ...submitted, type: 'a2a.task.unknown' }, 'type');
    refused({ ...submitted, time: '2025-06-01 12:00' }, 'time');
    refused({ ...submitted, inputChars: -1 }, 'inputChars');
    refused({ ...submitted, inputChars: 1.5 }, 'inputChars');
    refused({ ...submitted, client: 'has space' }, 'client');
    refused({ ...submitted, client: 'line\nbreak' }, 'client');
    refused({ ...submitted, taskId: undefined }, 'taskId');
    refused({ ...submitted, principalKind: 'root' }, 'principalKind');
    refused({ ...SAMPLES['a2a.task.failed'], reason: 'Error: ENOENT /etc/passwd' }, 'reason');
    refused({ ...SAMPLES['a2a.server.auth_failed'], remote: 'evil.example' }, 'remote');
    refused({ ...SAMPLES['a2a.client.get'], state: 'done' }, 'state');
    refused({ ...SAMPLES['a2a.task.suspicious_input'], counts: { a: '1' } }, 'counts.a');
    refused({ ...SAMPLES['a2a.task.suspicious_input'], counts: { 'Not Snake': 1 } }, 'counts');
    refused({ ...SAMPLES['a2a.task.suspicious_input'], counts: { deep: { x: 1 } } }, 'counts.deep');
    refused({ ...submitted, contextId: ['c-1'] }, 'contextId');
    // A reload row names sections only: never a key below them, a value, or a client id.
    refused({ ...SAMPLES['config.reloaded'], sections: 'clients[b].token' }, 'sections');
    refused({ ...SAMPLES['config.reloaded'], sections: 'clients, limits' }, 'sections');
    refused({ ...SAMPLES['config.reload_refused'], reason: 'needs_restart: server.port' }, 'reason');
    refused('a2a.task.submitted', '');
    refused(null, '');
  });

  it('lets optional fields be undefined (they are not written)', () => {
    assertAuditSafe({ ...SAMPLES['a2a.task.completed'], principalKind: undefined, inputChars: undefined });
  });

  it('property: a forbidden key anywhere in an otherwise valid event is refused', () => {
    const forbidden = fc
      .tuple(
        fc.constantFrom('token', 'secret', 'authorization', 'password', 'content', 'text', 'message'),
        fc.stringMatching(/^[a-z]{0,5}$/),
        fc.stringMatching(/^[A-Za-z]{0,5}$/),
        fc.boolean(),
      )
      .map(([word, before, after, upper]) => `${before}${upper ? word.toUpperCase() : word}${after}`);
    fc.assert(
      fc.property(
        fc.constantFrom(...AUDIT_EVENT_TYPES),
        forbidden,
        fc.oneof(fc.string({ maxLength: 20 }), fc.integer()),
        fc.boolean(),
        (type, key, value, nested) => {
          const event = SAMPLES[type];
          const tampered = nested
            ? { ...event, counts: { ...('counts' in event ? event.counts : {}), [key]: value } }
            : { ...event, [key]: value };
          assert.throws(() => assertAuditSafe(tampered), AuditUnsafeEventError);
        },
      ),
    );
  });

  it('property: a string over 256 characters in any field is refused', () => {
    fc.assert(
      fc.property(fc.constantFrom(...AUDIT_EVENT_TYPES), fc.integer({ min: 257, max: 2000 }), (type, length) => {
        const event = SAMPLES[type] as unknown as Record<string, unknown>;
        for (const key of Object.keys(event)) {
          assert.throws(() => assertAuditSafe({ ...event, [key]: 'a'.repeat(length) }), AuditUnsafeEventError);
        }
      }),
      { numRuns: 30 },
    );
  });

  it('types: reasons are codes, content fields do not exist', () => {
    // These lines are checked by `tsc`; at run time the guard refuses them too.
    const freeText: AuditEvent = {
      type: 'a2a.task.failed',
      time,
      outcome: 'error',
      ...task,
      // @ts-expect-error free text is not a reason code
      reason: 'the backend said: ...',
    };
    const content: AuditEvent = {
      type: 'a2a.task.submitted',
      time,
      outcome: 'ok',
      ...task,
      inputChars: 1,
      // @ts-expect-error no content field
      text: 'hello',
    };
    const reasonless: AuditEvent = {
      type: 'a2a.task.completed',
      time,
      outcome: 'ok',
      ...task,
      outputChars: 1,
      // @ts-expect-error a completed task has no reason
      reason: 'agent_failed',
    };
    // @ts-expect-error auth_failed is always denied
    const deniedOnly: AuditEvent = {
      type: 'a2a.server.auth_failed',
      time,
      outcome: 'ok',
      reason: 'invalid_credentials',
    };
    const badTime: AuditEvent = {
      type: 'a2a.server.auth_failed',
      // @ts-expect-error the time is an ISO timestamp
      time: 'yesterday',
      outcome: 'denied',
      reason: 'invalid_credentials',
    };
    const bad: unknown[] = [freeText, content, reasonless, deniedOnly, badTime];
    for (const event of bad) assert.throws(() => assertAuditSafe(event), AuditUnsafeEventError);
  });
});
