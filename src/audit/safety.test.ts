/**
 * The audit rows' safety check has two paths: a one-pass check for the flat rows a gateway writes
 * all day, and the full check, rule by rule, that reports what is wrong. The one-pass check may
 * only make the check faster: these properties hold it to the full one on events built from every
 * field's good values and from hostile ones.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TASK_STATES } from '../protocol/model.js';
import { AUDIT_EVENT_SPEC, AUDIT_EVENT_TYPES, auditTime, type AuditEventType } from './events.js';
import { AuditUnsafeEventError, assertAuditSafe, checkEveryRule, passesKnownShape } from './safety.js';

const ID_FIELDS = ['client', 'agent', 'taskId', 'contextId', 'actionId', 'tool', 'user', 'host'];
const COUNT_FIELDS = ['inputChars', 'outputChars', 'durationMs', 'argsBytes'];

/** A value the field's rule accepts (mostly), by the field's name. */
function goodValue(field: string, type: AuditEventType): fc.Arbitrary<unknown> {
  if (ID_FIELDS.includes(field)) return fc.stringMatching(/^[\x21-\x7e]{1,40}$/);
  if (COUNT_FIELDS.includes(field)) return fc.nat();
  switch (field) {
    case 'principalKind':
      return fc.constantFrom('client', 'service', 'delegated');
    case 'reason': {
      const reasons = AUDIT_EVENT_SPEC[type].reasons as readonly string[];
      return reasons.length > 0 ? fc.constantFrom(...reasons) : fc.constant('none');
    }
    case 'remote':
      return fc.constantFrom('127.0.0.1', '::1', '203.0.113.7', '2001:db8::1');
    case 'state':
      return fc.constantFrom(...TASK_STATES);
    case 'level':
      return fc.constantFrom('L1', 'L2', 'L3', 'L4');
    case 'argsDigest':
      return fc.stringMatching(/^[0-9a-f]{64}$/);
    case 'sections':
      return fc.constantFrom('clients', 'clients,limits');
    case 'counts':
      return fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), fc.nat(), { maxKeys: 4 });
    default:
      return fc.constant('x');
  }
}

/** Values no field should take, or only some fields: wrong types, long strings, nesting, near misses. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('a'.repeat(256), 'a'.repeat(257), 'has space', 'line\nbreak', 'root', 'done', 'L5', ''),
  fc.constantFrom(`fe80::1%${'a'.repeat(300)}`, 'evil.example', '127.0.0.1'),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2, -0),
  fc.constantFrom(undefined, null, true),
  fc.array(fc.nat(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.nat(), fc.string({ maxLength: 4 })), { maxKeys: 3 }),
  fc.constant({ deep: { deeper: { deepest: 1 } } }),
);

/** An event of `type`: each field omitted, good or hostile; sometimes an extra key; the envelope sometimes broken. */
const eventArb: fc.Arbitrary<Record<string, unknown>> = fc
  .constantFrom(...AUDIT_EVENT_TYPES)
  .chain((type) => {
    const spec = AUDIT_EVENT_SPEC[type];
    const fields = [...(spec.required as readonly string[]), ...(spec.optional as readonly string[])];
    const fieldArbs = Object.fromEntries(
      fields.map((field) => [
        field,
        fc.oneof(
          { weight: 6, arbitrary: goodValue(field, type) },
          { weight: 1, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: hostileValue },
        ),
      ]),
    );
    return fc.record({
      type: fc.oneof({ weight: 9, arbitrary: fc.constant<string>(type) }, fc.constant('a2a.task.unknown')),
      time: fc.oneof({ weight: 9, arbitrary: fc.constant(auditTime()) }, fc.constant('2025-06-01 12:00'), hostileValue),
      outcome: fc.oneof(
        { weight: 9, arbitrary: fc.constantFrom(...(spec.outcomes as readonly string[])) },
        fc.constantFrom('ok', 'denied', 'error', 'maybe'),
      ),
      fields: fc.record(fieldArbs),
      extra: fc.option(
        fc.tuple(
          fc.oneof(
            fc.constantFrom('token', 'note', 'messageText', 'client', 'counts', 'seq'),
            fc.string({ maxLength: 6 }),
          ),
          hostileValue,
        ),
        { freq: 4 },
      ),
    });
  })
  .map(({ type, time, outcome, fields, extra }) => {
    const event: Record<string, unknown> = { type, time, outcome, ...fields };
    if (extra !== null) event[extra[0]] = extra[1];
    return event;
  });

/** 'ok', or the key and message of the refusal (anything else thrown is rethrown). */
function verdict(check: () => void): string {
  try {
    check();
    return 'ok';
  } catch (error) {
    if (!(error instanceof AuditUnsafeEventError)) throw error;
    return `${error.key}: ${error.message}`;
  }
}

describe('audit safety: the one-pass check', () => {
  it('property: accepts only what the full check accepts, and refuses with the same key and message', () => {
    fc.assert(
      fc.property(eventArb, (event) => {
        const full = verdict(() => checkEveryRule(event));
        if (passesKnownShape(event)) assert.equal(full, 'ok');
        assert.equal(
          verdict(() => assertAuditSafe(event)),
          full,
        );
      }),
      { numRuns: 3000 },
    );
  });

  it('property: takes every flat event of known fields that the full check accepts (so rows skip the second pass)', () => {
    fc.assert(
      fc.property(eventArb, (event) => {
        const spec = AUDIT_EVENT_SPEC[event.type as AuditEventType] as
          { required: readonly string[]; optional: readonly string[] } | undefined;
        const known = (key: string): boolean =>
          ['type', 'time', 'outcome'].includes(key) ||
          spec?.required.includes(key) === true ||
          spec?.optional.includes(key) === true;
        const flat = Object.entries(event).every(
          ([key, value]) => known(key) && (typeof value !== 'object' || value === null),
        );
        if (flat && verdict(() => checkEveryRule(event)) === 'ok') assert.ok(passesKnownShape(event));
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves nested values, inherited keys and non-objects to the full check', () => {
    const time = auditTime();
    const row = {
      type: 'a2a.task.submitted',
      time,
      outcome: 'ok',
      client: 'c',
      agent: 'a',
      taskId: 't',
      contextId: 'x',
      inputChars: 1,
    };
    assert.ok(passesKnownShape(row));
    assert.ok(!passesKnownShape({ ...row, counts: {} }));
    assert.ok(!passesKnownShape(Object.assign(Object.create({ principalKind: 'client' }) as object, row)));
    assert.ok(!passesKnownShape(null));
    assert.ok(!passesKnownShape([row]));
    assert.ok(!passesKnownShape({ ...row, inputChars: undefined }));
    assert.ok(!passesKnownShape({ ...row, contextId: 'c'.repeat(257) }));
  });
});
