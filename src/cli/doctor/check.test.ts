/** The shared pieces of `airlock doctor`: line layout, the summary, URLs without passwords. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatCheckLine, reasonOf, summaryLine, withoutPassword, type CheckLine } from './check.js';

describe('doctor lines', () => {
  it('puts status and check name in columns', () => {
    assert.equal(
      formatCheckLine({ status: 'ok', check: 'config', detail: 'airlock.yaml: 1 agent, 1 client' }),
      'ok    config    airlock.yaml: 1 agent, 1 client',
    );
    assert.equal(formatCheckLine({ status: 'skip', check: 'registry', detail: 'x' }), 'skip  registry  x');
  });

  it('sums up, naming the failed checks once each', () => {
    const line = (status: CheckLine['status'], check: string): CheckLine => ({ status, check, detail: '' });
    assert.equal(summaryLine([line('ok', 'config'), line('skip', 'redis')]), 'all good: 1 ok, 1 skipped');
    assert.equal(summaryLine([line('ok', 'config'), line('warn', 'audit')]), 'all good: 1 ok, 1 warning');
    assert.equal(
      summaryLine([line('ok', 'config'), line('fail', 'registry'), line('fail', 'registry'), line('fail', 'port')]),
      '3 failed (registry, port): 1 ok',
    );
  });

  it('never shows a password, a query or a fragment', () => {
    assert.equal(withoutPassword('redis://app:secret@cache:6379/0?password=x#y'), 'redis://app@cache:6379/0');
    assert.equal(withoutPassword('rediss://:secret@cache:6380'), 'rediss://cache:6380');
    assert.equal(withoutPassword('not a url'), '(unparseable URL)');
  });

  it('reasons: a system code, else the first line of the message', () => {
    assert.equal(
      reasonOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })),
      'ECONNREFUSED',
    );
    assert.equal(reasonOf(new Error('file is not a database\nstack')), 'file is not a database');
  });
});
