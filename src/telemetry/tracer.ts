/**
 * Airlock's tracer, for every layer: the lookup of the registered tracer (none while no SDK is
 * registered, at the cost of a few property reads), the span names and attribute keys, and the
 * helpers that start child spans and write an outbound `traceparent`. API only: the SDK is
 * loaded by `setup.ts`, and only when export is configured.
 *
 * Attributes carry ids, states, codes and names; never message text, tokens, header values or
 * URLs (a URL may hold a credential in its query): see docs/OPERATIONS.md, "Tracing".
 *
 * @example
 * ```ts
 * const span = startChildSpan(SPAN.store('put'));
 * try {
 *   await store.put(owner, task);
 * } finally {
 *   span?.end();
 * }
 * ```
 */
import {
  context,
  INVALID_SPAN_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

/**
 * The instrumentation scope of every Airlock span.
 *
 * @example
 * ```ts
 * trace.getTracer(TRACER_NAME);
 * ```
 */
export const TRACER_NAME = 'airlock';

/**
 * The attribute keys Airlock sets. Values are ids, states, codes and names only.
 *
 * @example
 * ```ts
 * span.setAttribute(ATTR.taskId, task.id);
 * ```
 */
export const ATTR = {
  /** The canonical A2A operation: send, stream, get, list, cancel, subscribe, push-config, extended-card. */
  method: 'a2a.method',
  taskId: 'a2a.task.id',
  contextId: 'a2a.context.id',
  state: 'a2a.task.state',
  /** The JSON-RPC error code (number) or the outbound error type (string). */
  errorCode: 'a2a.response.error_code',
  /** The published agent's slug. */
  agent: 'a2a.agent',
  /** The backend kind behind the agent (echo, openai, a2a, …). */
  backend: 'airlock.backend',
  /** The outbound registry entry (its name) a call went to. */
  registryEntry: 'airlock.registry.entry',
  /** Where an admission step refused the request (the step's span). */
  refused: 'airlock.admission.refused',
} as const;

/**
 * Span names.
 *
 * @example
 * ```ts
 * SPAN.store('put'); // 'airlock.store.put'
 * ```
 */
export const SPAN = {
  admission: 'airlock.admission',
  admissionTurn: 'airlock.admission.turn',
  turn: 'airlock.turn',
  outbound: 'airlock.outbound',
  store: (op: string): string => `airlock.store.${op}`,
} as const;

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
 * Starts a span under `parent` (by default the active context, which the routes set to their
 * server span when export is on), or returns undefined, allocating nothing, while no tracer is
 * registered. The span is not made active: see {@link inSpan}.
 *
 * @example
 * ```ts
 * const span = startChildSpan(SPAN.turn);
 * span?.setAttribute(ATTR.taskId, live.task.id);
 * ```
 */
export function startChildSpan(name: string, kind: SpanKind = SpanKind.INTERNAL, parent?: Context): Span | undefined {
  const tracer = activeTracer();
  if (tracer === undefined) return undefined;
  return tracer.startSpan(name, { kind }, parent ?? context.active());
}

/**
 * The active context with `span` in it: the parent context of what runs under the span.
 *
 * @example
 * ```ts
 * const parent = contextOf(span);
 * startChildSpan(SPAN.store('put'), SpanKind.INTERNAL, parent);
 * ```
 */
export function contextOf(span: Span, parent: Context = context.active()): Context {
  return trace.setSpan(parent, span);
}

/**
 * Runs `fn` with `span` as the active span (its children started under it, across awaits, when
 * export is on).
 *
 * @example
 * ```ts
 * const result = await inSpan(span, () => handle(request));
 * ```
 */
export function inSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/**
 * Marks the span failed with a code (never a message: messages may quote content).
 *
 * @example
 * ```ts
 * failSpan(span, 'address_blocked');
 * ```
 */
export function failSpan(span: Span, code: string | number): void {
  span.setAttribute(ATTR.errorCode, code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: String(code) });
}

/**
 * The W3C `traceparent` naming `span` as the parent (version 00), or undefined for a span with
 * no valid context (the no-op span).
 *
 * @example
 * ```ts
 * traceparentOf(span); // '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
 * ```
 */
export function traceparentOf(span: Span): string | undefined {
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (traceId === INVALID_SPAN_CONTEXT.traceId || spanId === INVALID_SPAN_CONTEXT.spanId) return undefined;
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

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
 *
 * @example
 * ```ts
 * const tracer = activeTracer();
 * if (tracer !== undefined) tracer.startSpan('a2a.rpc', { root: true });
 * ```
 */
export function activeTracer(): Tracer | undefined {
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
