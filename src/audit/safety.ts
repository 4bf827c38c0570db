/**
 * The run-time check every sink makes before writing: `assertAuditSafe` refuses what the
 * types of `events.ts` cannot rule out (long strings, keys that look like secrets or content,
 * unknown keys, reasons outside the type's codes), with an `AuditUnsafeEventError` that names
 * the key and the rule, never the value.
 *
 * @example
 * ```ts
 * assertAuditSafe(event); // throws AuditUnsafeEventError for a token-like key or a 300-char string
 * sink.write(encodeRow(event, head));
 * ```
 */
import { isIP } from 'node:net';
import { AirlockError } from '../errors/index.js';
import { TASK_STATES } from '../protocol/model.js';
import { AUDIT_EVENT_SPEC, type AuditEvent, type AuditEventType } from './events.js';

/**
 * Thrown by `assertAuditSafe`. The message names the key and the rule, never the value.
 *
 * @example
 * ```ts
 * throw new AuditUnsafeEventError('counts.token', 'key looks like a secret or message content');
 * ```
 */
export class AuditUnsafeEventError extends AirlockError {
  readonly code = 'AUDIT_EVENT_UNSAFE';
  /** Dotted path of the offending key, e.g. `counts.token`; empty for the event as a whole. */
  readonly key: string;

  constructor(key: string, problem: string) {
    const shown = key.length > 64 ? `${key.slice(0, 64)}…` : key;
    super(`audit event refused: ${shown.length > 0 ? `${shown}: ` : ''}${problem}`);
    this.key = shown;
  }
}

/**
 * Longest string value an event may carry anywhere.
 *
 * @example
 * ```ts
 * const shown = detail.slice(0, MAX_AUDIT_STRING);
 * ```
 */
export const MAX_AUDIT_STRING = 256;
/**
 * Keys that suggest a secret or message content; matched anywhere in the key, any case
 * (`text` but not `context`, so `contextId` passes).
 */
const FORBIDDEN_KEY =
  /token|secret|authori[sz]ation|passw(?:or)?d|passphrase|content|(?<!con)text|message|cookie|credential|api[-_]?key|bearer|private[-_]?key/i;
/** Printable ASCII without spaces, as the protocol layer requires of ids. */
const ID = /^[\x21-\x7e]{1,256}$/;
const DIGEST = /^[0-9a-f]{64}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const COUNT_KEY = /^[a-z][a-z0-9_]{0,63}$/;
/** Config section names, comma-separated: `clients,limits`. */
const SECTIONS = /^[a-z][a-zA-Z0-9]{0,31}(?:,[a-z][a-zA-Z0-9]{0,31}){0,31}$/;
const MAX_COUNT_KEYS = 32;
const MAX_DEPTH = 2;
const PRINCIPAL_KINDS: readonly string[] = ['client', 'service', 'delegated'];
const STATES: readonly string[] = TASK_STATES;

/**
 * Refuses an event that could carry content or secrets, or that does not match its type's
 * spec: any string longer than 256 characters, any key (at any depth) named like
 * token/secret/authorization/password/content/text/message/cookie/credential/api key, unknown
 * keys, a `reason` that is not one of the type's codes, ids that are not printable ASCII, a
 * `remote` that is not an IP address, counts that are not non-negative integers. Every sink
 * calls it before writing.
 *
 * @throws AuditUnsafeEventError
 *
 * @example
 * ```ts
 * assertAuditSafe({ type: 'a2a.server.auth_failed', time: auditTime(), outcome: 'denied', reason: 'invalid_credentials' });
 * ```
 */
export function assertAuditSafe(event: unknown): asserts event is AuditEvent {
  if (passesKnownShape(event)) return;
  checkEveryRule(event);
}

/**
 * The full check, rule by rule in a fixed order, so that the first rule broken is the one
 * reported: key names and string lengths at every depth, then the type, the time, the outcome,
 * the required fields and each field's own rule. Exported for the property that the one-pass
 * check never accepts what this refuses (src/audit/safety.test.ts); callers use `assertAuditSafe`.
 *
 * @throws AuditUnsafeEventError
 *
 * @example
 * ```ts
 * checkEveryRule({ type: 'a2a.task.submitted', time: auditTime(), outcome: 'ok' }); // throws: client is required
 * ```
 */
