/**
 * The official `@a2a-js/sdk` client as a caller of a gateway in a test (v1.0 JSON-RPC), with a
 * bearer token on every request, and the small builders a blocking SendMessage needs.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';

/** An SDK client for `{base}/a2a/{slug}/`, resolved from the agent's card, sending `token`. */
export async function sdkClient(base: string, slug: string, token: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(`${base}/a2a/${slug}/`);
}

/** A user text message; `extra` names the task or context to continue. */
export function userMessage(text: string, extra: Partial<Message> = {}): Message {
  return {
    messageId: `sdk-${randomUUID()}`,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

/** A blocking SendMessage request for `message`. */
export function sendRequest(message: Message): SendMessageRequest {
  return {
    tenant: '',
    message,
    metadata: undefined,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false },
  };
}

export function asTask(result: Task | Message): Task {
  assert.ok('status' in result, `expected a task, got ${JSON.stringify(result)}`);
  return result;
}

/** The state's enum name, so that failures read `TASK_STATE_…`. */
export function stateOf(task: Task): string {
  return TaskState[task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED];
}
