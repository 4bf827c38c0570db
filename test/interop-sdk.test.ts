/**
 * Interop: the official `@a2a-js/sdk` client drives a real Airlock gateway over loopback, once as
 * a v1.0 client and once as a v0.3 legacy client, through every method the gateway serves.
 * Assertions are on behaviour (states, texts, ids, error codes). A tap on the SDK's `fetchImpl`
 * adds the bearer token and records each exchange, so that every test can also check that the
 * SDK really spoke the dialect under test (method names and the A2A-Version header), and read
 * the raw SSE frames where the SDK hides a wire field (v0.3's `final`).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  Role,
  TaskState,
  type Message,
  type Part,
  type SendMessageConfiguration,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import {
  Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { isJsonRpcError } from '@a2a-js/sdk/errors';
import { rpc, startGateway, TOKEN_A, TOKEN_B, type TestGateway } from './helpers/gateway.js';

let gw: TestGateway;

before(async () => {
  gw = await startGateway();
});
after(async () => {
  await gw.close();
});

/** Every test is bounded; the slowest (the tck hold) takes 300 ms. */
const BOUNDED = { timeout: 5_000 };

type Dialect = '1.0' | '0.3';

/** The JSON-RPC method each SDK call must become, per dialect. */
const METHODS = {
  '1.0': {
    send: 'SendMessage',
    stream: 'SendStreamingMessage',
    get: 'GetTask',
    list: 'ListTasks',
    cancel: 'CancelTask',
    subscribe: 'SubscribeToTask',
    extendedCard: 'GetExtendedAgentCard',
  },
  '0.3': {
    send: 'message/send',
    stream: 'message/stream',
    get: 'tasks/get',
    list: 'tasks/list',
    cancel: 'tasks/cancel',
    subscribe: 'tasks/resubscribe',
    extendedCard: 'agent/getAuthenticatedExtendedCard',
  },
} as const;

type Call = keyof (typeof METHODS)['1.0'];

/** One HTTP exchange the SDK made, as seen by its `fetchImpl`. */
interface Exchange {
  /** The JSON-RPC method, or `GET <url>` for a card. */
  method: string;
  /** The A2A-Version header the SDK sent, if any. */
  version: string | null;
  params: any;
  status: number;
  /** The `data:` payloads of an SSE response (read from a clone of it). */
  frames(): Promise<any[]>;
}

interface Connected {
  client: Client;
  wire: Exchange[];
}

function urlOf(input: string | URL | Request): string {
  return input instanceof Request ? input.url : input.toString();
}

function parseFrames(text: string): any[] {
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n').find((line) => line.startsWith('data:')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(5)));
}

/** A fetch that adds `Authorization: Bearer <token>` (unless null) and records the exchange. */
function tappedFetch(token: string | null, wire: Exchange[]): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    if (token !== null) headers.set('authorization', `Bearer ${token}`);
    const response = await fetch(input, { ...init, headers });
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    const sse = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
    const copy = sse ? response.clone() : undefined;
    wire.push({
      method: typeof body?.method === 'string' ? body.method : `${init?.method ?? 'GET'} ${urlOf(input)}`,
      version: headers.get('a2a-version'),
      params: body?.params,
      status: response.status,
      frames: async () => (copy === undefined ? [] : parseFrames(await copy.text())),
    });
    return response;
  };
}

/**
 * Builds an SDK client for one agent in one dialect. v1.0 goes the SDK's usual way (card
 * resolver + ClientFactory). v0.3 cannot: the factory always prefers a 1.0 interface over a 0.3
 * one of the same binding, and Airlock offers both on one URL, so the legacy transport is built
 * by hand on the 0.3 interface that the card lists.
 */
async function connect(dialect: Dialect, slug: string, token: string | null = TOKEN_A): Promise<Connected> {
  const wire: Exchange[] = [];
  const fetchImpl = tappedFetch(token, wire);
  // The trailing slash matters: the resolver resolves the relative card path against it.
  const base = `${gw.url}/a2a/${slug}/`;
  if (dialect === '1.0') {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    );
    const client = await factory.createFromUrl(base);
    assert.equal(client.protocolVersion, '1.0');
    return { client, wire };
  }
  const card = await new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }).resolve(base);
  const legacy = card.supportedInterfaces.find(
    (entry) => entry.protocolBinding === 'JSONRPC' && entry.protocolVersion === '0.3',
  );
  assert.ok(legacy, 'the card lists a JSON-RPC 0.3 interface');
  const client = new Client(new LegacyJsonRpcTransport({ endpoint: legacy.url, fetchImpl }), card);
  assert.equal(client.protocolVersion, '0.3');
  return { client, wire };
}

