/**
 * A tiny OpenTelemetry tracer provider implementing the API interfaces only, which records what
 * an SDK would be told: span names, options (links, `root`), the parent it would pick, and
 * whether the span ended. Register it with `trace.setGlobalTracerProvider` and disable after.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

// ---------------------------------------------------------------------------------------------
// A loopback OTLP/HTTP receiver (JSON bodies), for the export tests

/** One span as an OTLP/JSON body carries it, ids as lowercase hex. */
export interface ReceivedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>/v1/traces` */
  url: string;
  /** Every body received, as text (for scans). */
  bodies: string[];
  /** The request headers of each export. */
  headers: Record<string, string | string[] | undefined>[];
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

/** Starts a receiver accepting `POST /v1/traces` with a JSON body; anything else gets 404. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: string[] = [];
  const headers: OtlpReceiver['headers'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      headers.push({ ...req.headers });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    bodies,
    headers,
    spans: () => bodies.flatMap(decodeOtlpJson),
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
type OtlpAttributes = { key: string; value: OtlpValue }[] | undefined;

/** Decodes one OTLP/JSON ExportTraceServiceRequest into flat spans. */
export function decodeOtlpJson(body: string): ReceivedSpan[] {
  const request = JSON.parse(body) as {
    resourceSpans?: {
      resource?: { attributes?: OtlpAttributes };
      scopeSpans?: {
        spans?: {
          name: string;
          kind: number;
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          attributes?: OtlpAttributes;
          links?: { traceId: string; spanId: string }[];
        }[];
      }[];
    }[];
  };
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        out.push({
          name: span.name,
          kind: span.kind,
          traceId: hexId(span.traceId),
          spanId: hexId(span.spanId),
          parentSpanId: hexId(span.parentSpanId ?? ''),
          attributes: attributesOf(span.attributes),
          links: (span.links ?? []).map((link) => ({ traceId: hexId(link.traceId), spanId: hexId(link.spanId) })),
          resource,
        });
      }
    }
  }
  return out;
}

function attributesOf(list: OtlpAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

/** OTLP/JSON ids are hex; a base64 id (protobuf-JSON style) is converted. */
function hexId(id: string): string {
  if (id === '' || /^[0-9a-f]+$/.test(id)) return id;
  return Buffer.from(id, 'base64').toString('hex');
}
