import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { AgentBackend, AgentEvent, AgentTurn } from '../../agents/backend.js';
import { createEchoBackend } from '../../agents/echo.js';
import { A2AError } from '../../protocol/errors.js';
import type { Artifact, Message, SendParams, Task, TaskState } from '../../protocol/model.js';
import { CapacityError, type TurnGrant } from '../../tasks/policy.js';
import { TaskService } from '../../tasks/service.js';
import type { CallContext } from '../../tasks/call-context.js';
import { MemoryTaskStore } from '../../tasks/stores/memory.js';
import { compose, REFUSED } from '../admission/compose.js';
import { createInFlightStep } from '../admission/in-flight.js';
import type { TurnCandidate } from '../admission/turn.js';
import { createTurnContentStep } from '../admission/turn-content.js';
import {
  askError,
  askErrorResponse,
  askMessage,
  AskRequestError,
  askResultOf,
  ASK_STATES,
  parseAskRequest,
  runAsk,
  type AskReply,
} from './ask.js';

function refused(body: unknown, pattern: RegExp, options?: { maxMessageChars?: number }): void {
  assert.throws(
    () => parseAskRequest(body, options),
    (error: unknown) => {
      assert.ok(error instanceof AskRequestError);
      assert.equal(error.status, 400);
      assert.match(error.message, pattern);
      assert.ok(!error.message.includes('\n'), 'one line');
      return true;
    },
  );
}

describe('parseAskRequest', () => {
  it('accepts a message, with or without a contextId', () => {
    assert.deepEqual(parseAskRequest({ message: 'Hello' }), { message: 'Hello' });
    assert.deepEqual(parseAskRequest({ message: 'Hello', contextId: 'ctx-1' }), {
      message: 'Hello',
      contextId: 'ctx-1',
    });
    assert.deepEqual(parseAskRequest({ message: ' ', contextId: 'x'.repeat(256) }), {
      message: ' ',
      contextId: 'x'.repeat(256),
    });
  });

  it('reads a null or empty contextId as none: a new conversation', () => {
    assert.deepEqual(parseAskRequest({ message: 'Hi', contextId: null }), { message: 'Hi' });
    assert.deepEqual(parseAskRequest({ message: 'Hi', contextId: '' }), { message: 'Hi' });
  });

  it('refuses what is not an object', () => {
    for (const body of [null, undefined, 'Hello', 42, true, ['Hello']]) refused(body, /must be a JSON object/);
  });

  it('refuses a missing, empty or non-string message', () => {
    refused({}, /"message" is required/);
    refused({ message: null }, /"message" is required/);
    refused({ message: '' }, /"message" must not be empty/);
    refused({ message: 42 }, /"message" must be a string/);
    refused({ message: ['a'] }, /"message" must be a string/);
  });

  it('refuses a message over maxMessageChars when a limit is given', () => {
    assert.deepEqual(parseAskRequest({ message: 'abcd' }, { maxMessageChars: 4 }), { message: 'abcd' });
    refused({ message: 'abcde' }, /at most 4 characters/, { maxMessageChars: 4 });
  });

  it('refuses a bad contextId', () => {
    refused({ message: 'Hi', contextId: 7 }, /"contextId" must be a string/);
    refused({ message: 'Hi', contextId: 'x'.repeat(257) }, /at most 256 characters/);
    refused({ message: 'Hi', contextId: 'a b' }, /printable ASCII without spaces/);
    refused({ message: 'Hi', contextId: 'caf\u00e9' }, /printable ASCII/);
    refused({ message: 'Hi', contextId: 'a\nb' }, /printable ASCII/);
  });

  it('refuses unknown fields, naming them safely', () => {
    refused({ message: 'Hi', contextID: 'c' }, /Unknown field "contextID": only "message" and "contextId"/);
    refused({ message: 'Hi', taskId: 't' }, /Unknown field "taskId"/);
    refused(JSON.parse('{"message":"Hi","__proto__":{"x":1}}'), /Unknown field "__proto__"/);
    refused({ message: 'Hi', ['bad\nkey\u0000' + 'k'.repeat(100)]: 1 }, /Unknown field "bad\?key\?k+…"/);
  });

  it('property: never throws anything but AskRequestError, and what it accepts is valid', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (body) => {
        try {
          const request = parseAskRequest(body);
          assert.ok(request.message.length > 0);
          if (request.contextId !== undefined) assert.match(request.contextId, /^[\x21-\x7e]{1,256}$/);
        } catch (error) {
          assert.ok(error instanceof AskRequestError);
        }
      }),
    );
  });
});

