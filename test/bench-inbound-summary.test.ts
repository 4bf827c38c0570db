/**
 * The inbound bench's target lines: the ratios round by round (each from two runs of the same
 * round), how they are described, and the floor's multiple of the SDK.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  describeRounds,
  pairedByRound,
  ratios,
  summarise,
  type RunRecord,
  type ServerKey,
} from '../bench/lib/inbound-summary.js';

function run(round: number, server: ServerKey, cpuPerRequest: number, reqPerSec: number): RunRecord {
  return {
    round,
    position: 1,
    server,
    cpuPerRequest,
    rss: 0,
    stats: { reqPerSec, p50: 1, p99: 2, requests: 1000, non2xx: 0, errors: 0, timeouts: 0 },
  };
}

const SERVERS: { key: ServerKey; label: string }[] = [
  { key: 'raw', label: 'raw' },
  { key: 'guarded', label: 'guarded' },
  { key: 'floor', label: 'floor' },
  { key: 'sdk', label: 'sdk' },
];

/**
 * One round's runs on a machine `slowdown` times slower than the first round's (every CPU figure
 * times it, every req/s over it); the every-guard row at `guarded` = [CPU µs, req/s] before that.
 */
function roundOf(round: number, slowdown: number, guarded: [number, number] = [50, 16_000]): RunRecord[] {
  const rows: [ServerKey, number, number][] = [
    ['raw', 20, 40_000],
    ['guarded', ...guarded],
    ['floor', 40, 20_000],
    ['sdk', 400, 2_000],
  ];
  return rows.map(([server, cpu, reqPerSec]) => run(round, server, cpu * slowdown, reqPerSec / slowdown));
}

// Round 2 runs on a machine twice as slow; in round 3 the every-guard row alone is slower.
const RECORDS: RunRecord[] = [...roundOf(1, 1), ...roundOf(2, 2), ...roundOf(3, 1, [80, 10_000])];

describe('bench: the inbound targets round by round', () => {
  it('pairs the two rows within each round, so a slow spell falls on both', () => {
    const cpu = pairedByRound(RECORDS, 'guarded', 'raw', (record) => 1 / record.cpuPerRequest);
    assert.deepEqual(
      cpu.map((value) => value.toFixed(2)),
      ['0.40', '0.40', '0.25'],
    );
    const multiple = pairedByRound(RECORDS, 'guarded', 'sdk', (record) => record.stats.reqPerSec);
    assert.deepEqual(multiple, [8, 8, 5]);
  });

  it('skips a round where either row is missing, and one whose figure is not a number', () => {
    const records = [...RECORDS.filter((record) => !(record.round === 2 && record.server === 'raw'))];
    records.push(run(4, 'raw', 20, 40_000), run(4, 'guarded', Number.NaN, 0));
    const cpu = pairedByRound(records, 'guarded', 'raw', (record) => 1 / record.cpuPerRequest);
    assert.equal(cpu.length, 2);
  });

  it('counts the rounds at the target and gives their range', () => {
    assert.equal(describeRounds([0.29, 0.31, 0.3], 0.3), '; rounds 0.29–0.31×, 2 of 3 at target');
    assert.equal(describeRounds([0.29], 0.3), '');
    assert.equal(describeRounds([], 0.3), '');
  });

  it('carries the per-round ratios and the floor’s multiple of the SDK in the ratios', () => {
    const result = ratios(summarise(SERVERS, RECORDS), RECORDS);
    assert.deepEqual(result.perRound.guardedToSdk, [8, 8, 5]);
    assert.deepEqual(result.perRound.guardedToRaw, [0.4, 0.4, 0.25]);
    assert.deepEqual(result.perRound.sqliteCpu, []);
    // Medians: floor 20,000 req/s, SDK 2,000.
    assert.equal(result.floorToSdk, 10);
  });

  it('keeps the per-round lists empty when no runs are given (the older call)', () => {
    const result = ratios(summarise(SERVERS, RECORDS));
    assert.deepEqual(result.perRound.guardedCpu, []);
  });
});
