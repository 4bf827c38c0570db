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
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Attributes,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

/** The instrumentation scope of every Airlock span. */
export const TRACER_NAME = 'airlock';

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
 * True when spans would be recorded: an OpenTelemetry SDK (or any tracer provider) has been
 * registered. Callers can skip building span attributes when it is false.
 *
 * @example
 * ```ts
 * const attributes = tracingActive() ? { 'a2a.agent': slug, 'a2a.method': method } : undefined;
 * ```
 */
export function tracingActive(): boolean {
  return activeTracer() !== undefined;
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

/** What the API's global proxy provider offers beyond the TracerProvider interface. */
interface ProxyProvider extends TracerProvider {
  getDelegate(): TracerProvider;
  getDelegateTracer(name: string): Tracer | undefined;
}

/** The provider a proxy reports while nothing is registered (the API's no-op provider), once seen. */
let noopDelegate: TracerProvider | undefined;
/** The provider `cachedTracer` came from: a proxy's delegate, or a global that is no proxy. */
let cachedSource: TracerProvider | undefined;
let cachedTracer: Tracer | undefined;

/**
 * The Airlock tracer, or undefined while no provider is registered. The API's global is a
 * proxy whose delegate is a no-op provider until an SDK registers; the proxy answers
 * `getDelegateTracer` with undefined then, which is how that no-op provider is recognised the
 * first time. After that, the common case (no SDK) is two calls and one comparison, with
 * nothing allocated. The tracer is the delegate's own (no proxy in between), fetched again
 * when the delegate changes (`trace.disable()` and a new registration). The proxy is
 * duck-typed, not `instanceof`: another copy of the API may own the global.
 */
function activeTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  if (!isProxy(provider)) {
    if (provider !== cachedSource || cachedTracer === undefined) {
      cachedSource = provider;
      cachedTracer = provider.getTracer(TRACER_NAME);
    }
    return cachedTracer;
  }
  const delegate = provider.getDelegate();
  if (delegate === noopDelegate) return undefined;
  if (delegate === cachedSource && cachedTracer !== undefined) return cachedTracer;
  const tracer = provider.getDelegateTracer(TRACER_NAME);
  if (tracer === undefined) {
    noopDelegate = delegate;
    return undefined;
  }
  cachedSource = delegate;
  cachedTracer = tracer;
  return tracer;
}

function isProxy(provider: TracerProvider): provider is ProxyProvider {
  const candidate = provider as Partial<ProxyProvider>;
  return typeof candidate.getDelegate === 'function' && typeof candidate.getDelegateTracer === 'function';
}

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
