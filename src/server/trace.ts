/**
 * Inbound tracing. A caller's `traceparent` is a claim by someone outside the trust boundary:
 * made a parent, it would let any caller graft our spans into their trace (and steer the
 * sampling decision of a parent-based sampler). So the inbound context becomes a span LINK,
 * and every inbound span starts a trace of its own.
 *
 * With no OpenTelemetry SDK registered (the API's no-op default) a call costs a few property
 * reads: the header is not parsed and nothing is allocated.
 *
 * @example
 * ```ts
 * const span = startInboundSpan('a2a.rpc', req.headers.traceparent, { 'a2a.agent': slug });
 * try {
 *   await handle();
 * } finally {
 *   span.end();
 * }
 * ```
 */
import {
  context,
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Attributes,
  type Span,
  type SpanContext,
  type SpanOptions,
} from '@opentelemetry/api';
import { activeTracer, ATTR, failSpan } from '../telemetry/tracer.js';
import { REFUSED, type Outcome, type Refused } from './admission/compose.js';
import { A2AError } from '../protocol/errors.js';
import type { A2ARequest } from '../protocol/model.js';

export { TRACER_NAME, tracingActive } from '../telemetry/tracer.js';

/** `00-` + 32 + `-` + 16 + `-` + 2: the whole version-00 header, and the prefix of any later one. */
const TRACEPARENT_LENGTH = 55;

/**
 * The span context a W3C `traceparent` header carries (Trace Context, level 1/2 §3.2), or
 * undefined when the header is absent or invalid. Version 00 must be exactly
 * `00-<32 hex>-<16 hex>-<2 hex>`; hex is lowercase only; an all-zero trace id or parent id is
 * invalid, and so is version `ff`. A later version is read by its version-00 prefix, as the
 * spec asks, provided the prefix ends the header or is followed by `-`; of its flags only the
 * sampled bit is kept, since later versions may give the other bits other meanings.
 *
 * @example
 * ```ts
 * parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
 * // { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true }
 * parseTraceparent('00-00000000000000000000000000000000-00f067aa0ba902b7-01'); // undefined
 * ```
 */
export function parseTraceparent(header: string | undefined): SpanContext | undefined {
  if (header === undefined || header.length < TRACEPARENT_LENGTH) return undefined;
  const version = hexByte(header, 0);
  if (version < 0 || version === 0xff) return undefined;
  if (version === 0) {
    if (header.length !== TRACEPARENT_LENGTH) return undefined;
  } else if (header.length > TRACEPARENT_LENGTH && header.charCodeAt(TRACEPARENT_LENGTH) !== DASH) {
    return undefined;
  }
  if (header.charCodeAt(2) !== DASH || header.charCodeAt(35) !== DASH || header.charCodeAt(52) !== DASH) {
    return undefined;
  }
  if (!isLowerHex(header, 3, 35) || !isLowerHex(header, 36, 52)) return undefined;
  const flags = hexByte(header, 53);
  if (flags < 0) return undefined;
  const traceId = header.slice(3, 35);
  const spanId = header.slice(36, 52);
  if (traceId === INVALID_SPAN_CONTEXT.traceId || spanId === INVALID_SPAN_CONTEXT.spanId) return undefined;
  return { traceId, spanId, traceFlags: version === 0 ? flags : flags & SAMPLED, isRemote: true };
}

/**
 * Starts the span of an inbound request: a SERVER span that is always the root of a new trace.
 * A valid `traceparent` is attached as a link (the caller's trace stays findable from ours);
 * an invalid one is dropped without a word. The span is not made active, and the caller ends
 * it. With no SDK registered this returns one shared non-recording span, whose methods do
 * nothing, without parsing the header.
 *
 * @example
 * ```ts
 * const span = startInboundSpan('a2a.ask', headerOf(req, 'traceparent'), { 'a2a.agent': 'echo' });
 * span.setAttribute('a2a.task.state', 'completed');
 * span.end();
 * ```
 */
export function startInboundSpan(name: string, traceparent: string | undefined, attributes?: Attributes): Span {
  const tracer = activeTracer();
  if (tracer === undefined) return NOOP_SPAN;
  const options: SpanOptions = { kind: SpanKind.SERVER, root: true };
  if (attributes !== undefined) options.attributes = attributes;
  const remote = parseTraceparent(traceparent);
  if (remote !== undefined) options.links = [{ context: remote }];
  // ROOT_CONTEXT as well as `root: true`: a tracer that ignored the option would still find
  // no parent in the context it is handed.
  return tracer.startSpan(name, options, ROOT_CONTEXT);
}