/** The exchanges of one call, after checking that the SDK made it in the dialect under test. */
function sent(wire: Exchange[], dialect: Dialect, call: Call): Exchange[] {
  const method = METHODS[dialect][call];
  const matching = wire.filter((exchange) => exchange.method === method);
  assert.ok(matching.length > 0, `no ${method} on the wire: ${wire.map((exchange) => exchange.method).join(', ')}`);
  for (const exchange of matching) assert.equal(exchange.version, dialect, `A2A-Version of ${method}`);
  return matching;
}

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

function userMessage(text: string, extra: Partial<Message> = {}): Message {
  return {
    messageId: `sdk-${randomUUID()}`,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

function sendRequest(message: Message, configuration: Partial<SendMessageConfiguration> = {}): SendMessageRequest {
  return {
    tenant: '',
    message,
    metadata: undefined,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: false,
      ...configuration,
    },
  };
}

/** The messageId prefix that makes the tck backend hold the task `working` for 300 ms. */
function holdMessage(): Message {
  return userMessage('hold', { messageId: `test-resubscribe-message-id-${randomUUID()}` });
}

function asTask(result: Task | Message): Task {
  assert.ok('status' in result, `expected a task, got a message: ${JSON.stringify(result)}`);
  return result;
}

/** The state's enum name, so that failures read `TASK_STATE_…` rather than a number. */
function stateOf(task: Task): string {
  return TaskState[task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED];
}

function textOf(parts: readonly Part[]): string {
  return parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}

function artifactText(task: Task): string {
  return task.artifacts.map((artifact) => textOf(artifact.parts)).join('');
}

async function drain(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function firstTask(events: readonly StreamResponse[]): Task {
  const payload = events[0]?.payload;
  assert.equal(payload?.$case, 'task', 'the first event is the task');
  return payload.value;
}

/** The state names of every status update, in order. */
function statusStates(events: readonly StreamResponse[]): string[] {
  return events.flatMap((event) =>
    event.payload?.$case === 'statusUpdate'
      ? [TaskState[event.payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED]]
      : [],
  );
}

function lastStatus(events: readonly StreamResponse[]): string {
  const payload = events.at(-1)?.payload;
  assert.equal(payload?.$case, 'statusUpdate', 'the last event is a status update');
  return TaskState[payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED];
}

async function rejectsWithCode(promise: Promise<unknown>, code: number): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isJsonRpcError(error), `expected a JSON-RPC error, got ${String(error)}`);
    assert.equal(error.envelopeCode, code);
    return true;
  });
}

/** GetTask until the task reaches `state`, or fails after `timeoutMs`. */
async function pollUntil(client: Client, id: string, state: TaskState, timeoutMs = 2_000): Promise<Task> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await client.getTask({ tenant: '', id });
    if (task.status?.state === state || Date.now() > deadline) return task;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The tests both dialects share: the same SDK calls, answered in either wire dialect. */
