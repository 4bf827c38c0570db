/**
 * The audit trail of a task, end to end over HTTP: one submitted row, then one outcome row,
 * with ids and counts, and never the message text or a credential.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryAuditSink, verifyAuditBuffer } from '../src/audit/index.js';
import {
  DEFAULT_YAML,
  rpc,
  rpcStream,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  v03Message,
  v10Message,
} from './helpers/gateway.js';

describe('task audit rows', () => {
  it('a completed task writes a2a.task.submitted then a2a.task.completed with ids and counts, and no row holds the text or a token', async () => {
    const sink = new MemoryAuditSink();
    const gw = await startGateway(DEFAULT_YAML, { auditSink: sink });
    const text = 'please keep this sentence private 4f1c';
    try {
      const sent = await rpc(`${gw.url}/a2a/echo`, 'SendMessage', { message: v10Message(text) }, { version: '1.0' });
      const task = sent.body.result.task;
      assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
      const rows = sink.events.filter((row) => row.type.startsWith('a2a.task.'));
      assert.deepEqual(
        rows.map((row) => row.type),
        ['a2a.task.submitted', 'a2a.task.completed'],
      );
      const [submitted, completed] = rows;
      const ids = { client: 'a', principalKind: 'client', agent: 'echo', taskId: task.id, contextId: task.contextId };
      assert.deepEqual(pick(submitted, Object.keys(ids)), ids);
      assert.deepEqual(pick(completed, Object.keys(ids)), ids);
      assert.equal(submitted?.outcome, 'ok');
      assert.equal(completed?.outcome, 'ok');
      assert.equal((submitted as { inputChars?: number }).inputChars, text.length);
      assert.equal((completed as { inputChars?: number }).inputChars, text.length);
      assert.equal((completed as { outputChars?: number }).outputChars, text.length, 'echo replies with the same text');

      // A streamed task of another client: outputChars counts the whole streamed reply.
      const { events } = await rpcStream(
        `${gw.url}/a2a/writer`,
        'message/stream',
        { message: v03Message('the sea') },
        { token: TOKEN_B },
      );
      const writerTask = events[0].result;
      const got = await rpc(`${gw.url}/a2a/writer`, 'tasks/get', { id: writerTask.id }, { token: TOKEN_B });
      const reply = got.body.result.artifacts[0].parts[0].text as string;
      const writerRows = sink.events.filter(
        (row) => row.type.startsWith('a2a.task.') && 'taskId' in row && row.taskId === writerTask.id,
      );
      assert.deepEqual(
        writerRows.map((row) => [row.type, 'client' in row ? row.client : undefined]),
        [
          ['a2a.task.submitted', 'b'],
          ['a2a.task.completed', 'b'],
        ],
      );
      assert.equal((writerRows[1] as { outputChars?: number }).outputChars, reply.length);

      // A refused call leaves its own row, and nothing of its token either.
      const wrongToken = 'wrong-token-that-must-not-be-logged-0123456789';
      assert.equal(
        (await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message(text) }, { token: wrongToken })).status,
        401,
      );

      const written = sink.text();
      for (const secret of [text, 'keep this sentence', 'the sea', TOKEN_A, TOKEN_B, wrongToken, reply.slice(0, 30)]) {
        assert.ok(!written.includes(secret), `the audit trail holds ${JSON.stringify(secret.slice(0, 20))}`);
      }
      assert.equal(verifyAuditBuffer(written).ok, true, 'the rows form an intact hash chain');
    } finally {
      await gw.close();
    }
  });
});

function pick(row: object | undefined, keys: string[]): Record<string, unknown> {
  const record = (row ?? {}) as Record<string, unknown>;
  return Object.fromEntries(keys.map((key) => [key, record[key]]));
}
