/**
 * Spans held by an object that outlives one call: a live task holds its turn's span from the
 * moment the backend is handed the turn to its outcome, and the store writes of that turn are
 * its children. Held in a WeakMap, so the task's own shape is untouched and a span whose task
 * is dropped is collected with it. Every function answers at once, touching no map, while no
 * tracer is registered.
 *
 * @example
 * ```ts
 * const span = holdSpan(live, SPAN.turn);
 * const write = startHeldChild(live, SPAN.store('put'));
 * write?.end();
 * endHeldSpan(live, { [ATTR.state]: 'completed' });
 * ```
 */
import { context, SpanKind, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { activeTracer } from './tracer.js';

/** Kept after the span ends: the writes a turn queued land after its outcome, still its children. */
const HELD = new WeakMap<object, { span: Span; open: boolean }>();

/**
 * Starts a span held by `owner` under the active context (ending the one it held before), or
 * returns undefined while no tracer is registered.
 *
 * @example
 * ```ts
 * const span = holdSpan(live, SPAN.turn);
 * span?.setAttribute(ATTR.taskId, live.task.id);
 * ```
 */
export function holdSpan(owner: object, name: string): Span | undefined {
  const tracer = activeTracer();
  if (tracer === undefined) return undefined;
  const previous = HELD.get(owner);
  if (previous?.open === true) previous.span.end();
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, context.active());
  HELD.set(owner, { span, open: true });
  return span;
}

/**
 * Starts a child of the span `owner` holds (else of the active context), or undefined while no
 * tracer is registered.
 *
 * @example
 * ```ts
 * const span = startHeldChild(live, SPAN.store('put'));
 * ```
 */
export function startHeldChild(owner: object, name: string): Span | undefined {
  const tracer = activeTracer();
  if (tracer === undefined) return undefined;
  const held = HELD.get(owner);
  const parent = held === undefined ? context.active() : trace.setSpan(context.active(), held.span);
  return tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parent);
}

/**
 * Ends the span `owner` holds, with these attributes set first (built only when it records).
 *
 * @example
 * ```ts
 * endHeldSpan(live, (ended) => ({ [ATTR.state]: ended.task.status.state }));
 * ```
 */
export function endHeldSpan<O extends object>(owner: O, attributes?: (owner: O) => Attributes): void {
  if (activeTracer() === undefined) return;
  const held = HELD.get(owner);
  if (held?.open !== true) return;
  held.open = false;
  const span = held.span;
  if (attributes !== undefined && span.isRecording()) span.setAttributes(attributes(owner));
  span.end();
}

/** The iterator shapes a backend's turn is pulled through. */
type Pulled<T> = Iterator<T> | AsyncIterator<T>;

/**
 * The same iterator, each of its calls made with `span` active: what the backend does while
 * it is pulled (an outbound call of an `a2a` backend) becomes a child of the span.
 *
 * @example
 * ```ts
 * source.iterator = iteratorInSpan(source.iterator, span);
 * ```
 */
export function iteratorInSpan<I extends Pulled<unknown>>(iterator: I, span: Span): I {
  const active: Context = trace.setSpan(context.active(), span);
  const target = iterator as Iterator<unknown>;
  const wrapped: Iterator<unknown> = {
    next: (...args) => context.with(active, () => target.next(...args)),
  };
  if (target.return !== undefined) wrapped.return = (value) => context.with(active, () => target.return!(value));
  if (target.throw !== undefined) wrapped.throw = (error) => context.with(active, () => target.throw!(error));
  return wrapped as I;
}
