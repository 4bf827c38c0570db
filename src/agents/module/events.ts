/**
 * Checks one event from code Airlock did not write (a module backend) against the AgentEvent
 * union, field by field, so that a typo in a module fails its task with a reason instead of
 * being ignored or stored half-formed.
 *
 * @example
 * ```ts
 * checkAgentEvent({ type: 'text', text: 'hi' });  // undefined: fine
 * checkAgentEvent({ type: 'txt', text: 'hi' });   // 'unknown event type "txt"'
 * ```
 */
import { MAX_CONTINUATION_BYTES, type AgentEvent } from '../backend.js';

const TYPE_PATTERN = /^[a-z-]{1,32}$/;

/** Nesting a continuation may have (JSON objects and arrays). */
const MAX_CONTINUATION_DEPTH = 64;

/** Undefined when `value` is a well-formed AgentEvent, else a short description of the problem. */
export function checkAgentEvent(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not an object';
  const event = value as Record<string, unknown>;
  switch (event.type) {
    case 'working':
      return optionalString(event, 'text');
    case 'text':
      return (
        requiredString(event, 'text') ??
        (event.last === undefined || typeof event.last === 'boolean' ? undefined : '"last" is not a boolean')
      );
    case 'completed':
      return optionalString(event, 'text');
    case 'input-required':
      return requiredString(event, 'question');
    case 'rejected':
    case 'failed':
      return requiredString(event, 'reason');
    case 'message':
      return checkParts(event.parts, 'parts');
    case 'propose-action': {
      const action = event.action;
      if (action === null || typeof action !== 'object' || Array.isArray(action)) return '"action" is not an object';
      const fields = action as Record<string, unknown>;
      if (typeof fields.tool !== 'string') return '"action.tool" is not a string';
      if (typeof fields.level !== 'string' && typeof fields.level !== 'number') {
        return '"action.level" is not a level (L1–L4)';
      }
      return event.continuation === undefined ? undefined : checkContinuation(event.continuation);
    }
    case 'artifact': {
      const artifact = event.artifact;
      if (artifact === null || typeof artifact !== 'object' || Array.isArray(artifact)) {
        return '"artifact" is not an object';
      }
      return checkParts((artifact as Record<string, unknown>).parts, 'artifact.parts');
    }
    default:
      return typeof event.type === 'string' && TYPE_PATTERN.test(event.type)
        ? `unknown event type "${event.type}"`
        : 'no event type';
  }
}

/**
 * A `propose-action` continuation must be plain JSON (null, booleans, finite numbers, strings,
 * arrays, plain objects; no cycles, no class instances, no `undefined` in arrays) and at most
 * {@link MAX_CONTINUATION_BYTES} as JSON, because the gateway stores it and hands it back as JSON:
 * anything else would come back changed, or not at all.
 */
function checkContinuation(value: unknown): string | undefined {
  const budget = { chars: 0 };
  const problem = checkJson(value, 0, budget, new Set());
  if (problem !== undefined) return `"continuation" ${problem}`;
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > MAX_CONTINUATION_BYTES) {
    return `"continuation" is over ${MAX_CONTINUATION_BYTES / 1024} KiB as JSON`;
  }
  return undefined;
}

function checkJson(value: unknown, depth: number, budget: { chars: number }, path: Set<object>): string | undefined {
  // Characters counted on the way give up early on a huge value (a character is at least a byte).
  if (budget.chars > MAX_CONTINUATION_BYTES) return `is over ${MAX_CONTINUATION_BYTES / 1024} KiB as JSON`;
  switch (typeof value) {
    case 'string':
      budget.chars += value.length + 2;
      return undefined;
    case 'boolean':
      budget.chars += 5;
      return undefined;
    case 'number':
      budget.chars += 8;
      return Number.isFinite(value) ? undefined : 'holds a number JSON cannot carry';
    case 'object':
      break;
    default:
      return 'is not plain JSON';
  }
  if (value === null) {
    budget.chars += 4;
    return undefined;
  }
  if (depth >= MAX_CONTINUATION_DEPTH) return 'is nested too deep';
  if (path.has(value)) return 'is not plain JSON (a cycle)';
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null) return 'is not plain JSON';
  path.add(value);
  try {
    if (Array.isArray(value)) {
      for (const item of value as unknown[]) {
        budget.chars += 1;
        const problem = checkJson(item, depth + 1, budget, path);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    for (const [key, item] of Object.entries(value)) {
      budget.chars += key.length + 4;
      if (item === undefined) continue; // dropped by JSON, as an absent key
      const problem = checkJson(item, depth + 1, budget, path);
      if (problem !== undefined) return problem;
    }
    return undefined;
  } finally {
    path.delete(value);
  }
}

function requiredString(event: Record<string, unknown>, key: string): string | undefined {
  return typeof event[key] === 'string' ? undefined : `"${key}" is not a string`;
}

function optionalString(event: Record<string, unknown>, key: string): string | undefined {
  return event[key] === undefined ? undefined : requiredString(event, key);
}

function checkParts(parts: unknown, name: string): string | undefined {
  if (!Array.isArray(parts) || parts.length === 0) return `"${name}" is not a non-empty array`;
  for (const part of parts as unknown[]) {
    if (part === null || typeof part !== 'object') return `"${name}" holds a part that is not an object`;
    const record = part as Record<string, unknown>;
    if (record.kind === 'text' && typeof record.text === 'string') continue;
    if (record.kind === 'data' && record.data !== undefined) continue;
    if (record.kind === 'raw' && typeof record.raw === 'string') continue;
    if (record.kind === 'url' && typeof record.url === 'string') continue;
    return `"${name}" holds a part that is not a text, data, raw or url part`;
  }
  return undefined;
}

/** Narrows after a successful check (for callers that hold an `unknown`). */
export function isAgentEvent(value: unknown): value is AgentEvent {
  return checkAgentEvent(value) === undefined;
}