export function checkEveryRule(event: unknown): asserts event is AuditEvent {
  scan(event, '', 0);
  const record = event as Record<string, unknown>;
  const type = record.type;
  if (typeof type !== 'string' || !Object.hasOwn(AUDIT_EVENT_SPEC, type)) {
    throw new AuditUnsafeEventError('type', 'not a known audit event type');
  }
  const spec = AUDIT_EVENT_SPEC[type as AuditEventType];
  const required: readonly string[] = spec.required;
  const optional: readonly string[] = spec.optional;
  if (!timeIsGood(record.time)) {
    throw new AuditUnsafeEventError('time', 'must be an ISO timestamp like 2025-01-01T00:00:00.000Z');
  }
  if (!(spec.outcomes as readonly unknown[]).includes(record.outcome)) {
    throw new AuditUnsafeEventError('outcome', `must be ${spec.outcomes.join(' or ')} for ${type}`);
  }
  for (const key of required) {
    if (record[key] === undefined) throw new AuditUnsafeEventError(key, `is required for ${type}`);
  }
  for (const key in record) {
    const value = record[key];
    if (key === 'type' || key === 'time' || key === 'outcome' || value === undefined) continue;
    if (!required.includes(key) && !optional.includes(key)) {
      throw new AuditUnsafeEventError(key, `is not a field of ${type}`);
    }
    checkField(key, value, spec.reasons);
  }
}

/** A type's fields, for the one-pass check: each field name → whether it is required. */
interface KnownShape {
  fields: ReadonlyMap<string, boolean>;
  required: number;
  outcomes: readonly unknown[];
  reasons: readonly string[];
}

/**
 * Each type's fields, made once. A field whose name the generic pass would refuse is left out,
 * so an event holding it always takes the full check (none does: events.test.ts).
 */
const KNOWN_SHAPES: ReadonlyMap<string, KnownShape> = new Map(
  Object.entries(AUDIT_EVENT_SPEC).map(([type, spec]) => {
    const fields = new Map<string, boolean>();
    for (const key of spec.required as readonly string[]) if (!FORBIDDEN_KEY.test(key)) fields.set(key, true);
    for (const key of spec.optional as readonly string[]) if (!FORBIDDEN_KEY.test(key)) fields.set(key, false);
    const required = (spec.required as readonly string[]).length;
    return [type, { fields, required, outcomes: spec.outcomes, reasons: spec.reasons }];
  }),
);

/**
 * The check of the rows a gateway writes all day, in one pass over the event's keys: true only
 * when every rule of {@link checkEveryRule} holds (each field a known one of its type, of a flat
 * value that passes {@link fieldIsGood}; the type, time and outcome good; every required field
 * there). Anything else (a nested value, an inherited key, a broken rule) answers false, and the
 * full check then finds the rule and reports it; so this can make the check faster, never looser.
 * Exported for that property's test.
 *
 * @example
 * ```ts
 * passesKnownShape({ type: 'a2a.task.submitted', time: auditTime(), outcome: 'ok' }); // false
 * ```
 */
export function passesKnownShape(event: unknown): boolean {
  if (typeof event !== 'object' || event === null) return false;
  const record = event as Record<string, unknown>;
  const type = record.type;
  const shape = typeof type === 'string' ? KNOWN_SHAPES.get(type) : undefined;
  if (shape === undefined || !timeIsGood(record.time) || !shape.outcomes.includes(record.outcome)) return false;
  let required = 0;
  for (const key in record) {
    if (key === 'type' || key === 'time' || key === 'outcome') continue;
    // The name first, whatever the value: the full check refuses a secret-like key left undefined.
    const isRequired = shape.fields.get(key);
    if (isRequired === undefined || !Object.hasOwn(record, key)) return false;
    const value = record[key];
    if (value === undefined) continue;
    if (!fieldIsGood(key, value, shape.reasons)) return false;
    if (isRequired) required++;
  }
  return required === shape.required;
}

/** Whether `time` is a good ISO timestamp (the last good one is remembered: a row's time repeats). */
function timeIsGood(time: unknown): boolean {
  if (time === lastGoodTime) return true;
  if (typeof time !== 'string' || !TIME.test(time) || !Number.isFinite(Date.parse(time))) return false;
  lastGoodTime = time;
  return true;
}