function sharedTests(dialect: Dialect): void {
  it('sendMessage (blocking): echo completes and replies with the text', BOUNDED, async () => {
    const { client, wire } = await connect(dialect, 'echo');
    const task = asTask(await client.sendMessage(sendRequest(userMessage('hello interop'))));
    assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');
    assert.equal(artifactText(task), 'hello interop');
    assert.ok(task.id.length > 0 && task.contextId.length > 0);
    assert.equal(task.history[0]?.role, Role.ROLE_USER);
    assert.equal(textOf(task.history[0]?.parts ?? []), 'hello interop');
    sent(wire, dialect, 'send');
  });

  it('sendMessage (non-blocking) returns at once; getTask polls it to completed', BOUNDED, async () => {
    const { client, wire } = await connect(dialect, 'writer');
    const task = asTask(await client.sendMessage(sendRequest(userMessage('the sea'), { returnImmediately: true })));
    assert.ok(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(stateOf(task)), stateOf(task));
    const [send] = sent(wire, dialect, 'send');
    if (dialect === '1.0') assert.equal(send!.params.configuration.returnImmediately, true);
    else assert.equal(send!.params.configuration.blocking, false);
    const done = await pollUntil(client, task.id, TaskState.TASK_STATE_COMPLETED);
    assert.equal(stateOf(done), 'TASK_STATE_COMPLETED');
    assert.match(artifactText(done), /the sea/);
    sent(wire, dialect, 'get');
  });

  it('sendMessageStream on writer: the task first, ≥ 5 chunks, completed last', BOUNDED, async () => {
    const { client, wire } = await connect(dialect, 'writer');
    const events = await drain(client.sendMessageStream(sendRequest(userMessage('the sea'))));
    const task = firstTask(events);
    const chunks = events.flatMap((event) => (event.payload?.$case === 'artifactUpdate' ? [event.payload.value] : []));
    assert.ok(chunks.length >= 5, `got ${chunks.length} artifact updates`);
    assert.ok(chunks.every((chunk) => chunk.taskId === task.id));
    assert.equal(chunks[0]!.append, false);
    assert.ok(chunks.slice(1).every((chunk) => chunk.append));
    assert.equal(chunks.at(-1)!.lastChunk, true);
    assert.match(chunks.map((chunk) => textOf(chunk.artifact?.parts ?? [])).join(''), /about "the sea"/);
    assert.equal(lastStatus(events), 'TASK_STATE_COMPLETED');
    assert.equal(statusStates(events).filter((state) => state === 'TASK_STATE_COMPLETED').length, 1);
    const [exchange] = sent(wire, dialect, 'stream');
    const frames = await exchange!.frames();
    assert.equal(frames.length, events.length, 'one SDK event per SSE frame');
    if (dialect === '0.3') {
      // The SDK drops v0.3's `final` when it translates events; check it on the wire.
      const results = frames.map((frame) => frame.result);
      assert.equal(results.at(-1).kind, 'status-update');
      assert.equal(results.at(-1).final, true);
      assert.ok(results.slice(0, -1).every((result) => result.final !== true));
    }
  });

  it('getTask honours historyLength', BOUNDED, async () => {
    const { client, wire } = await connect(dialect, 'echo');
    const task = asTask(await client.sendMessage(sendRequest(userMessage('remember me'))));
    const full = await client.getTask({ tenant: '', id: task.id });
    assert.equal(full.id, task.id);
    assert.ok(full.history.length >= 1);
    const one = await client.getTask({ tenant: '', id: task.id, historyLength: 1 });
    assert.equal(one.history.length, 1);
    const none = await client.getTask({ tenant: '', id: task.id, historyLength: 0 });
    assert.equal(none.history.length, 0);
    const gets = sent(wire, dialect, 'get');
    assert.deepEqual(
      gets.map((exchange) => exchange.params.historyLength),
      [undefined, 1, 0],
    );
  });

  it('cancelTask cancels an input-required task; a second cancel gets -32002', BOUNDED, async () => {
    const { client, wire } = await connect(dialect, 'writer');
    const task = asTask(await client.sendMessage(sendRequest(userMessage('ask me'))));
    assert.equal(stateOf(task), 'TASK_STATE_INPUT_REQUIRED');
    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    assert.equal(canceled.id, task.id);
    assert.equal(stateOf(canceled), 'TASK_STATE_CANCELED');
    assert.equal(stateOf(await client.getTask({ tenant: '', id: task.id })), 'TASK_STATE_CANCELED');
    await rejectsWithCode(client.cancelTask({ tenant: '', id: task.id, metadata: undefined }), -32002);
    sent(wire, dialect, 'cancel');
  });

  it('cancelTask mid-stream ends the stream with canceled, promptly, never completed', BOUNDED, async () => {
    const { client, wire } = await connect(dialect, 'tck');
    const events: StreamResponse[] = [];
    let started = 0;
    for await (const event of client.sendMessageStream(sendRequest(holdMessage()))) {
      events.push(event);
      if (events.length === 1) {
        const id = firstTask(events).id;
        started = Date.now();
        const canceled = await client.cancelTask({ tenant: '', id, metadata: undefined });
        assert.equal(stateOf(canceled), 'TASK_STATE_CANCELED');
      }
    }
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 250, `the stream ended ${elapsed} ms after the cancel (the hold is 300 ms)`);
    assert.equal(lastStatus(events), 'TASK_STATE_CANCELED');
    assert.ok(!statusStates(events).includes('TASK_STATE_COMPLETED'), statusStates(events).join(', '));
    sent(wire, dialect, 'stream');
    sent(wire, dialect, 'cancel');
    assert.equal(gw.gateway.service.running, 0);
  });

  it('resubscribeTask on a running task: the Task snapshot first, completed last', BOUNDED, async () => {
    const { client, wire } = await connect(dialect, 'tck');
    const task = asTask(await client.sendMessage(sendRequest(holdMessage(), { returnImmediately: true })));
    assert.ok(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(stateOf(task)), stateOf(task));
    const events = await drain(client.resubscribeTask({ tenant: '', id: task.id }));
    const snapshot = firstTask(events);
    assert.equal(snapshot.id, task.id);
    assert.equal(snapshot.contextId, task.contextId);
    assert.equal(stateOf(snapshot), 'TASK_STATE_WORKING');
    assert.equal(lastStatus(events), 'TASK_STATE_COMPLETED');
    sent(wire, dialect, 'subscribe');
  });

  it('multi-turn: ask me → input-required → a follow-up on the task → completed', BOUNDED, async () => {
    const { client, wire } = await connect(dialect, 'writer');
    const first = asTask(await client.sendMessage(sendRequest(userMessage('ask me'))));
    assert.equal(stateOf(first), 'TASK_STATE_INPUT_REQUIRED');
    assert.match(textOf(first.status?.message?.parts ?? []), /What should I write about\?/);
    const second = asTask(
      await client.sendMessage(sendRequest(userMessage('mountains', { taskId: first.id, contextId: first.contextId }))),
    );
    assert.equal(second.id, first.id);
    assert.equal(second.contextId, first.contextId);
    assert.equal(stateOf(second), 'TASK_STATE_COMPLETED');
    assert.match(artifactText(second), /about "mountains"/);
    const sends = sent(wire, dialect, 'send');
    assert.equal(sends[1]!.params.message.taskId, first.id);
  });

  it(
    'getAgentCard returns the extended card (configured skills) in place of the minimal public one',
    BOUNDED,
    async () => {
      const echo = await connect(dialect, 'echo');
      const extended = await echo.client.getAgentCard();
      assert.equal(extended.name, 'Echo');
      assert.equal(extended.description, 'Echoes, for members.');
      sent(echo.wire, dialect, 'extendedCard');

      const writer = await connect(dialect, 'writer');
      const card = await writer.client.getAgentCard();
      assert.equal(card.description, 'Writes.');
      assert.deepEqual(
        card.skills.map((skill) => skill.id),
        ['write'],
      );
      sent(writer.wire, dialect, 'extendedCard');
    },
  );

  it('an unauthenticated client is refused with HTTP 401 and creates no task', BOUNDED, async () => {
    for (const token of [null, 'x'.repeat(40)]) {
      const { client, wire } = await connect(dialect, 'echo', token);
      const contextId = `sdk-unauthenticated-${randomUUID()}`;
      // The SDK never shows the HTTP status: it rethrows Airlock's JSON-RPC error body (-32600)
      // as JsonRpcRequestMalformedError. The message still says what went wrong; the tap has the 401.
      const refused = /Authentication required|401/;
      await assert.rejects(client.sendMessage(sendRequest(userMessage('let me in', { contextId }))), refused);
      await assert.rejects(
        drain(client.sendMessageStream(sendRequest(userMessage('let me in', { contextId })))),
        refused,
      );
      assert.deepEqual(
        [...sent(wire, dialect, 'send'), ...sent(wire, dialect, 'stream')].map((exchange) => exchange.status),
        [401, 401],
      );
      for (const owner of [TOKEN_A, TOKEN_B]) {
        const listed = await rpc(`${gw.url}/a2a/echo`, 'ListTasks', { contextId }, { version: '1.0', token: owner });
        assert.equal(listed.body.result.totalSize, 0);
      }
    }
  });
}

