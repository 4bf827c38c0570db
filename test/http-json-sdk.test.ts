/**
 * Interop over the HTTP+JSON binding: the official `@a2a-js/sdk` client, given only its REST
 * transport, finds the HTTP+JSON interface on Airlock's card and drives every operation the
 * binding serves. A tap on `fetchImpl` adds the bearer token and records the requests, so that
 * each test can check the SDK really spoke REST (paths, not JSON-RPC methods).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Role, TaskState, type Message, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { startGateway, TOKEN_A, TOKEN_B, type TestGateway } from './helpers/gateway.js';

let gw: TestGateway;
before(async () => {
  gw = await startGateway();
});
after(() => gw.close());

const BOUNDED = { timeout: 5_000 };

interface Seen {
  method: string;
  path: string;
  version: string | null;
  jsonRpc: boolean;
}

/** An SDK client for `slug` that can only speak HTTP+JSON, and what it sent. */
async function connect(slug: string, token = TOKEN_A): Promise<{ client: Client; seen: Seen[] }> {
  const seen: Seen[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
    seen.push({
      method: init?.method ?? 'GET',
      path: url.pathname,
      version: headers.get('a2a-version'),
      jsonRpc: body?.jsonrpc !== undefined,
    });
    return fetch(input, { ...init, headers });
  };
  // Not merged with the defaults: those bring a JSON-RPC transport, which the card lists first.
  const factory = new ClientFactory({
    ...ClientFactoryOptions.default,
    transports: [new RestTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  const client = await factory.createFromUrl(`${gw.url}/a2a/${slug}/`);
  return { client, seen };
}

function userMessage(text: string, messageId = `sdk-${randomUUID()}`): Message {
  return {
    messageId,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function request(message: Message, returnImmediately = false): SendMessageRequest {
  return {
    tenant: '',
    message,
    metadata: undefined,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
  };
}

function asTask(result: Task | Message): Task {
  assert.ok('status' in result, `expected a task: ${JSON.stringify(result)}`);
  return result;
}

function stateOf(task: Task): string {
  return TaskState[task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED];
}

async function drain(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Every request after the card went to a binding path with A2A-Version 1.0, none as JSON-RPC. */
function assertRest(seen: readonly Seen[], path: RegExp): void {
  const calls = seen.filter((call) => !call.path.includes('/.well-known/'));
  assert.ok(calls.length > 0);
  for (const call of calls) {
    assert.equal(call.jsonRpc, false, `${call.method} ${call.path} is JSON-RPC`);
    assert.equal(call.version, '1.0');
  }
  assert.ok(
    calls.some((call) => path.test(call.path)),
    calls.map((c) => `${c.method} ${c.path}`).join(', '),
  );
}

describe('@a2a-js/sdk over HTTP+JSON', () => {
  it('picks the HTTP+JSON interface and sends a message (sendMessage → POST message:send)', BOUNDED, async () => {
    const { client, seen } = await connect('echo');
    const task = asTask(await client.sendMessage(request(userMessage('hello rest sdk'))));
    assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');
    assert.match(JSON.stringify(task.artifacts), /hello rest sdk/);
    assertRest(seen, /\/a2a\/echo\/message:send$/);
  });

  it('getTask with historyLength, and TaskNotFoundError for another caller’s task', BOUNDED, async () => {
    const { client, seen } = await connect('echo');
    const task = asTask(await client.sendMessage(request(userMessage('remember'))));
    const none = await client.getTask({ tenant: '', id: task.id, historyLength: 0 });
    assert.equal(none.history.length, 0);
    const full = await client.getTask({ tenant: '', id: task.id });
    assert.ok(full.history.length > 0);
    assertRest(seen, /\/tasks\/[^/]+$/);
    const other = await connect('echo', TOKEN_B);
    await assert.rejects(other.client.getTask({ tenant: '', id: task.id }), TaskNotFoundError);
  });

  it('listTasks pages through the caller’s tasks (GET tasks?…)', BOUNDED, async () => {
    const { client, seen } = await connect('echo');
    const contextId = `sdk-rest-${randomUUID()}`;
    for (let i = 0; i < 3; i++) {
      await client.sendMessage(request({ ...userMessage(`n${i}`), contextId }));
    }
    const ids: string[] = [];
    let pageToken = '';
    do {
      const page = await client.listTasks({
        tenant: '',
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 2,
        pageToken,
        statusTimestampAfter: undefined,
      });
      assert.equal(page.totalSize, 3);
      ids.push(...page.tasks.map((task) => task.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
    assert.equal(new Set(ids).size, 3);
    assertRest(seen, /\/tasks$/);
  });

  it('cancelTask cancels a waiting task; a second cancel is TaskNotCancelableError', BOUNDED, async () => {
    const { client, seen } = await connect('tck');
    const task = asTask(await client.sendMessage(request(userMessage('wait', `tck-input-required-${randomUUID()}`))));
    assert.equal(stateOf(task), 'TASK_STATE_INPUT_REQUIRED');
    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    assert.equal(stateOf(canceled), 'TASK_STATE_CANCELED');
    await assert.rejects(client.cancelTask({ tenant: '', id: task.id, metadata: undefined }), TaskNotCancelableError);
    assertRest(seen, /:cancel$/);
  });

  it('sendMessageStream: the task first, artifact chunks, completed last (SSE over REST)', BOUNDED, async () => {
    const { client, seen } = await connect('writer');
    const events = await drain(client.sendMessageStream(request(userMessage('the sea'))));
    assert.equal(events[0]?.payload?.$case, 'task');
    assert.ok(events.some((event) => event.payload?.$case === 'artifactUpdate'));
    const last = events.at(-1)?.payload;
    assert.equal(last?.$case, 'statusUpdate');
    assert.equal(TaskState[last.value.status?.state ?? 0], 'TASK_STATE_COMPLETED');
    assertRest(seen, /message:stream$/);
  });

  it('resubscribeTask on a running task, then UnsupportedOperationError once it is finished', BOUNDED, async () => {
    const { client, seen } = await connect('tck');
    const task = asTask(
      await client.sendMessage(request(userMessage('hold', `test-resubscribe-message-id-${randomUUID()}`), true)),
    );
    const events = await drain(client.resubscribeTask({ tenant: '', id: task.id }));
    assert.equal(events[0]?.payload?.$case, 'task');
    const last = events.at(-1)?.payload;
    assert.equal(last?.$case, 'statusUpdate');
    assert.equal(TaskState[last.value.status?.state ?? 0], 'TASK_STATE_COMPLETED');
    await assert.rejects(drain(client.resubscribeTask({ tenant: '', id: task.id })), UnsupportedOperationError);
    assertRest(seen, /:subscribe$/);
  });

  it('getAgentCard fetches the extended card over GET extendedAgentCard', BOUNDED, async () => {
    const { client, seen } = await connect('echo');
    const card = await client.getAgentCard();
    assert.deepEqual(
      card.skills.map((skill) => skill.id),
      ['echo'],
    );
    assertRest(seen, /\/extendedAgentCard$/);
  });
});
