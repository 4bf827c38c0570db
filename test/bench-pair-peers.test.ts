/**
 * `bench:pair --peers`: the targets read round by round against raw, the floor and the SDK. The
 * point of the reading is that a slow round of the machine, which slows every server in it, moves
 * no ratio; a median of separate medians would.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  flatness,
  GUARDED_FLOOR,
  peerReading,
  renderPeerTable,
  roundRatios,
  type RoundFigures,
} from '../bench/lib/pair-peers.js';

/** Figures for `rounds` rounds, each round's machine `slowdown[r]` times slower (CPU up, req/s down). */
function server(cpu: number, reqPerSec: number, slowdown: readonly number[]): RoundFigures {
  return { cpu: slowdown.map((factor) => cpu * factor), reqPerSec: slowdown.map((factor) => reqPerSec / factor) };
}

describe('bench:pair --peers', () => {
  it('takes each ratio within a round, so a slow round moves no ratio', () => {
    // The third round ran at half speed for everyone: the ratios stay what they are.
    const slowdown = [1, 1.1, 2, 1, 0.9];
    const reading = peerReading(server(50, 20_000, slowdown), {
      raw: server(25, 40_000, slowdown),
      floor: server(45, 22_000, slowdown),
      sdk: server(400, 3_000, slowdown),
    });
    for (const ratio of reading.vsRaw.rounds) assert.ok(Math.abs(ratio - 0.5) < 1e-9);
    assert.ok(Math.abs(reading.vsRaw.median - 0.5) < 1e-9);
    assert.equal(reading.vsRaw.atTarget, 5);
    assert.ok(reading.vsFloor !== undefined);
    assert.ok(Math.abs(reading.vsFloor.median - 0.9) < 1e-9);
    assert.ok(reading.overSdk !== undefined);
    assert.ok(Math.abs(reading.overSdk.median - 20_000 / 3_000) < 1e-9);
    assert.equal(reading.overSdk.atTarget, 5);
  });

  it('counts the rounds at each target, the SDK multiple in req/s', () => {
    const reading = peerReading(
      { cpu: [50, 60, 40], reqPerSec: [12_000, 17_000, 18_500] },
      {
        raw: { cpu: [25, 25, 25], reqPerSec: [40_000, 40_000, 40_000] },
        floor: { cpu: [45, 45, 45], reqPerSec: [20_000, 20_000, 20_000] },
        sdk: { cpu: [400, 400, 400], reqPerSec: [3_000, 3_000, 3_000] },
      },
    );
    assert.deepEqual(reading.vsRaw.rounds, [0.5, 25 / 60, 0.625]);
    assert.deepEqual(reading.reqVsRaw.rounds, [0.3, 17_000 / 40_000, 18_500 / 40_000]);
    assert.equal(reading.reqVsRaw.atTarget, 1);
    assert.equal(reading.reqVsRaw.target, 0.45);
    assert.equal(reading.vsRaw.atTarget, 2);
    assert.equal(reading.vsRaw.target, 0.5);
    assert.equal(reading.vsRaw.median, 0.5);
    assert.ok(reading.overSdk !== undefined);
    assert.deepEqual(reading.overSdk.rounds, [4, 17_000 / 3_000, 18_500 / 3_000]);
    assert.equal(reading.overSdk.atTarget, 1);
    assert.equal(reading.overSdk.target, 6);
  });

  it('reads the SQLite row against its own target, with no SDK column', () => {
    const reading = peerReading(
      { cpu: [80, 90], reqPerSec: [11_000, 10_000] },
      { raw: { cpu: [25, 25], reqPerSec: [40_000, 40_000] }, floor: { cpu: [60, 60], reqPerSec: [14_000, 14_000] } },
      0.3,
    );
    assert.deepEqual(reading.vsRaw.rounds, [25 / 80, 25 / 90]);
    assert.equal(reading.vsRaw.target, 0.3);
    assert.equal(reading.vsRaw.atTarget, 1);
    assert.equal(reading.overSdk, undefined);
  });

  it('reads the PostgreSQL row with raw alone: no floor, no SDK', () => {
    const reading = peerReading(
      { cpu: [100, 75], reqPerSec: [6_000, 7_000] },
      { raw: { cpu: [25, 25], reqPerSec: [40_000, 40_000] } },
      0.3,
    );
    assert.deepEqual(reading.vsRaw.rounds, [0.25, 25 / 75]);
    assert.equal(reading.vsRaw.atTarget, 1);
    assert.equal(reading.vsFloor, undefined);
    assert.equal(reading.overSdk, undefined);
  });

  it('prints the columns the row has: every target for the every-guard row, raw alone for PostgreSQL', () => {
    const raw = { name: 'raw', figures: { cpu: [25, 25], reqPerSec: [40_000, 40_000] } };
    const head = { name: 'head', figures: { cpu: [50, 100], reqPerSec: [20_000, 10_000] } };
    const floor = { name: 'floor', figures: { cpu: [40, 40], reqPerSec: [25_000, 25_000] } };
    const sdk = { name: 'sdk', figures: { cpu: [300, 300], reqPerSec: [3_000, 3_000] } };
    const guarded = renderPeerTable([head, raw, floor, sdk], 0.5, true).split('\n');
    assert.match(
      guarded[0]!,
      /raw\/it CPU .*rounds ≥ 0\.5× .*it\/raw req\/s .*rounds ≥ 0\.45× .*floor\/it CPU .*req\/s over the SDK/,
    );
    // head: CPU ratios 0.5 and 0.25 (median 0.375), req/s ratios 0.5 and 0.25, one round at each target.
    const headLine = guarded.find((line) => line.startsWith('head'))!;
    assert.match(headLine, /0\.38× \(0\.25–0\.50×\)\s+1 of 2\s+0\.38× \(0\.25–0\.50×\)\s+1 of 2/);
    assert.ok(guarded.some((line) => line.startsWith('floor')));
    assert.ok(!guarded.some((line) => /^(raw|sdk)\b/.test(line)), 'the peers are not judged against themselves');
    const postgres = renderPeerTable([head, raw], 0.3, false).split('\n');
    assert.doesNotMatch(postgres[0]!, /req\/s|floor|SDK/);
    assert.match(
      postgres.find((line) => line.startsWith('head'))!,
      /0\.38× \(0\.25–0\.50×\)\s+1 of 2\s*$/,
    );
    assert.throws(() => renderPeerTable([head], 0.3, false), /raw is not among/);
  });

  it('gives no flatness figure for fresh processes, whose rounds are each a process of its own', () => {
    const raw = {
      name: 'raw',
      figures: { cpu: [25, 25, 25, 25, 25], reqPerSec: [40_000, 40_000, 40_000, 40_000, 40_000] },
    };
    const head = {
      name: 'head',
      figures: { cpu: [50, 50, 50, 50, 50], reqPerSec: [20_000, 20_000, 20_000, 20_000, 10_000] },
    };
    const kept = renderPeerTable([head, raw], 0.5, true).split('\n');
    assert.match(
      kept.find((line) => line.startsWith('head'))!,
      /0\.50×\s*$/,
    );
    const fresh = renderPeerTable([head, raw], 0.5, true, { fresh: true }).split('\n');
    assert.match(fresh[0]!, /last\/first fifth/);
    const headLine = fresh.find((line) => line.startsWith('head'))!;
    assert.match(headLine, /— \(fresh processes\)\s*$/);
    assert.doesNotMatch(headLine, /0\.50×\s*$/);
  });

  it('reads each build against the guarded floor, and the guarded floor against the floor', () => {
    const raw = { name: 'raw', figures: { cpu: [25, 25], reqPerSec: [40_000, 40_000] } };
    const head = { name: 'head', figures: { cpu: [60, 60], reqPerSec: [16_000, 16_000] } };
    const floor = { name: 'floor', figures: { cpu: [40, 40], reqPerSec: [25_000, 25_000] } };
    const guardedFloor = { name: GUARDED_FLOOR, figures: { cpu: [48, 48], reqPerSec: [21_000, 21_000] } };
    const reading = peerReading(head.figures, {
      raw: raw.figures,
      floor: floor.figures,
      guardedFloor: guardedFloor.figures,
    });
    assert.ok(reading.vsGuardedFloor !== undefined);
    assert.deepEqual(reading.vsGuardedFloor.rounds, [0.8, 0.8]);
    assert.equal(peerReading(head.figures, { raw: raw.figures }).vsGuardedFloor, undefined);
    const lines = renderPeerTable([head, raw, floor, guardedFloor], 0.5, true).split('\n');
    assert.match(lines[0]!, /floor\/it CPU +guarded floor\/it CPU/);
    // head: floor/it 40/60, guarded floor/it 48/60.
    assert.match(
      lines.find((line) => line.startsWith('head'))!,
      /0\.67×\s+0\.80×\s*$/,
    );
    // The guarded floor is read against the floor (the guards' share), not against itself.
    assert.match(
      lines.find((line) => line.startsWith(GUARDED_FLOOR))!,
      /0\.83×\s*$/,
    );
  });

  it('reads flatness against raw: a machine slowing down moves nothing, a build slowing down does', () => {
    // Ten rounds; the machine halves its speed over the run, for every server alike.
    const drift = Array.from({ length: 10 }, (_, round) => 1 + round / 9);
    const steady = peerReading(server(50, 20_000, drift), { raw: server(25, 40_000, drift) });
    assert.equal(steady.flat.rounds, 2);
    assert.ok(Math.abs(steady.flat.ratio - 1) < 1e-9);
    // The build alone loses a fifth of its throughput in its last rounds (a store that slows as it fills).
    const build = server(50, 20_000, drift);
    const slowing = {
      cpu: build.cpu,
      reqPerSec: build.reqPerSec.map((value, round) => (round >= 8 ? value * 0.8 : value)),
    };
    const reading = peerReading(slowing, { raw: server(25, 40_000, drift) });
    assert.ok(Math.abs(reading.flat.ratio - 0.8) < 1e-9);
    assert.ok(reading.flat.ratio < reading.flat.target);
    // A short run compares one round at each end; the middle of a long one is not read.
    assert.deepEqual(flatness([0.4, 0.3]), { rounds: 1, first: 0.4, last: 0.3, ratio: 0.3 / 0.4, target: 0.9 });
    assert.equal(flatness([0.4, 0.4, 0.4, 0.4, 0.4, 0.1, 0.4, 0.4, 0.4, 0.4]).ratio, 1);
  });

  it('leaves out a round whose reading failed rather than counting it as a miss', () => {
    assert.deepEqual(roundRatios([20, 20, 20], [40, Number.NaN, 50]), [0.5, 0.4]);
    assert.deepEqual(roundRatios([20, Number.NaN], [40, 40]), [0.5]);
    assert.deepEqual(roundRatios([20, 20], [0, 40]), [0.5]);
    // Rounds beyond the shorter list are not invented.
    assert.deepEqual(roundRatios([20, 20, 20], [40]), [0.5]);
  });
});
