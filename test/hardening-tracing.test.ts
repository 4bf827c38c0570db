/**
 * Inbound tracing over HTTP: a caller's traceparent becomes a span LINK, never a parent. A tiny
 * tracer provider (test/helpers/tracing.ts, the API interfaces only) records what an SDK
 * would be told; it is registered for this file and disabled after.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SpanKind, trace } from '@opentelemetry/api';
import { RecordingProvider } from './helpers/tracing.js';
import { eventually, rpc, startGateway, TOKEN_A, v03Message, withServer, type TestGateway } from './helpers/gateway.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;

describe('inbound traceparent', () => {
  let gw: TestGateway;
  let provider: RecordingProvider;
  before(async () => {
    provider = new RecordingProvider();
    assert.ok(trace.setGlobalTracerProvider(provider));
    gw = await startGateway(withServer('{ host: 127.0.0.1, port: 0, defaultAgent: echo, rest: true }'));
  });
  after(async () => {
    await gw.close();
    trace.disable();
  });

  it('a JSON-RPC call with a traceparent gets a SERVER span linked to that context, with no parent', async () => {
    provider.tracer.spans.length = 0;
    const call = await rpc(
      `${gw.url}/a2a/echo`,
      'message/send',
      { message: v03Message('traced') },
      { headers: { traceparent: TRACEPARENT } },
    );
    assert.equal(call.status, 200);
    await eventually(() => provider.tracer.spans.every((span) => span.ended), 1000, 'the span to end');
    const spans = provider.tracer.spans.filter((span) => span.name === 'a2a.jsonrpc');
    assert.equal(spans.length, 1);
    const [span] = spans;
    assert.equal(span?.options.kind, SpanKind.SERVER);
    assert.deepEqual(span?.options.links, [
      { context: { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, isRemote: true } },
    ]);
    assert.equal(span?.options.root, true);
    assert.equal(span?.parent, undefined, 'the caller’s span is not our parent');
    assert.equal(span?.spanInContext, undefined, 'and is not even in the context handed to the tracer');
    assert.equal(span?.options.attributes?.['a2a.agent'], 'echo');
  });

  it('the REST ask gets the same: a link, no parent', async () => {
    provider.tracer.spans.length = 0;
    const response = await fetch(`${gw.url}/a2a/echo/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}`, traceparent: TRACEPARENT },
      body: JSON.stringify({ message: 'traced' }),
    });
    assert.equal(response.status, 200);
    await response.text();
    // Admission, turn and store spans are its children: the server span is the one named a2a.ask.
    const asks = () => provider.tracer.spans.filter((span) => span.name === 'a2a.ask');
    await eventually(() => asks().length === 1 && asks()[0]!.ended, 1000, 'the span');
    const [span] = asks();
    assert.equal(span?.name, 'a2a.ask');
    assert.equal(span?.options.links?.[0]?.context.traceId, TRACE_ID);
    assert.equal(span?.parent, undefined);
  });

  it('an invalid traceparent is dropped: a span with no link', async () => {
    provider.tracer.spans.length = 0;
    await rpc(
      `${gw.url}/a2a/echo`,
      'message/send',
      { message: v03Message('traced') },
      { headers: { traceparent: TRACEPARENT.toUpperCase() } },
    );
    const servers = () => provider.tracer.spans.filter((span) => span.name === 'a2a.jsonrpc');
    await eventually(() => servers().length === 1, 1000, 'the span');
    assert.equal(servers()[0]?.options.links, undefined);
    assert.equal(servers()[0]?.parent, undefined);
  });
});