/** The generic pass: key names, string lengths and nesting, whatever the event claims to be. */
function scan(value: unknown, path: string, depth: number): void {
  if (depth === 0 && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new AuditUnsafeEventError('', 'an audit event must be an object');
  }
  if (typeof value === 'string') {
    if (value.length > MAX_AUDIT_STRING) {
      throw new AuditUnsafeEventError(path, `string longer than ${MAX_AUDIT_STRING} characters`);
    }
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth > MAX_DEPTH) throw new AuditUnsafeEventError(path, 'nested too deeply');
  if (Array.isArray(value)) throw new AuditUnsafeEventError(path, 'arrays are not allowed');
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const inner = record[key];
    // Rows reuse a handful of key names: each is judged once. Strings and numbers at the top
    // level (the common case) need no path unless they fail.
    if (!safeKeys.has(key)) {
      if (FORBIDDEN_KEY.test(key)) {
        throw new AuditUnsafeEventError(pathOf(path, key), 'key looks like a secret or message content');
      }
      if (safeKeys.size < MAX_SAFE_KEYS) safeKeys.add(key);
    }
    if (typeof inner === 'string') {
      if (inner.length > MAX_AUDIT_STRING) {
        throw new AuditUnsafeEventError(pathOf(path, key), `string longer than ${MAX_AUDIT_STRING} characters`);
      }
    } else if (typeof inner === 'object' && inner !== null) {
      scan(inner, pathOf(path, key), depth + 1);
    }
  }
}

function pathOf(path: string, key: string): string {
  return path.length > 0 ? `${path}.${key}` : key;
}

/** Key names already found safe (bounded: a flood of new names only costs the regex again). */
const safeKeys = new Set<string>();
const MAX_SAFE_KEYS = 1024;
/** The last `time` that passed its check: rows written in the same millisecond share it. */
let lastGoodTime: unknown;

/**
 * A field's own rule, for a flat value (strings are also held to {@link MAX_AUDIT_STRING}, as the
 * generic pass holds them). False for a field with no flat rule (`counts`, an unknown name).
 */
function fieldIsGood(key: string, value: unknown, reasons: readonly string[]): boolean {
  switch (key) {
    case 'client':
    case 'agent':
    case 'taskId':
    case 'contextId':
    case 'actionId':
    case 'tool':
    case 'user':
    case 'host':
      return typeof value === 'string' && ID.test(value);
    case 'principalKind':
      return PRINCIPAL_KINDS.includes(value as string);
    case 'inputChars':
    case 'outputChars':
    case 'durationMs':
    case 'argsBytes':
      return isCount(value);
    case 'reason':
      return reasons.includes(value as string);
    case 'remote':
      return typeof value === 'string' && value.length <= MAX_AUDIT_STRING && isIP(value) !== 0;
    case 'state':
      return STATES.includes(value as string);
    case 'level':
      return value === 'L1' || value === 'L2' || value === 'L3' || value === 'L4';
    case 'argsDigest':
      return typeof value === 'string' && DIGEST.test(value);
    case 'sections':
      return typeof value === 'string' && SECTIONS.test(value);
    default:
      return false;
  }
}

const ID_PROBLEM = 'must be 1..256 printable ASCII characters without spaces';
const COUNT_PROBLEM = 'must be a non-negative integer';
/** What each flat field's rule asks, for the error that names a field which broke it. */
const FIELD_PROBLEMS: Readonly<Record<string, string>> = {
  client: ID_PROBLEM,
  agent: ID_PROBLEM,
  taskId: ID_PROBLEM,
  contextId: ID_PROBLEM,
  actionId: ID_PROBLEM,
  tool: ID_PROBLEM,
  user: ID_PROBLEM,
  host: ID_PROBLEM,
  principalKind: 'must be client, service or delegated',
  inputChars: COUNT_PROBLEM,
  outputChars: COUNT_PROBLEM,
  durationMs: COUNT_PROBLEM,
  argsBytes: COUNT_PROBLEM,
  reason: 'not a reason code of this type',
  remote: 'must be an IPv4 or IPv6 address',
  state: 'not a task state',
  level: 'must be L1, L2, L3 or L4',
  argsDigest: 'must be a SHA-256 digest in lower-case hex',
  sections: 'must be config section names, comma-separated',
};

/** A field's rule, reported: {@link fieldIsGood}, and for `counts` its keys and values one by one. */
function checkField(key: string, value: unknown, reasons: readonly string[]): void {
  if (key === 'counts') {
    if (typeof value !== 'object' || value === null) throw new AuditUnsafeEventError(key, 'must be an object');
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > MAX_COUNT_KEYS) throw new AuditUnsafeEventError(key, `more than ${MAX_COUNT_KEYS} keys`);
    for (const [name, count] of entries) {
      // The key is not echoed: it failed the only shape we trust.
      if (!COUNT_KEY.test(name)) throw new AuditUnsafeEventError(key, 'keys must be snake_case, 1..64 characters');
      if (!isCount(count)) throw new AuditUnsafeEventError(`${key}.${name}`, 'must be a non-negative integer');
    }
    return;
  }
  if (fieldIsGood(key, value, reasons)) return;
  throw new AuditUnsafeEventError(key, FIELD_PROBLEMS[key] ?? 'unknown field');
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
