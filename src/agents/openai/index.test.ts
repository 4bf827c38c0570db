/**
 * The openai backend driven directly, against real loopback endpoints: what it sends, how it
 * streams, and every way a turn can fail (status, error JSON, timeouts, redirect, byte cap,
 * refused connection), plus cancellation reaching the upstream request.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { UNTRUSTED_START_MARKER } from '../../content/index.js';
import { collect, fakeTurn } from '../../../test/helpers/agent-turn.js';
import { BackendConfigError, type AgentEvent, type AgentTurn, type BackendLog, type SessionEntry } from '../backend.js';
import { buildInboundPrompt } from '../inbound/prompt.js';
import {
  answerJson,
  chunkEvent,
  delay,
  finishEvents,
  startFakeModel,
  startStream,
  streamReply,
  testConfig,
  tokenEvent,
  type FakeModel,
} from './fake-endpoint.test.js';
import { createOpenAiBackend } from './index.js';

const API_KEY = 'sk-test-key-0123456789abcdef';

function turnWith(
  text: string,
  extra: { history?: readonly SessionEntry[] | (() => Promise<readonly SessionEntry[]>); signal?: AbortSignal } = {},
): AgentTurn {
  const base = fakeTurn({ text, ...(extra.signal !== undefined && { signal: extra.signal }) });
  const prompt = buildInboundPrompt(text);
  const history = extra.history;
  return {
    ...base,
    prompt: { system: prompt.system, user: prompt.user },
    ...(history !== undefined && {
      history: typeof history === 'function' ? history : async () => history,
    }),
  };
}

function texts(events: readonly AgentEvent[]): string[] {
  return events.filter((event) => event.type === 'text').map((event) => (event as { text: string }).text);
}

function lastEvent(events: readonly AgentEvent[]): AgentEvent | undefined {
  return events[events.length - 1];
}

function failureOf(events: readonly AgentEvent[]): string {
  const last = lastEvent(events);
  assert.equal(last?.type, 'failed', `expected a failed outcome, got ${JSON.stringify(events)}`);
  return (last as { reason: string }).reason;
}

describe('openai backend: what it sends', () => {
  let model: FakeModel;
  before(async () => {
    model = await startFakeModel((_request, res) => streamReply(res, ['ok']));
  });
  after(() => model.close());

  it('POSTs model, stream and the messages in order: system prompt + note, framed history, framed message', async () => {
    const backend = createOpenAiBackend(
      testConfig(`${model.baseUrl}/`, { systemPrompt: 'You are terse.', temperature: 0.2, maxTokens: 64 }),
    );
    const history: SessionEntry[] = [
      { role: 'user', text: 'Trains to Lyon?' },
      { role: 'agent', text: 'Three a day.' },
    ];
    const turn = turnWith('And to Paris?', { history });
    const events = await collect(backend, turn);
    await backend.close?.();
    assert.equal(lastEvent(events)?.type, 'completed');
    const request = model.requests.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/v1/chat/completions');
    assert.match(String(request.headers['content-type']), /^application\/json/);
    assert.equal(request.headers['accept-encoding'], 'identity');
    const body = request.body;
    assert.equal(body.model, 'test-model');
    assert.equal(body.stream, true);
    assert.equal(body.temperature, 0.2);
    assert.equal(body.max_tokens, 64);
    assert.deepEqual(Object.keys(body).sort(), ['max_tokens', 'messages', 'model', 'stream', 'temperature']);
    assert.deepEqual(
      body.messages.map((message: { role: string }) => message.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.equal(body.messages[0].content, `You are terse.\n\n${turn.prompt!.system}`);
    assert.equal(body.messages[1].content, buildInboundPrompt('Trains to Lyon?').user);
    assert.equal(body.messages[2].content, 'Three a day.');
    assert.equal(body.messages[3].content, turn.prompt!.user);
    assert.ok(body.messages[3].content.includes(UNTRUSTED_START_MARKER));
  });

  it('asks the history for the configured bounds, and not at all when maxTurns is 0', async () => {
    const asked: unknown[] = [];
    const history = async (limits?: unknown): Promise<SessionEntry[]> => {
      asked.push(limits);
      return [];
    };
    const turn: AgentTurn = { ...turnWith('x'), history };
    const bounded = createOpenAiBackend(testConfig(model.baseUrl, { history: { maxTurns: 3, maxChars: 500 } }));
    await collect(bounded, turn);
    assert.deepEqual(asked, [{ maxTurns: 3, maxChars: 500 }]);
    const none = createOpenAiBackend(testConfig(model.baseUrl, { history: { maxTurns: 0, maxChars: 500 } }));
    await collect(none, turn);
    assert.equal(asked.length, 1);
    await Promise.all([bounded.close?.(), none.close?.()]);
  });

  it('goes on without history when the store cannot be read, and logs it without content', async () => {
    const lines: Array<[string, string, Record<string, unknown>]> = [];
    const log: BackendLog = (level, event, fields) => lines.push([level, event, { ...fields }]);
    const backend = createOpenAiBackend(testConfig(model.baseUrl), { agent: 'llm', log });
    const turn = turnWith('secret question', {
      history: () => Promise.reject(new Error('store down: secret question')),
    });
    const events = await collect(backend, turn);
    await backend.close?.();
    assert.equal(lastEvent(events)?.type, 'completed');
    assert.equal(model.requests.at(-1)!.body.messages.length, 2);
    assert.ok(lines.some(([level, event]) => level === 'warn' && event === 'openai_history_unavailable'));
    assert.ok(!JSON.stringify(lines).includes('secret question'));
  });

  it('frames the message itself when the turn has no prompt', async () => {
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    await collect(backend, fakeTurn({ text: 'raw caller text' }));
    await backend.close?.();
    const messages = model.requests.at(-1)!.body.messages;
    assert.equal(messages[1].content, buildInboundPrompt('raw caller text').user);
  });

  it('sends Authorization only when an API key is configured', async () => {
    const keyed = createOpenAiBackend(testConfig(model.baseUrl, { apiKey: API_KEY }));
    await collect(keyed, turnWith('a'));
    assert.equal(model.requests.at(-1)!.headers.authorization, `Bearer ${API_KEY}`);
    const open = createOpenAiBackend(testConfig(model.baseUrl));
    await collect(open, turnWith('b'));
    assert.equal(model.requests.at(-1)!.headers.authorization, undefined);
    await Promise.all([keyed.close?.(), open.close?.()]);
  });

  it('logs each turn with its numbers and never its content or key', async () => {
    const lines: Array<[string, string, Record<string, unknown>]> = [];
    const backend = createOpenAiBackend(testConfig(model.baseUrl, { apiKey: API_KEY }), {
      agent: 'llm',
      log: (level, event, fields) => lines.push([level, event, { ...fields }]),
    });
    await collect(backend, turnWith('private words'));
    await backend.close?.();
    const line = lines.find(([, event]) => event === 'openai_turn_completed');
    assert.ok(line);
    assert.equal(line[2].agent, 'llm');
    assert.equal(line[2].status, 200);
    assert.equal(line[2].chunks, 1);
    assert.equal(line[2].finishReason, 'stop');
    assert.ok(!JSON.stringify(lines).includes('private words'));
    assert.ok(!JSON.stringify(lines).includes(API_KEY));
  });

  it('refuses a baseUrl with credentials at creation', () => {
    assert.throws(
      () => createOpenAiBackend(testConfig('http://user:pass@127.0.0.1:1/v1')),
      (error: unknown) => error instanceof BackendConfigError && !error.message.includes('pass'),
    );
  });
});

describe('openai backend: streaming', () => {
  let model: FakeModel;
  before(async () => {
    model = await startFakeModel();
  });
  after(() => model.close());

  it('yields each token as it arrives, then an empty last chunk and completed', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    model.handle(async (_request, res) => {
      startStream(res);
      res.write(': keep-alive\n\n');
      res.write(chunkEvent({ role: 'assistant', content: '' }));
      res.write(tokenEvent('Hel'));
      await released; // the rest only once the first token has reached the consumer
      res.write(tokenEvent('lo'));
      res.write(tokenEvent(' wörld 🙂'));
      res.end(finishEvents());
    });
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    const events: AgentEvent[] = [];
    for await (const event of backend.run(turnWith('hi'))) {
      events.push(event);
      if (events.length === 1) release();
    }
    await backend.close?.();
    assert.deepEqual(events, [
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'text', text: ' wörld 🙂' },
      { type: 'text', text: '', last: true },
      { type: 'completed' },
    ]);
  });

  it('completes at [DONE] without waiting for the connection to end, and closes it', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.write(tokenEvent('done here'));
      res.write('data: [DONE]\n\n'); // and the response is never ended
    });
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    const events = await collect(backend, turnWith('x'));
    await backend.close?.();
    assert.deepEqual(texts(events), ['done here', '']);
    assert.equal(lastEvent(events)?.type, 'completed');
    assert.equal(await model.requests.at(-1)!.ended, 'closed');
  });

  it('completes on a finish_reason when the stream then ends without [DONE]', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.end(`${tokenEvent('a')}${chunkEvent({}, 'length')}`);
    });
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    const events = await collect(backend, turnWith('x'));
    await backend.close?.();
    assert.deepEqual(texts(events), ['a', '']);
    assert.equal(lastEvent(events)?.type, 'completed');
  });

  it('completes with no text event when the model says nothing', async () => {
    model.handle((_request, res) => streamReply(res, []));
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    const events = await collect(backend, turnWith('x'));
    await backend.close?.();
    assert.deepEqual(events, [{ type: 'completed' }]);
  });

  it('fails when the stream ends before the reply is finished', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.end(tokenEvent('half'));
    });
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    const events = await collect(backend, turnWith('x'));
    await backend.close?.();
    assert.deepEqual(texts(events), ['half']);
    assert.equal(failureOf(events), 'the model endpoint sent an answer that ended before the reply was finished');
  });

  it('accepts a whole JSON answer from a server that ignores stream: true', async () => {
    model.handle((_request, res) =>
      answerJson(res, 200, {
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'All at once.' }, finish_reason: 'stop' }],
      }),
    );
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    const events = await collect(backend, turnWith('x'));
    await backend.close?.();
    assert.deepEqual(events, [
      { type: 'text', text: 'All at once.' },
      { type: 'text', text: '', last: true },
      { type: 'completed' },
    ]);
  });

  it('never forwards reasoning, which still counts as a sign of life for the first-token timeout', async () => {
    model.handle(async (_request, res) => {
      startStream(res);
      for (let i = 0; i < 4; i++) {
        res.write(chunkEvent({ reasoning_content: 'thinking…' }));
        await delay(80);
      }
      res.end(`${tokenEvent('answer')}${finishEvents()}`);
    });
    const backend = createOpenAiBackend(
      testConfig(model.baseUrl, { timeouts: { connectMs: 1000, firstTokenMs: 150, totalMs: 5000 } }),
    );
    const events = await collect(backend, turnWith('x'));
    await backend.close?.();
    assert.deepEqual(texts(events), ['answer', '']);
    assert.equal(lastEvent(events)?.type, 'completed');
  });
});

describe('openai backend: failures', () => {
  let model: FakeModel;
  before(async () => {
    model = await startFakeModel();
  });
  after(() => model.close());

  async function run(config = testConfig(model.baseUrl), text = 'x'): Promise<AgentEvent[]> {
    const backend = createOpenAiBackend(config);
    try {
      return await collect(backend, turnWith(text));
    } finally {
      await backend.close?.();
    }
  }

  it('names the HTTP status of an error answer', async () => {
    model.handle((_request, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html>down</html>');
    });
    assert.equal(failureOf(await run()), 'the model endpoint answered HTTP 503');
  });

  it('adds the server message of an error JSON, with the API key redacted', async () => {
    model.handle((request, res) =>
      answerJson(res, 401, {
        error: {
          message: `Incorrect API key provided: ${String(request.headers.authorization).slice(7)}. See the docs.`,
          type: 'invalid_request_error',
        },
      }),
    );
    const reason = failureOf(await run(testConfig(model.baseUrl, { apiKey: API_KEY })));
    assert.equal(
      reason,
      'the model endpoint answered HTTP 401: Incorrect API key provided: [secret redacted]. See the docs.',
    );
    assert.ok(!reason.includes(API_KEY));
  });

  it('cuts a long server message short', async () => {
    model.handle((_request, res) => answerJson(res, 400, { error: { message: 'context too long '.repeat(100) } }));
    const reason = failureOf(await run());
    assert.ok(reason.startsWith('the model endpoint answered HTTP 400: context too long'));
    assert.ok(reason.length <= 'the model endpoint answered HTTP 400: '.length + 200);
  });

  it('fails on an error object inside the stream, keeping the text already sent', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.end(`${tokenEvent('par')}data: {"error":{"message":"server overloaded ${API_KEY}"}}\n\n`);
    });
    const events = await run(testConfig(model.baseUrl, { apiKey: API_KEY }));
    assert.deepEqual(texts(events), ['par']);
    assert.equal(failureOf(events), 'the model endpoint reported an error: server overloaded [secret redacted]');
  });

  it('fails on a stream event that is not JSON', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.end('data: {"choices": [oops\n\ndata: [DONE]\n\n');
    });
    assert.equal(failureOf(await run()), 'the model endpoint sent a stream event that is not a JSON object');
  });

  it('fails when no token comes within firstTokenMs, and closes the request', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.write(': waiting\n\n'); // headers and a comment, but no token
    });
    const started = Date.now();
    const events = await run(
      testConfig(model.baseUrl, { timeouts: { connectMs: 1000, firstTokenMs: 200, totalMs: 5000 } }),
    );
    const elapsed = Date.now() - started;
    assert.equal(failureOf(events), 'the model endpoint sent no token within 200 ms');
    assert.ok(elapsed >= 190 && elapsed < 2000, `took ${elapsed} ms`);
    assert.equal(await model.requests.at(-1)!.ended, 'closed');
  });

  it('fails when no response head comes within firstTokenMs either', async () => {
    model.handle(() => {}); // never answers
    const events = await run(
      testConfig(model.baseUrl, { timeouts: { connectMs: 1000, firstTokenMs: 150, totalMs: 5000 } }),
    );
    assert.equal(failureOf(events), 'the model endpoint sent no token within 150 ms');
  });

  it('fails when the stream stalls past totalMs, after the tokens it did send', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.write(tokenEvent('one '));
      res.write(tokenEvent('two'));
    });
    const events = await run(
      testConfig(model.baseUrl, { timeouts: { connectMs: 1000, firstTokenMs: 200, totalMs: 400 } }),
    );
    assert.deepEqual(texts(events), ['one ', 'two']);
    assert.equal(failureOf(events), 'the model endpoint did not finish within 400 ms');
    assert.equal(await model.requests.at(-1)!.ended, 'closed');
  });

  it('never follows a redirect: the target sees no request and the key goes nowhere', async () => {
    const seen: string[] = [];
    const target = createServer((req, res) => {
      seen.push(String(req.headers.authorization));
      streamReply(res, ['hijacked']);
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/v1/chat/completions`;
    try {
      for (const status of [301, 302, 307, 308]) {
        model.handle((_request, res) => {
          res.writeHead(status, { location: targetUrl });
          res.end();
        });
        const events = await run(testConfig(model.baseUrl, { apiKey: API_KEY }));
        assert.equal(
          failureOf(events),
          `the model endpoint answered HTTP ${status} (a redirect, never followed: set baseUrl to the final address)`,
        );
      }
      assert.deepEqual(seen, []);
    } finally {
      target.closeAllConnections();
      await new Promise<void>((resolve) => target.close(() => resolve()));
    }
  });

  it('fails past maxResponseBytes while streaming, and closes the request', async () => {
    model.handle((_request, res) => {
      startStream(res);
      for (let i = 0; i < 40; i++) res.write(tokenEvent('x'.repeat(100)));
    });
    const events = await run(testConfig(model.baseUrl, { maxResponseBytes: 2048 }));
    assert.equal(failureOf(events), 'the model endpoint sent more than 2 KiB (maxResponseBytes)');
    assert.ok(texts(events).join('').length < 2048);
    assert.equal(await model.requests.at(-1)!.ended, 'closed');
  });

  it('fails at once on a declared length past maxResponseBytes, and on a whole answer past it', async () => {
    model.handle((_request, res) =>
      answerJson(res, 200, { choices: [{ message: { content: 'y'.repeat(5000) }, finish_reason: 'stop' }] }),
    );
    const events = await run(testConfig(model.baseUrl, { maxResponseBytes: 4096 }));
    assert.equal(failureOf(events), 'the model endpoint sent more than 4 KiB (maxResponseBytes)');
    assert.deepEqual(texts(events), []);
    model.handle((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no declared length
      res.end(JSON.stringify({ choices: [{ message: { content: 'y'.repeat(5000) } }] }));
    });
    assert.equal(
      failureOf(await run(testConfig(model.baseUrl, { maxResponseBytes: 4096 }))),
      'the model endpoint sent more than 4 KiB (maxResponseBytes)',
    );
  });

  it('refuses a compressed answer', async () => {
    model.handle((_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      res.end('not really gzip');
    });
    assert.equal(failureOf(await run()), 'the model endpoint sent a compressed answer although none was asked for');
  });

  it('says so when nothing listens at baseUrl', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const events = await run(testConfig(`http://127.0.0.1:${port}/v1`));
    assert.equal(failureOf(events), 'could not connect to the model endpoint (connection refused)');
  });

  it('logs a failure with its code and status only', async () => {
    model.handle((_request, res) => answerJson(res, 429, { error: { message: 'slow down, private words' } }));
    const lines: Array<[string, string, Record<string, unknown>]> = [];
    const backend = createOpenAiBackend(testConfig(model.baseUrl), {
      log: (level, event, fields) => lines.push([level, event, { ...fields }]),
    });
    await collect(backend, turnWith('private words'));
    await backend.close?.();
    const line = lines.find(([, event]) => event === 'openai_turn_failed');
    assert.equal(line?.[0], 'warn');
    assert.equal(line?.[2].code, 'http_status');
    assert.equal(line?.[2].status, 429);
    assert.ok(!JSON.stringify(lines).includes('private words'));
  });
});

describe('openai backend: cancellation', () => {
  let model: FakeModel;
  before(async () => {
    model = await startFakeModel();
  });
  after(() => model.close());

  it('aborts the upstream request at once and ends without an outcome', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.write(tokenEvent('first'));
      // … and then nothing: the model is still thinking when the caller cancels.
    });
    const controller = new AbortController();
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    const events: AgentEvent[] = [];
    const started = Date.now();
    for await (const event of backend.run(turnWith('x', { signal: controller.signal }))) {
      events.push(event);
      if (event.type === 'text') controller.abort();
    }
    assert.deepEqual(events, [{ type: 'text', text: 'first' }]);
    assert.ok(Date.now() - started < 2000);
    assert.equal(await model.requests.at(-1)!.ended, 'closed');
    await backend.close?.();
  });

  it('aborts while waiting for the response head', async () => {
    model.handle(() => {});
    const controller = new AbortController();
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    const running = collect(backend, turnWith('x', { signal: controller.signal }));
    const request = await model.requestArrived(model.requests.length + 1);
    controller.abort();
    assert.deepEqual(await running, []);
    assert.equal(await request.ended, 'closed');
    await backend.close?.();
  });

  it('serves the next turn on the same backend after a cancel', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.write(tokenEvent('stuck'));
    });
    const controller = new AbortController();
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    for await (const event of backend.run(turnWith('x', { signal: controller.signal }))) {
      if (event.type === 'text') controller.abort();
    }
    model.handle((_request, res) => streamReply(res, ['fine']));
    const events = await collect(backend, turnWith('y'));
    const again = await collect(backend, turnWith('z'));
    await backend.close?.();
    assert.deepEqual(texts(events), ['fine', '']);
    assert.deepEqual(texts(again), ['fine', '']);
  });

  it('sends nothing for a turn canceled before it starts', async () => {
    const controller = new AbortController();
    controller.abort();
    const before = model.requests.length;
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    assert.deepEqual(await collect(backend, turnWith('x', { signal: controller.signal })), []);
    await backend.close?.();
    assert.equal(model.requests.length, before);
  });

  it('closes the request when the consumer stops reading', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.write(tokenEvent('only'));
    });
    const backend = createOpenAiBackend(testConfig(model.baseUrl));
    for await (const event of backend.run(turnWith('x'))) {
      assert.equal(event.type, 'text');
      break;
    }
    assert.equal(await model.requests.at(-1)!.ended, 'closed');
    await backend.close?.();
  });
});