const TS = '2026-01-01T00:00:00.000Z';

function task(state: TaskState, options: { artifacts?: Artifact[]; status?: string } = {}): Task {
  const status: Task['status'] = { state, timestamp: TS };
  if (options.status !== undefined) {
    status.message = { messageId: 'm-2', role: 'agent', parts: [{ kind: 'text', text: options.status }] };
  }
  return { id: 't-1', contextId: 'c-1', status, artifacts: options.artifacts ?? [], history: [] };
}

const REPLY: Artifact = {
  artifactId: 'a-1',
  name: 'reply',
  parts: [
    { kind: 'text', text: 'Hello' },
    { kind: 'data', data: { ignored: true } },
    { kind: 'text', text: 'there' },
  ],
};

describe('askResultOf', () => {
  it('a completed task: its artifact text, parts and artifacts joined by newlines', () => {
    const second: Artifact = { artifactId: 'a-2', parts: [{ kind: 'text', text: 'More' }] };
    assert.deepEqual(askResultOf({ kind: 'task', task: task('completed', { artifacts: [REPLY, second] }) }), {
      reply: 'Hello\nthere\nMore',
      state: 'completed',
      taskId: 't-1',
      contextId: 'c-1',
    });
  });

  it('takes a bare Task as well as a SendResult', () => {
    assert.deepEqual(
      askResultOf(task('completed', { artifacts: [REPLY] })),
      askResultOf({ kind: 'task', task: task('completed', { artifacts: [REPLY] }) }),
    );
  });

  it('a completed task with no artifact text: its status message', () => {
    assert.equal(askResultOf(task('completed', { status: 'Done.' })).reply, 'Done.');
    assert.equal(askResultOf(task('completed')).reply, '');
  });

  it('input-required, failed and rejected: the status message, not partial artifact text', () => {
    for (const state of ['input-required', 'failed', 'rejected'] as const) {
      const result = askResultOf(task(state, { artifacts: [REPLY], status: `Because ${state}` }));
      assert.deepEqual(result, { reply: `Because ${state}`, state, taskId: 't-1', contextId: 'c-1' });
    }
    assert.equal(askResultOf(task('failed')).reply, '');
  });

  it('reports every state by its lowercase name', () => {
    for (const state of ASK_STATES) assert.equal(askResultOf(task(state)).state, state);
  });

  it('a direct reply: completed, no task id, the message’s context', () => {
    const message: Message = {
      messageId: 'm-3',
      role: 'agent',
      parts: [
        { kind: 'text', text: 'Hi' },
        { kind: 'url', url: 'https://example.org/f' },
      ],
      contextId: 'c-9',
    };
    assert.deepEqual(askResultOf({ kind: 'message', message }), {
      reply: 'Hi',
      state: 'completed',
      taskId: '',
      contextId: 'c-9',
    });
  });
});

function scripted(events: AgentEvent[]): AgentBackend {
  return {
    kind: 'scripted',
    run: async function* () {
      yield* events;
    },
  };
}

function service(): TaskService {
  return new TaskService({ store: new MemoryTaskStore() });
}

function caller(backend: AgentBackend, principalKey = 'client:a::a'): CallContext {
  return { principalKey, agentSlug: 'agent', backend };
}

/** The configured defaults (src/config/schema.ts). */
const LIMITS = {
  requestsPerMinute: 600,
  authFailuresPerMinute: 10,
  maxJsonDepth: 32,
  maxParts: 16,
  maxInputChars: 8192,
  maxConcurrentTasks: 256,
  maxConcurrentTasksPerPrincipal: 16,
  maxTasksPerPrincipal: 1000,
  maxParkedTasksPerPrincipal: 100,
  maxStreams: 1000,
  maxStreamsPerPrincipal: 16,
  maxMetadataBytes: 4096,
  maxMetadataKeys: 128,
  maxMetadataDepth: 8,
  maxHistoryMessages: 100,
  maxTaskOutputBytes: 1024 * 1024,
  maxHops: 4,
};

