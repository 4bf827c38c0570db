import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

import { collect, fakeTurn } from '../../test/helpers/agent-turn.js';
import type { Part } from '../protocol/model.js';
import type { AgentEvent, AgentTurn } from './backend.js';
import { createConformanceBackend } from './conformance.js';
import { createBackend } from './registry.js';

// ---------------------------------------------------------------------------------------------
// A fake turn, as the executor bridge would build it, and a collector for a whole turn.

interface TurnInit {
  text?: string;
  parts?: Part[];
  resumed?: boolean;
  signal?: AbortSignal;
}

function newTurn(messageId: string, init: TurnInit = {}): AgentTurn {
  return fakeTurn({ messageId, text: 'TCK prerequisite task creation', ...init });
}

/** The session suffix the 1.0-dev TCK appends to every messageId (`tck_id`). */
const RUN = '3f9a1c0e';

const FILE_BASE64 = Buffer.from('Generated file content', 'utf8').toString('base64');

function textArtifact(name: string, text: string): AgentEvent {
  return { type: 'artifact', artifact: { name, parts: [{ kind: 'text', text }] } };
}

const WORKING_NO_TEXT: AgentEvent = { type: 'working' };
const COMPLETED: AgentEvent = { type: 'completed' };

// ---------------------------------------------------------------------------------------------

describe('conformance backend: 1.0-dev scenarios by messageId prefix', () => {
  const backend = createConformanceBackend({ resubscribeHoldMs: 30 });

  const table: Array<[prefix: string, expected: AgentEvent[]]> = [
    ['tck-complete-task', [{ type: 'completed', text: 'Hello from TCK' }]],
    ['tck-artifact-text', [textArtifact('text-artifact', 'Generated text content'), COMPLETED]],
    [
      'tck-artifact-file',
      [
        {
          type: 'artifact',
          artifact: {
            name: 'file-artifact',
            parts: [{ kind: 'raw', raw: FILE_BASE64, filename: 'output.txt', mediaType: 'text/plain' }],
          },
        },
        COMPLETED,
      ],
    ],
    [
      'tck-artifact-file-url',
      [
        {
          type: 'artifact',
          artifact: {
            name: 'file-url-artifact',
            parts: [
              {
                kind: 'url',
                url: 'https://example.com/output.txt',
                filename: 'output.txt',
                mediaType: 'text/plain',
              },
            ],
          },
        },
        COMPLETED,
      ],
    ],
    [
      'tck-artifact-data',
      [
        {
          type: 'artifact',
          artifact: {
            name: 'data-artifact',
            parts: [{ kind: 'data', data: { key: 'value', count: 42 } }],
          },
        },
        COMPLETED,
      ],
    ],
    ['tck-message-response', [{ type: 'message', parts: [{ kind: 'text', text: 'Direct message response' }] }]],
    ['tck-input-required', [{ type: 'input-required', question: 'Please provide input' }]],
    ['tck-reject-task', [{ type: 'rejected', reason: 'rejected' }]],
    ['tck-stream-001', [WORKING_NO_TEXT, textArtifact('stream-text-artifact', 'Stream hello from TCK'), COMPLETED]],
    ['tck-stream-002', [COMPLETED]],
    ['tck-stream-003', [WORKING_NO_TEXT, textArtifact('stream-text-artifact', 'Stream task lifecycle'), COMPLETED]],
    ['tck-stream-ordering-001', [WORKING_NO_TEXT, textArtifact('stream-text-artifact', 'Ordered output'), COMPLETED]],
    [
      'tck-stream-artifact-text',
      [WORKING_NO_TEXT, textArtifact('stream-text-artifact', 'Streamed text content'), COMPLETED],
    ],
    [
      'tck-stream-artifact-file',
      [
        WORKING_NO_TEXT,
        {
          type: 'artifact',
          artifact: {
            name: 'stream-file-artifact',
            parts: [{ kind: 'raw', raw: FILE_BASE64, filename: 'output.txt', mediaType: 'text/plain' }],
          },
        },
        COMPLETED,
      ],
    ],
    [
      'tck-stream-artifact-chunked',
      [WORKING_NO_TEXT, { type: 'text', text: 'chunk-1 ' }, { type: 'text', text: 'chunk-2', last: true }, COMPLETED],
    ],
    ['test-resubscribe-message-id', [{ type: 'working', text: 'Holding the task open for resubscription' }, COMPLETED]],
  ];

  for (const [prefix, expected] of table) {
    it(`${prefix} → ${expected.map((event) => event.type).join(' → ')}`, async () => {
      assert.deepEqual(await collect(backend, newTurn(`${prefix}-${RUN}`)), expected);
    });
  }

  it('matches the longest prefix: tck-artifact-file-url is not a tck-artifact-file', async () => {
    const [first] = await collect(backend, newTurn(`tck-artifact-file-url-${RUN}`));
    assert.ok(first?.type === 'artifact');
    assert.equal(first.artifact.parts[0]?.kind, 'url');
  });

  it('matches a bare prefix with no suffix', async () => {
    assert.deepEqual(await collect(backend, newTurn('tck-stream-002')), [COMPLETED]);
  });

  it('names every artifact it emits', async () => {
    for (const [prefix] of table) {
      for (const event of await collect(backend, newTurn(`${prefix}-${RUN}`))) {
        if (event.type === 'artifact') assert.ok(event.artifact.name, `${prefix} artifact has a name`);
      }
    }
  });

  it('sends file bytes as valid base64', async () => {
    const [first] = await collect(backend, newTurn(`tck-artifact-file-${RUN}`));
    assert.ok(first?.type === 'artifact');
    const part = first.artifact.parts[0];
    assert.ok(part?.kind === 'raw');
    assert.equal(Buffer.from(part.raw, 'base64').toString('base64'), part.raw);
  });

  it('builds fresh events per turn', async () => {
    const one = await collect(backend, newTurn(`tck-artifact-data-${RUN}`));
    const two = await collect(backend, newTurn(`tck-artifact-data-${RUN}`));
    assert.deepEqual(one, two);
    assert.notEqual(one[0], two[0]);
  });

  it('keeps asking for input on a resumed tck-input-required turn (TCK resumes it twice)', async () => {
    const events = await collect(backend, newTurn(`tck-input-required-${RUN}`, { resumed: true }));
    assert.deepEqual(events, [{ type: 'input-required', question: 'Please provide input' }]);
  });

  it('completes a resumed task with a tck-complete-task follow-up', async () => {
    const events = await collect(backend, newTurn(`tck-complete-task-${RUN}`, { resumed: true }));
    assert.deepEqual(events, [{ type: 'completed', text: 'Hello from TCK' }]);
  });

  it('echoes and completes any other tck- message', async () => {
    const events = await collect(backend, newTurn(`tck-infer-ctx-${RUN}`, { text: 'Follow-up message' }));
    assert.deepEqual(events, [{ type: 'text', text: 'Follow-up message', last: true }, COMPLETED]);
  });

  it('echoes "(no text)" for a tck- message without text', async () => {
    const turn = newTurn(`tck-dm-test-001-${RUN}`, { parts: [{ kind: 'data', data: { a: 1 } }] });
    assert.deepEqual(await collect(backend, turn), [{ type: 'completed', text: '(no text)' }]);
  });
});

