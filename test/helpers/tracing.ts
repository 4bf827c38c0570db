/**
 * A tiny OpenTelemetry tracer provider implementing the API interfaces only, which records what
 * an SDK would be told: span names, options (links, `root`), the parent it would pick, and
 * whether the span ended. Register it with `trace.setGlobalTracerProvider` and disable after.
 */
import {
  context,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

export interface Recorded {
  name: string;
  options: SpanOptions;
  /** The parent an SDK would pick: none for `root: true`, else the span in the given context. */
  parent: SpanContext | undefined;
  /** The span in the context the tracer was handed (or the active one), ignoring `root`. */
  spanInContext: SpanContext | undefined;
  ended: boolean;
}

class RecordingSpan implements Span {
  readonly #context: SpanContext;
  readonly #record: Recorded;
  constructor(spanContext: SpanContext, record: Recorded) {
    this.#context = spanContext;
    this.#record = record;
  }
  spanContext(): SpanContext {
    return this.#context;
  }
  setAttribute(): this {
    return this;
  }
  setAttributes(): this {
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(): this {
    return this;
  }
  updateName(): this {
    return this;
  }
  end(): void {
    this.#record.ended = true;
  }
  isRecording(): boolean {
    return true;
  }
  recordException(): void {}
}

export class RecordingTracer implements Tracer {
  readonly spans: Recorded[] = [];
  #next = 1;

  startSpan(name: string, options: SpanOptions = {}, ctx?: Context): Span {
    const spanInContext = trace.getSpanContext(ctx ?? context.active());
    const record: Recorded = {
      name,
      options,
      parent: options.root === true ? undefined : spanInContext,
      spanInContext,
      ended: false,
    };
    this.spans.push(record);
    const spanId = (this.#next++).toString(16).padStart(16, '0');
    const traceId = record.parent?.traceId ?? 'a'.repeat(32);
    return new RecordingSpan({ traceId, spanId, traceFlags: 1 }, record);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    return fn(this.startSpan(name)) as ReturnType<F>;
  }
}

export class RecordingProvider implements TracerProvider {
  readonly tracer = new RecordingTracer();
  readonly names: string[] = [];
  getTracer(name: string): Tracer {
    this.names.push(name);
    return this.tracer;
  }
}