describe('runAsk', () => {
  it('sends one blocking user message with one text part and a fresh messageId', async () => {
    const sent: SendParams[] = [];
    const recorder = {
      send: (_ctx: CallContext, params: SendParams) => {
        sent.push(params);
        return Promise.resolve({ kind: 'task' as const, task: task('completed', { artifacts: [REPLY] }) });
      },
    } as unknown as TaskService;
    const ctx = caller(createEchoBackend());
    await runAsk(recorder, ctx, { message: 'one' });
    await runAsk(recorder, ctx, { message: 'two', contextId: 'c-7' });
    const [first, second] = sent;
    assert.ok(first !== undefined && second !== undefined);
    assert.deepEqual(first.configuration, { returnImmediately: false });
    assert.equal(first.message.role, 'user');
    assert.deepEqual(first.message.parts, [{ kind: 'text', text: 'one' }]);
    assert.equal('contextId' in first.message, false);
    assert.equal('taskId' in first.message, false);
    assert.equal(second.message.contextId, 'c-7');
    assert.match(first.message.messageId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(first.message.messageId, second.message.messageId);
  });

  it('answers with the echo backend’s reply, and continues in the returned context', async () => {
    const tasks = service();
    const ctx = caller(createEchoBackend());
    const first = await runAsk(tasks, ctx, { message: 'Hello gateway' });
    assert.equal(first.reply, 'Hello gateway');
    assert.equal(first.state, 'completed');
    assert.ok(first.taskId.length > 0 && first.contextId.length > 0);
    const second = await runAsk(tasks, ctx, { message: 'Again', contextId: first.contextId });
    assert.equal(second.contextId, first.contextId);
    assert.notEqual(second.taskId, first.taskId);
    // The task is the caller's own, like any SendMessage task.
    const stored = await tasks.get(ctx, second.taskId);
    assert.equal(stored.history[0]?.role, 'user');
    await assert.rejects(tasks.get(caller(createEchoBackend(), 'client:b::b'), second.taskId), A2AError);
  });

  it('reports an asynchronous backend’s outcomes', async () => {
    const cases: [AgentEvent[], Partial<AskReply>][] = [
      [
        [{ type: 'text', text: 'Part one, ' }, { type: 'text', text: 'part two.', last: true }, { type: 'completed' }],
        { reply: 'Part one, part two.', state: 'completed' },
      ],
      [[{ type: 'input-required', question: 'Which city?' }], { reply: 'Which city?', state: 'input-required' }],
      [[{ type: 'rejected', reason: 'Not my job' }], { reply: 'Not my job', state: 'rejected' }],
      [
        [
          { type: 'text', text: 'partial' },
          { type: 'failed', reason: 'It broke' },
        ],
        { reply: 'It broke', state: 'failed' },
      ],
      [
        [{ type: 'message', parts: [{ kind: 'text', text: 'Direct' }] }],
        { reply: 'Direct', state: 'completed', taskId: '' },
      ],
    ];
    for (const [events, expected] of cases) {
      const result = await runAsk(service(), caller(scripted(events)), { message: 'Go', contextId: 'ctx-42' });
      assert.deepEqual({ ...result, ...expected }, result, JSON.stringify(events));
      assert.equal(result.contextId, 'ctx-42');
    }
  });

  it('a backend that throws: a failed task with a generic reason, no internals', async () => {
    const backend: AgentBackend = {
      kind: 'broken',
      // eslint-disable-next-line require-yield
      run: async function* (_turn: AgentTurn) {
        throw new Error('database password is hunter2');
      },
    };
    const result = await runAsk(service(), caller(backend), { message: 'Go' });
    assert.equal(result.state, 'failed');
    assert.ok(!result.reply.includes('hunter2'));
  });

  it('goes through admission: its refusals and the grant’s reply scrubbing apply', async () => {
    // The turn steps the ask route runs before the service: a full gateway refuses with a
    // CapacityError (503), and the grant they produce carries the reply scrubber.
    const audit = { enabled: false, scansInput: false, rejected() {}, suspicious() {}, rateLimited() {} };
    const config = { limits: LIMITS, agents: [], scrubSecrets: [] };
    const admitTurn = compose(
      createTurnContentStep<TurnCandidate>({ config, audit }),
      createInFlightStep<TurnCandidate>({ config, audit, inFlight: { tryAcquire: () => null } }),
    );
    const ctx = caller(createEchoBackend());
    let refusal: unknown;
    const full = admitTurn({
      ctx,
      message: askMessage({ message: 'x' }),
      refuseTurn: (error) => (refusal = error),
      text: '',
      grant: undefined,
    });
    assert.equal(full, REFUSED);
    assert.ok(refusal instanceof CapacityError);
    assert.equal(askErrorResponse(refusal).status, 503);

    const scrub = (text: string): string => text.replaceAll('hunter2', '[redacted]');
    const grant: TurnGrant = {
      inputChars: 0,
      release() {},
      scrubber: { scrub, stream: () => ({ push: scrub, flush: () => '' }) },
    };
    const reply = await runAsk(service(), ctx, { message: 'the password is hunter2' }, grant);
    assert.equal(reply.reply, 'the password is [redacted]');
  });

  it('passes the service’s errors on for askErrorResponse', async () => {
    const failing = {
      send: () => Promise.reject(new A2AError('INVALID_PARAMS', 'Invalid params: contextId is too long')),
    } as unknown as TaskService;
    await assert.rejects(runAsk(failing, caller(createEchoBackend()), { message: 'x' }), (error: unknown) => {
      assert.deepEqual(askErrorResponse(error), {
        status: 400,
        body: { error: { code: 400, status: 'INVALID_ARGUMENT', message: 'Invalid params: contextId is too long' } },
      });
      return true;
    });
  });
});

describe('askErrorResponse', () => {
  it('maps request errors and A2A errors to HTTP statuses', () => {
    const cases: [unknown, number, string][] = [
      [new AskRequestError('"message" is required'), 400, 'INVALID_ARGUMENT'],
      [new A2AError('INVALID_PARAMS'), 400, 'INVALID_ARGUMENT'],
      [new A2AError('INVALID_REQUEST'), 400, 'INVALID_ARGUMENT'],
      [new A2AError('JSON_PARSE'), 400, 'INVALID_ARGUMENT'],
      [new A2AError('TASK_NOT_FOUND'), 404, 'NOT_FOUND'],
      [new A2AError('UNSUPPORTED_OPERATION', 'Task is still running'), 409, 'ABORTED'],
      [new A2AError('TASK_NOT_CANCELABLE'), 409, 'ABORTED'],
    ];
    for (const [error, status, name] of cases) {
      const response = askErrorResponse(error);
      assert.equal(response.status, status);
      assert.equal(response.body.error.code, status);
      assert.equal(response.body.error.status, name);
      assert.equal(response.body.error.message, (error as Error).message);
    }
  });

  it('a capacity refusal is a 503 with Retry-After', () => {
    const error = new CapacityError(2);
    assert.deepEqual(askErrorResponse(error), {
      status: 503,
      body: { error: { code: 503, status: 'UNAVAILABLE', message: error.message } },
      headers: { 'retry-after': '2' },
    });
  });

  it('says nothing about internals for every other error', () => {
    for (const error of [
      new A2AError('INTERNAL', 'The task could not be stored: disk /var/secret full'),
      new A2AError('PUSH_NOTIFICATION_NOT_SUPPORTED'),
      new A2AError('VERSION_NOT_SUPPORTED'),
      new Error('ECONNREFUSED 10.0.0.7:5432'),
      'a string',
      undefined,
    ]) {
      assert.deepEqual(askErrorResponse(error), {
        status: 500,
        body: { error: { code: 500, status: 'INTERNAL', message: 'Internal error' } },
      });
    }
  });

  it('keeps messages on one line', () => {
    const response = askErrorResponse(new A2AError('INVALID_PARAMS', 'line one\nline two\r\n'));
    assert.equal(response.body.error.message, 'line one line two');
    assert.ok(askError(400, 'x'.repeat(1000)).body.error.message.length <= 300);
  });

  it('askError shapes the refusals made around the endpoint', () => {
    assert.deepEqual(askError(429, 'Too many requests'), {
      status: 429,
      body: { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Too many requests' } },
    });
    assert.equal(askError(401, 'x').body.error.status, 'UNAUTHENTICATED');
    assert.equal(askError(403, 'x').body.error.status, 'PERMISSION_DENIED');
    assert.equal(askError(503, 'x').body.error.status, 'UNAVAILABLE');
    assert.equal(askError(418, 'x').body.error.status, 'UNKNOWN');
  });
});