describe('conformance backend: 0.3.x messages stay open', () => {
  const backend = createConformanceBackend();
  // messageIds as the 0.3.x suite builds them (generate_test_message_id, f"msg-{id}", literals).
  const v03Ids = [
    'cancel-test-message-id-0b8e1f5c-7f55-4a53-9b53-5f8f1f2b8d11',
    'test-state-message-id-0b8e1f5c-7f55-4a53-9b53-5f8f1f2b8d11',
    'msg-tck-6a1d',
    'auth-test-msg-42',
  ];

  for (const messageId of v03Ids) {
    it(`${messageId} → working → input-required`, async () => {
      const events = await collect(backend, newTurn(messageId, { text: 'Task for cancel test' }));
      assert.equal(events.length, 2);
      assert.equal(events[0]?.type, 'working');
      const last = events[1];
      assert.ok(last?.type === 'input-required');
      assert.match(last.question, /Task for cancel test/);
    });
  }

  it('stays open on every follow-up, so the suite can continue and cancel the task', async () => {
    for (let i = 1; i <= 3; i++) {
      const turn = newTurn(`test-history-message-${i}-0b8e1f5c`, {
        resumed: true,
        text: `Follow-up ${i}`,
      });
      const events = await collect(backend, turn);
      assert.deepEqual(
        events.map((event) => event.type),
        ['working', 'input-required'],
      );
    }
  });

  it('uses no timer: a turn finishes at once', async () => {
    const startedAt = performance.now();
    await collect(backend, newTurn('test-message-id-1'));
    assert.ok(performance.now() - startedAt < 50);
  });
});

describe('conformance backend: resubscription hold and cancellation', () => {
  it('holds test-resubscribe tasks working for resubscribeHoldMs', async () => {
    const holdMs = 80;
    const backend = createConformanceBackend({ resubscribeHoldMs: holdMs });
    const iterator = backend.run(newTurn('test-resubscribe-message-id-5e1d'))[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.value?.type, 'working');
    const workingAt = performance.now();
    const second = await iterator.next();
    assert.deepEqual(second.value, COMPLETED);
    assert.ok(performance.now() - workingAt >= holdMs - 2);
    assert.equal((await iterator.next()).done, true);
  });

  it('defaults to a 4 s hold and ends within ~50 ms of an abort, without an outcome', async () => {
    const controller = new AbortController();
    const backend = createConformanceBackend();
    const run = backend.run(newTurn('test-resubscribe-message-id-5e1d', { signal: controller.signal }));
    const iterator = run[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).value?.type, 'working');
    const pending = iterator.next();
    await delay(50); // well into the hold
    const abortedAt = performance.now();
    controller.abort();
    const result = await pending;
    const elapsed = performance.now() - abortedAt;
    assert.equal(result.done, true);
    assert.ok(elapsed < 50, `ended ${elapsed.toFixed(1)} ms after abort`);
  });

  it('yields no outcome when aborted between the events of a fixed scenario', async () => {
    const controller = new AbortController();
    const backend = createConformanceBackend();
    const events: AgentEvent[] = [];
    for await (const event of backend.run(newTurn(`tck-stream-001-${RUN}`, { signal: controller.signal }))) {
      events.push(event);
      controller.abort();
    }
    assert.deepEqual(events, [WORKING_NO_TEXT]);
  });

  it('yields nothing when the turn is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const backend = createConformanceBackend();
    for (const messageId of [`tck-complete-task-${RUN}`, `tck-other-${RUN}`, 'test-message-id-1']) {
      assert.deepEqual(await collect(backend, newTurn(messageId, { signal: controller.signal })), []);
    }
  });

  it('is built from config with its hold', async () => {
    const backend = createBackend({ type: 'conformance', resubscribeHoldMs: 40 });
    const startedAt = performance.now();
    const events = await collect(backend, newTurn('test-resubscribe-message-id-x'));
    assert.deepEqual(
      events.map((event) => event.type),
      ['working', 'completed'],
    );
    const elapsed = performance.now() - startedAt;
    assert.ok(elapsed >= 38 && elapsed < 1000, `took ${elapsed.toFixed(1)} ms`);
  });
});
