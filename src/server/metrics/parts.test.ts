import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { auditTime, AuditWriteError, type AuditEvent, type AuditSink } from '../../audit/index.js';
import type { Task } from '../../protocol/model.js';
import { MemoryTaskStore } from '../../tasks/stores/memory.js';
import type { TaskStore } from '../../tasks/store.js';
import { MAX_TIMED_TASKS, meteredAuditSink } from './audit-sink.js';
import { bearerMatches } from './listener.js';
import { outcomeOf } from './requests.js';
import { errorOutcome } from '../rpc.js';
import { A2AError } from '../../protocol/errors.js';
import { v03 } from '../../protocol/v03/index.js';
import { v10 } from '../../protocol/v10/index.js';
import { createSeries, type MetricSeries } from './series.js';
import { timedStore } from './store.js';

/** The sample `name{labels}` (exactly those labels) in the exposition text, or undefined. */
async function value(
  series: MetricSeries,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  for (const line of (await series.registry.metrics()).split('\n')) {
    const match = /^([^{ ]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const got = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const wanted = Object.entries(labels);
    if (Object.keys(got).length === wanted.length && wanted.every(([k, v]) => got[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe("the request meter's labels", () => {
  it('an error outcome names the code its body carries, so nothing parses the body back', () => {
    for (const dialect of [v03, v10]) {
      for (const error of [new A2AError('TASK_NOT_FOUND'), new A2AError('INTERNAL'), new Error('boom')]) {
        const outcome = errorOutcome(7, dialect, error);
        assert.equal(outcome.kind, 'json');
        if (outcome.kind !== 'json') continue;
        const body = JSON.parse(outcome.body) as { error: { code: number } };
        assert.equal(outcome.errorCode, body.error.code);
      }
    }
  });

  it('outcomeOf: 4xx and 503 refused, other 5xx errors, else what the route answered', () => {
    assert.equal(outcomeOf(401, 'ok'), 'refused');
    assert.equal(outcomeOf(503, 'ok'), 'refused');
    assert.equal(outcomeOf(500, 'ok'), 'error');
    assert.equal(outcomeOf(200, 'refused'), 'refused');
    assert.equal(outcomeOf(200, 'ok'), 'ok');
  });
});

describe('bearerMatches', () => {
  const token = 'metrics-token-0123456789abcdef0123456789';
  const digest = createHash('sha256').update(token).digest();
  it('accepts the token and nothing else', () => {
    assert.equal(bearerMatches(`Bearer ${token}`, digest), true);
    assert.equal(bearerMatches(`bearer ${token}`, digest), true);
    assert.equal(bearerMatches(undefined, digest), false);
    assert.equal(bearerMatches(token, digest), false);
    assert.equal(bearerMatches(`Basic ${token}`, digest), false);
    assert.equal(bearerMatches(`Bearer ${token}x`, digest), false);
    assert.equal(bearerMatches(`Bearer ${token.slice(1)}`, digest), false);
    assert.equal(bearerMatches(`Bearer ${'x'.repeat(5000)}`, digest), false);
  });
});

describe('timedStore', () => {
  const task = (id: string): Task =>
    ({
      id,
      contextId: 'c',
      status: { state: 'completed', timestamp: new Date().toISOString() },
      history: [],
      artifacts: [],
    }) as unknown as Task;

  it('times each operation by kind and counts failures, passing results and errors through', async () => {
    const series = createSeries({ defaultMetrics: false });
    const store = timedStore(new MemoryTaskStore(), 'memory', series);
    await store.put('o', task('t-1'));
    assert.equal((await store.get('o', 't-1'))?.id, 't-1');
    assert.equal(
      await value(series, 'airlock_store_operation_seconds_count', { store: 'memory', operation: 'put' }),
      1,
    );
    assert.equal(
      await value(series, 'airlock_store_operation_seconds_count', { store: 'memory', operation: 'get' }),
      1,
    );
    const failing = timedStore(
      { get: () => Promise.reject(new Error('down')), close: () => Promise.resolve() } as unknown as TaskStore,
      'postgres',
      series,
    );
    await assert.rejects(failing.get('o', 'x'), /down/);
    assert.equal(await value(series, 'airlock_store_errors_total', { store: 'postgres', operation: 'get' }), 1);
    // A store that throws rather than rejects: the same rejected promise, counted.
    const throwing = timedStore(
      {
        get: () => {
          throw new Error('sync');
        },
        close: () => Promise.resolve(),
      } as unknown as TaskStore,
      'postgres',
      series,
    );
    await assert.rejects(throwing.get('o', 'x'), /sync/);
    assert.equal(await value(series, 'airlock_store_errors_total', { store: 'postgres', operation: 'get' }), 2);
    // Optional members pass through as they are (restart safety looks for failRunning).
    assert.equal(Reflect.get(store, 'failRunning'), undefined);
    await store.close();
  });
});

describe('meteredAuditSink', () => {
  const row = (type: 'a2a.task.submitted' | 'a2a.task.completed', taskId: string): AuditEvent =>
    type === 'a2a.task.submitted'
      ? { type, time: auditTime(), outcome: 'ok', client: 'a', agent: 'echo', taskId, contextId: 'c', inputChars: 1 }
      : { type, time: auditTime(), outcome: 'ok', client: 'a', agent: 'echo', taskId, contextId: 'c', outputChars: 1 };

  it('a row its sink could not write is not counted, and the error reaches the caller', async () => {
    const series = createSeries({ defaultMetrics: false });
    const broken: AuditSink = {
      write: () => {
        throw new AuditWriteError('write', 'io', 'disk full');
      },
      close: () => undefined,
    };
    const sink = meteredAuditSink(series, new Set(['echo']), broken);
    assert.throws(() => sink.write(row('a2a.task.submitted', 't')), AuditWriteError);
    assert.equal(await value(series, 'airlock_audit_write_errors_total'), 1);
    assert.equal(await value(series, 'airlock_audit_rows_total', { type: 'a2a.task.submitted' }), undefined);
    assert.equal(
      await value(series, 'airlock_task_transitions_total', { agent: 'echo', state: 'submitted' }),
      undefined,
    );
  });

  it('observes durations from submitted to final, and forgets the oldest start past its bound', async () => {
    const series = createSeries({ defaultMetrics: false });
    let now = 0;
    const written: AuditEvent[] = [];
    const sink = meteredAuditSink(
      series,
      new Set(['echo']),
      { write: (e) => written.push(e), close: () => undefined },
      () => now,
    );
    sink.write(row('a2a.task.submitted', 'first'));
    for (let i = 0; i < MAX_TIMED_TASKS; i++) sink.write(row('a2a.task.submitted', `t-${i}`));
    now = 2_000;
    sink.write(row('a2a.task.completed', 'first'));
    sink.write(row('a2a.task.completed', 't-0'));
    assert.equal(written.length, MAX_TIMED_TASKS + 3);
    assert.equal(await value(series, 'airlock_task_duration_seconds_count', { agent: 'echo', state: 'completed' }), 1);
    assert.equal(await value(series, 'airlock_task_transitions_total', { agent: 'echo', state: 'completed' }), 2);
    assert.equal(await value(series, 'airlock_audit_write_seconds_count'), MAX_TIMED_TASKS + 3);
  });
});

describe('fast counters and histograms', () => {
  it('render as prom-client would: cumulative buckets (le inclusive), sum, count; counts by label values', async () => {
    const series = createSeries({ defaultMetrics: false });
    series.storeSeconds.observe(0.002, 'memory', 'put');
    series.storeSeconds.observe(0.5, 'memory', 'put');
    series.storeSeconds.observe(9, 'memory', 'put');
    const put = { store: 'memory', operation: 'put' };
    assert.equal(await value(series, 'airlock_store_operation_seconds_bucket', { ...put, le: '0.001' }), 0);
    assert.equal(await value(series, 'airlock_store_operation_seconds_bucket', { ...put, le: '0.0025' }), 1);
    assert.equal(await value(series, 'airlock_store_operation_seconds_bucket', { ...put, le: '0.5' }), 2);
    assert.equal(await value(series, 'airlock_store_operation_seconds_bucket', { ...put, le: '2.5' }), 2);
    assert.equal(await value(series, 'airlock_store_operation_seconds_bucket', { ...put, le: '+Inf' }), 3);
    assert.equal(await value(series, 'airlock_store_operation_seconds_sum', put), 9.502);
    assert.equal(await value(series, 'airlock_store_operation_seconds_count', put), 3);
    series.refusals.inc('echo', 'auth', 'invalid_credentials');
    series.refusals.inc('echo', 'auth', 'invalid_credentials');
    series.refusals.inc('none', 'gate', 'address_not_allowed');
    assert.equal(
      await value(series, 'airlock_refusals_total', { agent: 'echo', class: 'auth', reason: 'invalid_credentials' }),
      2,
    );
    assert.equal(
      await value(series, 'airlock_refusals_total', { agent: 'none', class: 'gate', reason: 'address_not_allowed' }),
      1,
    );
    // Scraped twice: totals, not doubled.
    assert.equal(
      await value(series, 'airlock_refusals_total', { agent: 'echo', class: 'auth', reason: 'invalid_credentials' }),
      2,
    );
    assert.match(await series.registry.metrics(), /# TYPE airlock_store_operation_seconds histogram\n/);
  });

  it('a child is the same series as its label values; values that would join alike stay apart', async () => {
    const series = createSeries({ defaultMetrics: false });
    const child = series.refusals.child('echo', 'auth', 'invalid_credentials');
    child.inc();
    series.refusals.inc('echo', 'auth', 'invalid_credentials');
    assert.equal(
      await value(series, 'airlock_refusals_total', { agent: 'echo', class: 'auth', reason: 'invalid_credentials' }),
      2,
    );
    // No string is built from the values: 'a\u0000b' + 'c' is not 'a' + 'b\u0000c'.
    series.requests.inc('a\u0000b', 'c', 'send', '1.0', 'ok');
    series.requests.inc('a', 'b\u0000c', 'send', '1.0', 'ok');
    const text = await series.registry.metrics();
    assert.equal(text.split('\n').filter((line) => line.startsWith('airlock_requests_total{')).length, 2);
    // A child made but never counted shows nothing (a counter); a histogram's shows its zeros.
    series.toolCalls.child('echo', 'ok', 'none');
    assert.doesNotMatch(await series.registry.metrics(), /airlock_tool_calls_total\{/);
    series.storeSeconds.child('memory', 'list').observe(0.001);
    assert.equal(
      await value(series, 'airlock_store_operation_seconds_count', { store: 'memory', operation: 'list' }),
      1,
    );
  });
});
