/**
 * Which side of the wire a decoder runs for, and the guard that keeps its failures clean.
 *
 * Every validator takes a `Ctx`. Requests come from untrusted callers and fail with -32602
 * `INVALID_PARAMS`; results come from remote agents and fail with -32006
 * `INVALID_AGENT_RESPONSE`. Either way the error names the field path
 * (`message.parts[1].text`) and never echoes the offending value.
 *
 * @example
 * ```ts
 * return guard(REQUEST, () => decodeParams(params)); // only A2AError escapes
 * ```
 */
import { A2AError, invalidParams } from '../errors.js';

/**
 * Which side of the wire we validate for, and how a failure is reported.
 *
 * @example
 * ```ts
 * throw ctx.fail('message.parts', 'must not be empty'); // -32602 inbound, -32006 outbound
 * ```
 */
export interface Ctx {
  /** True for a request from an untrusted caller; false for a remote agent's result. */
  readonly inbound: boolean;
  fail(field: string, problem: string): A2AError;
}

/**
 * Server side: a caller's request. Failures are -32602 with the field path.
 *
 * @example
 * ```ts
 * checkString(undefined, 'message.messageId', REQUEST, 256); // throws INVALID_PARAMS
 * ```
 */
export const REQUEST: Ctx = { inbound: true, fail: invalidParams };

/**
 * Client side: a remote agent's result. Failures are -32006 with the field path.
 *
 * @example
 * ```ts
 * checkString(42, 'result.id', RESPONSE, 256); // throws INVALID_AGENT_RESPONSE
 * ```
 */
export const RESPONSE: Ctx = {
  inbound: false,
  fail: (field, problem) =>
    new A2AError('INVALID_AGENT_RESPONSE', `Invalid agent response: ${field} ${problem}`, { field }),
};

/**
 * Runs a decoder and guarantees that only `A2AError` escapes. The validators throw nothing
 * else by design; this turns a bug (say a TypeError on exotic input) into a clean protocol
 * error instead of a 500 with a stack trace.
 *
 * @example
 * ```ts
 * return guard(REQUEST, () => decodeParams(params));
 * ```
 */
export function guard<T>(ctx: Ctx, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof A2AError) throw error;
    const code = ctx.inbound ? 'INVALID_PARAMS' : 'INVALID_AGENT_RESPONSE';
    throw new A2AError(code, undefined, { cause: error });
  }
}
