import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Task } from '../../protocol/model.js';
import { TaskStoreInputError } from './errors.js';
import { statusMsOf } from './page-token.js';

function taskAt(timestamp: string): Task {
  return { id: 't1', contextId: 'c1', status: { state: 'completed', timestamp }, history: [], artifacts: [] };
}

describe('statusMsOf', () => {
  it('gives each timestamp its own time, the remembered one included', () => {
    const first = '2026-12-06T21:00:00.000Z';
    const second = '2026-12-06T21:00:00.001Z';
    for (const timestamp of [first, first, second, first, second, second]) {
      assert.equal(statusMsOf(taskAt(timestamp), 'Store'), Date.parse(timestamp));
    }
    // An equal string that is another object is the same timestamp.
    assert.equal(statusMsOf(taskAt(['2026-12-06T21:00:00', '.001Z'].join('')), 'Store'), Date.parse(second));
  });

  it('refuses a timestamp that is not a date, right after a good one too, with invalid_timestamp', () => {
    const good = '2026-12-06T21:00:00.000Z';
    assert.equal(statusMsOf(taskAt(good), 'Store'), Date.parse(good));
    for (const bad of ['yesterday-ish', '2026-13-45T99:99:99.999Z', '']) {
      assert.throws(
        () => statusMsOf(taskAt(bad), 'SqliteTaskStore'),
        (error: unknown) =>
          error instanceof TaskStoreInputError &&
          error.code === 'invalid_timestamp' &&
          error.message === 'SqliteTaskStore: task.status.timestamp is not a date',
      );
      // A refusal is not remembered: the good one still parses to its time, and the bad one fails again.
      assert.equal(statusMsOf(taskAt(good), 'Store'), Date.parse(good));
      assert.throws(() => statusMsOf(taskAt(bad), 'Store'), TaskStoreInputError);
    }
  });
});
