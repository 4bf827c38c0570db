import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import {
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Context,
  type ContextManager,
  type Link,
} from '@opentelemetry/api';
import fc from 'fast-check';
import { RecordingProvider } from '../../test/helpers/tracing.js';
import { parseTraceparent, startInboundSpan, TRACER_NAME, tracingActive } from './trace.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const VALID = `00-${TRACE_ID}-${SPAN_ID}-01`;

describe('parseTraceparent', () => {
  it('reads a version-00 header', () => {
    assert.deepEqual(parseTraceparent(VALID), { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, isRemote: true });
    assert.equal(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)?.traceFlags, 0);
    // Level 2's random flag (0x02) is kept as sent.
    assert.equal(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-03`)?.traceFlags, 3);
  });

  const invalid: [string, string | undefined][] = [
    ['absent', undefined],
    ['empty', ''],
    ['one character short', VALID.slice(0, -1)],
    ['version 00 with more fields', `${VALID}-00`],
    ['version 00 with a trailing character', `${VALID}x`],
    ['two headers joined', `${VALID}, ${VALID}`],
    ['surrounding white space', ` ${VALID}`],
    ['an uppercase trace id', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['an uppercase span id', `00-${TRACE_ID}-00F067AA0BA902B7-01`],
    ['uppercase flags', `00-${TRACE_ID}-${SPAN_ID}-0A`],
    ['an uppercase version', `0A-${TRACE_ID}-${SPAN_ID}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['version ff with more fields', `ff-${TRACE_ID}-${SPAN_ID}-01-00`],
    ['a non-hex version', `0g-${TRACE_ID}-${SPAN_ID}-01`],
    ['a non-hex trace id', `00-${TRACE_ID.slice(0, -1)}g-${SPAN_ID}-01`],
    ['a non-hex span id', `00-${TRACE_ID}-${SPAN_ID.slice(0, -1)}z-01`],
    ['non-hex flags', `00-${TRACE_ID}-${SPAN_ID}-0x`],
    ['wrong separators', `00_${TRACE_ID}_${SPAN_ID}_01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01x`],
    ['a future version glued to more text', `01-${TRACE_ID}-${SPAN_ID}-01extra`],
    ['a future version with an all-zero trace id', `01-${'0'.repeat(32)}-${SPAN_ID}-01-x`],
    ['a future version that is too short', `01-${TRACE_ID}-${SPAN_ID}-1`],
  ];
  for (const [name, header] of invalid) {
    it(`refuses ${name}`, () => assert.equal(parseTraceparent(header), undefined));
  }

  it('reads a future version by its version-00 prefix, keeping only the sampled flag', () => {
    assert.deepEqual(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-01`), {
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: 1,
      isRemote: true,
    });
    assert.equal(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-09-what-the-future-will-bring`)?.traceFlags, 1);
    assert.equal(parseTraceparent(`fe-${TRACE_ID}-${SPAN_ID}-02-`)?.traceFlags, 0);
  });

  it('property: every well-formed version-00 header reads back exactly', () => {
    const hex = (length: number): fc.Arbitrary<string> =>
      fc
        .string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length })
        .filter((text) => /[^0]/.test(text));
    fc.assert(
      fc.property(hex(32), hex(16), fc.integer({ min: 0, max: 255 }), (traceId, spanId, flags) => {
        const parsed = parseTraceparent(`00-${traceId}-${spanId}-${flags.toString(16).padStart(2, '0')}`);
        assert.deepEqual(parsed, { traceId, spanId, traceFlags: flags, isRemote: true });
        assert.ok(isSpanContextValid(parsed));
      }),
    );
  });

  it('property: whatever it is given, it never throws and returns only valid contexts taken from the header', () => {
    const near = fc
      .tuple(fc.nat({ max: VALID.length - 1 }), fc.string({ maxLength: 3 }))
      .map(([at, text]) => VALID.slice(0, at) + text + VALID.slice(at + text.length));
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 80 }), near), (header) => {
        const parsed = parseTraceparent(header);
        if (parsed === undefined) return;
        assert.ok(isSpanContextValid(parsed));
        assert.equal(header.slice(3, 35), parsed.traceId);
        assert.equal(header.slice(36, 52), parsed.spanId);
        assert.match(header.slice(0, 55), /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/);
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// A tiny tracer provider and context manager, implementing the API interfaces, that record
// what an SDK would be told.

/** Synchronous context propagation: enough for a call that never awaits. */
class StackContextManager implements ContextManager {
  #stack: Context[] = [];
  active(): Context {
    return this.#stack[this.#stack.length - 1] ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.#stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#stack.pop();
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#stack = [];
    return this;
  }
}

function register(): RecordingProvider {
  const provider = new RecordingProvider();
  assert.ok(trace.setGlobalTracerProvider(provider));
  return provider;
}

describe('startInboundSpan', () => {
  afterEach(() => {
    trace.disable();
    context.disable();
  });

  it('with no SDK registered: one shared non-recording span, no tracer asked', () => {
    assert.equal(tracingActive(), false);
    const first = startInboundSpan('a2a.rpc', VALID, { 'a2a.agent': 'echo' });
    const second = startInboundSpan('a2a.rpc', 'garbage');
    assert.equal(first, second);
    assert.equal(first.isRecording(), false);
    assert.equal(isSpanContextValid(first.spanContext()), false);
    first.setAttribute('k', 'v').end();
  });

  it('links the inbound context and starts a new trace as a SERVER span', () => {
    const provider = register();
    assert.equal(tracingActive(), true);
    const span = startInboundSpan('a2a.ask', VALID, { 'a2a.agent': 'echo' });
    const [record] = provider.tracer.spans;
    assert.ok(record !== undefined);
    assert.deepEqual(provider.names, [TRACER_NAME]);
    assert.equal(record.name, 'a2a.ask');
    assert.equal(record.options.kind, SpanKind.SERVER);
    assert.equal(record.options.root, true);
    assert.deepEqual(record.options.attributes, { 'a2a.agent': 'echo' });
    const links: Link[] | undefined = record.options.links;
    assert.deepEqual(links, [{ context: { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, isRemote: true } }]);
    assert.equal(record.parent, undefined);
    assert.notEqual(span.spanContext().traceId, TRACE_ID, 'the caller’s trace is not ours');
    assert.equal(record.ended, false, 'the caller ends the span');
    span.end();
    assert.equal(record.ended, true);
  });

  it('has no parent even when the active context holds a span', () => {
    const provider = register();
    assert.ok(context.setGlobalContextManager(new StackContextManager()));
    const outer = provider.tracer.startSpan('outer');
    const active = trace.setSpan(context.active(), outer);
    context.with(active, () => {
      // The harness itself: an ordinary span here does get the active span as its parent.
      provider.tracer.startSpan('ordinary');
      startInboundSpan('a2a.rpc', VALID);
    });
    const [, ordinary, inbound] = provider.tracer.spans;
    assert.deepEqual(ordinary?.parent, outer.spanContext(), 'the harness sees the active span');
    assert.equal(inbound?.options.root, true);
    assert.equal(inbound?.parent, undefined);
    // Even a tracer that ignored `root` would find no span in the context it was handed.
    assert.equal(inbound?.spanInContext, undefined);
    assert.equal(inbound?.options.links?.length, 1);
  });

  it('drops an invalid or missing traceparent: no link at all', () => {
    const provider = register();
    for (const header of [undefined, '', `00-${'0'.repeat(32)}-${SPAN_ID}-01`, VALID.toUpperCase(), `${VALID}-1`]) {
      startInboundSpan('a2a.rpc', header);
    }
    assert.equal(provider.tracer.spans.length, 5);
    for (const record of provider.tracer.spans) {
      assert.equal(record.options.links, undefined);
      assert.equal(record.options.root, true);
      assert.equal(record.parent, undefined);
    }
  });

  it('follows the registration: off after disable, and the new provider after a new registration', () => {
    const first = register();
    startInboundSpan('one', VALID);
    trace.disable();
    assert.equal(tracingActive(), false);
    assert.equal(startInboundSpan('off', VALID).isRecording(), false);
    const second = register();
    startInboundSpan('two', undefined);
    assert.deepEqual(
      first.tracer.spans.map((span) => span.name),
      ['one'],
    );
    assert.deepEqual(
      second.tracer.spans.map((span) => span.name),
      ['two'],
    );
  });

  it('asks the provider for the tracer once, not per span', () => {
    const provider = register();
    for (let i = 0; i < 5; i++) startInboundSpan('a2a.rpc', VALID);
    assert.deepEqual(provider.names, [TRACER_NAME]);
    assert.equal(provider.tracer.spans.length, 5);
  });
});
