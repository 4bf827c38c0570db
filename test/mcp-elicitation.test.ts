/**
 * Per-call confirmation of acting agents (`--autonomy confirm`) with the official MCP client:
 * over the stdio serving entry (2025-era handshake, as desktop hosts speak it today) and over
 * Streamable HTTP on the 2026-07-28 revision (multi-round-trip). A loopback A2A agent records
 * what reaches it: nothing may arrive unless the person accepted, and `read_only` stays a
 * ceiling whatever the host could ask.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import {
  Client,
  ReadBuffer,
  StreamableHTTPClientTransport,
  serializeMessage,
  type ClientOptions,
  type ElicitRequest,
  type ElicitResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/client';
import type { AuditEvent } from '../src/audit/events.js';
import { loopbackTransport, makeTask, startFakeRemote, stubCards } from '../src/client/fake-remote.test.js';
import { createClient, parseRegistry, type CallResult } from '../src/client/index.js';
import { serveMcpStdio, startMcpHttp, type ConfirmEvent, type McpAutonomy } from '../src/mcp/index.js';

const ENV = { AIRLOCK_SECRET_TEST: 'tok-SECRET-0123456789abcdefXYZ' };
const closers: Array<() => Promise<void>> = [];

after(async () => {
  for (const close of closers.reverse()) await close();
});

function registryYaml(url: string): string {
  const card = new URL('/.well-known/agent-card.json', url).href;
  return `agents:
  - name: reader
    card_url: ${card}
    description: Reads the news.
    effect: read_only
    auth: { bearer_env: AIRLOCK_SECRET_TEST }
  - name: shop
    card_url: ${card}
    description: Orders office supplies.
    effect: acting
    auth: { bearer_env: AIRLOCK_SECRET_TEST }
`;
}

/** A client transport over two streams: the other end of `serveMcpStdio`'s stdin and stdout. */
class StreamPairTransport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #buffer = new ReadBuffer();

  constructor(
    private readonly toServer: PassThrough,
    private readonly fromServer: PassThrough,
  ) {}

  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.#buffer.append(chunk);
      for (let message = this.#buffer.readMessage(); message !== null; message = this.#buffer.readMessage()) {
        this.onmessage?.(message);
      }
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
  }
}

type Answer = (request: ElicitRequest) => Promise<ElicitResult>;

interface Setup {
  autonomy: McpAutonomy;
  /** Declares form elicitation and answers with this; undefined: declares nothing. */
  answer?: Answer;
  confirmTimeoutMs?: number;
  http?: 'modern' | 'legacy';
}

async function setUp(setup: Setup) {
  const remote = await startFakeRemote(() => ({
    send: { kind: 'task', task: makeTask('t-1', 'completed', 'Ordered.') },
  }));
  closers.push(() => remote.close());
  const audit: AuditEvent[] = [];
  const confirmations: ConfirmEvent[] = [];
  const asked: ElicitRequest[] = [];
  const client = createClient({
    registry: parseRegistry(registryYaml(remote.url), ENV),
    transport: loopbackTransport(),
    cards: stubCards(remote.url, '1.0'),
    audit: (event) => void audit.push(event),
  });
  const options = {
    client,
    autonomy: setup.autonomy,
    confirmTimeoutMs: setup.confirmTimeoutMs ?? 10_000,
    onConfirmation: (event: ConfirmEvent) => void confirmations.push(event),
  };
  const clientOptions: ClientOptions =
    setup.answer === undefined ? {} : { capabilities: { elicitation: { form: {} } } };
  if (setup.http === 'modern') clientOptions.versionNegotiation = { mode: { pin: '2026-07-28' } };
  const mcp = new Client({ name: 'host', version: '0.0.0' }, clientOptions);
  const answer = setup.answer;
  if (answer !== undefined) {
    mcp.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request);
      return answer(request);
    });
  }
  if (setup.http !== undefined) {
    const http = await startMcpHttp(options, { port: 0 });
    closers.push(() => http.close());
    await mcp.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  } else {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const handle = serveMcpStdio(options, { stdin, stdout });
    closers.push(() => handle.close());
    await mcp.connect(new StreamPairTransport(stdin, stdout));
  }
  closers.push(() => mcp.close());
  const send = async (agent: string, message: string) => {
    const called = await mcp.callTool({ name: 'a2a_send', arguments: { agent, message } });
    const text = (called.content as Array<{ text: string }>)[0]?.text ?? '';
    return {
      isError: called.isError === true,
      text,
      result: text.startsWith('{') ? (JSON.parse(text) as CallResult) : undefined,
    };
  };
  return { remote, audit, confirmations, asked, send };
}