const DASH = 0x2d;
const SAMPLED = 0x01;

/** Shared: a non-recording span with the invalid context ignores every call made on it. */
const NOOP_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** The byte written as two lowercase hex digits at `at`, or -1. */
function hexByte(text: string, at: number): number {
  const high = hexDigit(text.charCodeAt(at));
  const low = hexDigit(text.charCodeAt(at + 1));
  return high < 0 || low < 0 ? -1 : (high << 4) | low;
}

function isLowerHex(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (hexDigit(text.charCodeAt(i)) < 0) return false;
  return true;
}

/** 0-15 for `0-9a-f`; -1 for anything else, uppercase included (the spec allows lowercase only). */
function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/**
 * Serves a request under its server span: when the span records, `serve` runs with it active
 * (admission, the turn, store writes and outbound calls become its children) and the span ends
 * when `serve` settles. Without a span, `serve` is simply called.
 *
 * @example
 * ```ts
 * const span = tracingActive() ? startInboundSpan('a2a.jsonrpc', traceparent, attributes) : undefined;
 * return serveInSpan(span, () => handle(inbound, span));
 * ```
 */
export function serveInSpan(span: Span | undefined, serve: () => Promise<void>): Promise<void> {
  if (span === undefined) return serve();
  // A sampled-out span is made active too: its children then follow its decision.
  return context.with(trace.setSpan(ROOT_CONTEXT, span), serve).finally(() => span.end());
}

/**
 * Runs one admission step (or a composition of steps) under a child span of `parent` (the
 * server span, named explicitly: no context manager needed), marked `airlock.admission.refused`
 * when the step refused. Without a tracer this is the step call itself: no span, no allocation.
 *
 * @example
 * ```ts
 * const admitted = await tracedStep(SPAN.admission, admitRequest, inbound, serverSpan);
 * ```
 */
export function tracedStep<I, O>(name: string, step: (input: I) => Outcome<O>, input: I, parent: Span): Outcome<O> {
  const tracer = activeTracer();
  if (tracer === undefined) return step(input);
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, trace.setSpan(ROOT_CONTEXT, parent));
  let outcome: Outcome<O>;
  try {
    outcome = step(input);
  } catch (error) {
    failSpan(span, 'INTERNAL');
    span.end();
    throw error;
  }
  if (!(outcome instanceof Promise)) return endStep(span, outcome);
  return outcome.then(
    (settled) => endStep(span, settled),
    (error: unknown) => {
      failSpan(span, 'INTERNAL');
      span.end();
      throw error;
    },
  );
}

function endStep<O>(span: Span, outcome: O | Refused): O | Refused {
  if (outcome === REFUSED) span.setAttribute(ATTR.refused, true);
  span.end();
  return outcome;
}

/**
 * Notes the decoded request on the server span: the canonical method, and the task id a task
 * method names. Nothing else of the request (never its message).
 *
 * @example
 * ```ts
 * if (span !== undefined) noteRequest(span, request);
 * ```
 */
export function noteRequest(span: Span, request: A2ARequest): void {
  if (!span.isRecording()) return;
  span.setAttribute(ATTR.method, request.method);
  if (request.method === 'get' || request.method === 'cancel' || request.method === 'subscribe') {
    span.setAttribute(ATTR.taskId, request.params.id);
  }
}

/**
 * Notes a JSON-RPC answer's error code on the span: the code the answer carries
 * (`RpcOutcome.errorCode`, set where the error body is written), nothing for a result.
 *
 * @example
 * ```ts
 * noteRpcAnswer(span, outcome.errorCode); // a2a.response.error_code = -32001
 * ```
 */
export function noteRpcAnswer(span: Span, errorCode: number | undefined): void {
  if (errorCode === undefined || !span.isRecording()) return;
  failSpan(span, errorCode);
}

/**
 * Notes an error answer on the span: the A2A error's JSON-RPC code, else `INTERNAL`.
 *
 * @example
 * ```ts
 * noteError(span, new A2AError('TASK_NOT_FOUND')); // a2a.response.error_code = -32001
 * ```
 */
export function noteError(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  failSpan(span, error instanceof A2AError ? error.rpcCode : 'INTERNAL');
}
