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
import type { AgentEvent } from '../backend.js';

const TYPE_PATTERN = /^[a-z-]{1,32}$/;

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
      return undefined;
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