const accept: Answer = async () => ({ action: 'accept', content: { confirm: true } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('--autonomy confirm over stdio (2025-era host)', () => {
  it('asks the person, and an accepted call goes out once', async () => {
    const { remote, audit, confirmations, asked, send } = await setUp({ autonomy: 'confirm', answer: accept });
    const sent = await send('shop', 'Order 5 boxes of pens\u202E\nand 3 notepads');
    assert.equal(sent.isError, false, sent.text);
    assert.equal(sent.result?.status, 'success');
    assert.equal(remote.requests.length, 1);
    assert.equal(asked.length, 1);
    const params = asked[0]!.params as { message: string; requestedSchema: { properties: Record<string, unknown> } };
    assert.match(params.message, /acting agent "shop"/);
    // The first line only, without the bidi override, and the size of the whole text.
    assert.match(params.message, /"Order 5 boxes of pens" \(2 lines, 37 characters in all\)/);
    assert.doesNotMatch(params.message, /notepads|\u202E/);
    assert.deepEqual(Object.keys(params.requestedSchema.properties), ['confirm']);
    assert.deepEqual(confirmations, [{ agent: 'shop', outcome: 'accepted' }]);
    assert.deepEqual(
      audit.map((event) => [event.type, event.outcome]),
      [['a2a.client.send', 'ok']],
    );
  });

  it('a declined call is refused and nothing is sent', async () => {
    const { remote, audit, confirmations, send } = await setUp({
      autonomy: 'confirm',
      answer: async () => ({ action: 'decline' }),
    });
    const sent = await send('shop', 'Order 5 boxes of pens');
    assert.equal(sent.isError, true);
    assert.equal(sent.result?.error_type, 'confirmation_required');
    assert.match(sent.result?.error_message ?? '', /was not called: the person declined it/);
    assert.equal(remote.requests.length, 0);
    assert.deepEqual(confirmations, [{ agent: 'shop', outcome: 'declined' }]);
    const row = audit[0] as { type: string; outcome: string; reason?: string };
    assert.deepEqual([row.type, row.outcome, row.reason], ['a2a.client.send', 'denied', 'confirmation_required']);
  });

  it('accept without confirm: true, or a cancel, sends nothing', async () => {
    const unticked = await setUp({
      autonomy: 'confirm',
      answer: async () => ({ action: 'accept', content: { confirm: false } }),
    });
    assert.equal((await unticked.send('shop', 'Order pens')).isError, true);
    assert.equal(unticked.remote.requests.length, 0);
    const cancelled = await setUp({ autonomy: 'confirm', answer: async () => ({ action: 'cancel' }) });
    const sent = await cancelled.send('shop', 'Order pens');
    assert.match(sent.result?.error_message ?? '', /cancelled/);
    assert.equal(cancelled.remote.requests.length, 0);
  });

  it('no answer within the timeout: refused, and a late yes sends nothing', async () => {
    const { remote, audit, confirmations, send } = await setUp({
      autonomy: 'confirm',
      confirmTimeoutMs: 300,
      answer: async () => {
        await sleep(900);
        return { action: 'accept', content: { confirm: true } };
      },
    });
    const started = Date.now();
    const sent = await send('shop', 'Order 5 boxes of pens');
    assert.equal(sent.isError, true, sent.text);
    assert.ok(Date.now() - started < 850, 'refused at the timeout, not when the answer came');
    await sleep(900);
    assert.equal(remote.requests.length, 0);
    assert.deepEqual(confirmations, [{ agent: 'shop', outcome: 'timeout' }]);
    const row = audit[0] as { type: string; outcome: string; reason?: string } | undefined;
    assert.deepEqual([row?.type, row?.outcome, row?.reason], ['a2a.client.send', 'denied', 'confirmation_required']);
  });

  it('a host without elicitation is refused with a one-line reason, and nothing is sent', async () => {
    const { remote, audit, confirmations, send } = await setUp({ autonomy: 'confirm' });
    const sent = await send('shop', 'Order 5 boxes of pens');
    assert.equal(sent.isError, true);
    assert.match(
      sent.result?.error_message ?? '',
      /cannot ask the person to confirm \(no elicitation support\); use a host that supports MCP elicitation, or .*--autonomy acting/,
    );
    assert.doesNotMatch(sent.result?.error_message ?? '', /\n/);
    assert.equal(remote.requests.length, 0);
    assert.deepEqual(confirmations, [{ agent: 'shop', outcome: 'unsupported' }]);
    assert.equal((audit[0] as { reason?: string }).reason, 'confirmation_required');
  });

  it('read_only entries are not confirmed: they go out without asking', async () => {
    const { remote, asked, send } = await setUp({ autonomy: 'confirm', answer: accept });
    assert.equal((await send('reader', 'News?')).isError, false);
    assert.equal(asked.length, 0);
    assert.equal(remote.requests.length, 1);
  });

  it('the read_only ceiling holds: a host that would say yes is never asked, nothing is sent', async () => {
    const { remote, asked, confirmations, send } = await setUp({ autonomy: 'read_only', answer: accept });
    const sent = await send('shop', 'Order 5 boxes of pens');
    assert.equal(sent.isError, true);
    assert.match(sent.result?.error_message ?? '', /autonomy read_only/);
    assert.equal(asked.length, 0);
    assert.equal(confirmations.length, 0);
    assert.equal(remote.requests.length, 0);
  });

  it('--autonomy acting does not ask', async () => {
    const { remote, asked, send } = await setUp({ autonomy: 'acting', answer: accept });
    assert.equal((await send('shop', 'Order pens')).isError, false);
    assert.equal(asked.length, 0);
    assert.equal(remote.requests.length, 1);
  });
});

describe('--autonomy confirm over Streamable HTTP', () => {
  it('2026-07-28: the host answers in the multi-round-trip flow; accepted goes out, declined does not', async () => {
    const yes = await setUp({ autonomy: 'confirm', answer: accept, http: 'modern' });
    const sent = await yes.send('shop', 'Order 5 boxes of pens');
    assert.equal(sent.isError, false, sent.text);
    assert.equal(yes.asked.length, 1);
    assert.equal(yes.remote.requests.length, 1);
    const no = await setUp({ autonomy: 'confirm', answer: async () => ({ action: 'decline' }), http: 'modern' });
    assert.equal((await no.send('shop', 'Order 5 boxes of pens')).isError, true);
    assert.equal(no.remote.requests.length, 0);
  });

  it('2025 era, stateless: the server cannot ask, so the call is refused as unsupported', async () => {
    const { remote, asked, confirmations, send } = await setUp({ autonomy: 'confirm', answer: accept, http: 'legacy' });
    const sent = await send('shop', 'Order 5 boxes of pens');
    assert.equal(sent.isError, true);
    assert.equal(asked.length, 0);
    assert.equal(remote.requests.length, 0);
    assert.deepEqual(confirmations, [{ agent: 'shop', outcome: 'unsupported' }]);
  });
});