describe('@a2a-js/sdk client, v1.0 mode', () => {
  sharedTests('1.0');

  it('listTasks pages with pageSize 2, following nextPageToken until empty', BOUNDED, async () => {
    const { client, wire } = await connect('1.0', 'echo');
    const contextId = `sdk-list-${randomUUID()}`;
    const created = new Set<string>();
    for (let i = 0; i < 5; i++) {
      created.add(asTask(await client.sendMessage(sendRequest(userMessage(`n${i}`, { contextId })))).id);
    }
    const seen: string[] = [];
    let pageToken = '';
    let pages = 0;
    do {
      const page = await client.listTasks({
        tenant: '',
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 2,
        pageToken,
        statusTimestampAfter: undefined,
      });
      assert.ok(page.tasks.length <= 2, `page of ${page.tasks.length}`);
      assert.equal(page.totalSize, 5);
      assert.ok(page.tasks.every((task) => task.contextId === contextId));
      seen.push(...page.tasks.map((task) => task.id));
      pageToken = page.nextPageToken;
      pages++;
      assert.ok(pages <= 5, 'the pages end');
    } while (pageToken !== '');
    assert.equal(pages, 3);
    assert.equal(seen.length, created.size, `ids seen: ${seen.join(', ')}`);
    assert.deepEqual(new Set(seen), created);
    assert.equal(sent(wire, '1.0', 'list').length, 3);
  });
});

describe('@a2a-js/sdk client, v0.3 legacy mode', () => {
  sharedTests('0.3');

  it('listTasks does not exist in v0.3: the SDK refuses it without a request', BOUNDED, async () => {
    const { client, wire } = await connect('0.3', 'echo');
    const before = wire.length;
    await assert.rejects(
      async () =>
        client.listTasks({
          tenant: '',
          contextId: '',
          status: TaskState.TASK_STATE_UNSPECIFIED,
          pageToken: '',
          statusTimestampAfter: undefined,
        }),
      /tasks\/list/,
    );
    assert.equal(wire.length, before);
  });
});
