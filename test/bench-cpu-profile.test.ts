/**
 * `bench:profile`: a CPU profile read for the window of the load only, per request, split by
 * where the code lives. The point is that samples outside the window (start-up, warm-up,
 * shutdown) count for nothing, and that each sample lands in one part.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { largestDifferences, placeOf, splitProfile, type CpuProfile } from '../bench/lib/cpu-profile.js';

const ROOT = '/repo/';
const OPTIONS = { root: ROOT, ownPrefixes: ['dist/', 'node_modules/.cache/peers/'] };

function frame(id: number, functionName: string, url: string): CpuProfile['nodes'][number] {
  return { id, callFrame: { functionName, url, lineNumber: 9 } };
}

/** A profile starting at 1,000 µs whose samples are `[node, delta]` in order. */
function profileOf(samples: readonly (readonly [number, number])[]): CpuProfile {
  return {
    nodes: [
      frame(1, '(root)', ''),
      frame(2, 'appendRow', 'file:///repo/dist/audit/chain.js'),
      frame(3, 'decodeRpc', 'file:///repo/dist/server/rpc.js'),
      frame(4, 'writevGeneric', 'node:internal/stream_base_commons'),
      frame(5, 'writev', ''),
      frame(6, '(garbage collector)', ''),
      frame(7, '(idle)', ''),
      frame(8, 'parse', 'file:///repo/node_modules/yaml/dist/index.js'),
      frame(9, '(program)', ''),
      frame(10, 'complete', 'file:///repo/node_modules/.cache/peers/bench/peers/floor-http.js'),
    ],
    startTime: 1_000,
    samples: samples.map(([node]) => node),
    timeDeltas: samples.map(([, delta]) => delta),
  };
}

describe('bench:profile', () => {
  it('counts only the samples inside the windows, per request, each in its part', () => {
    // Sample times: 1100 (before), then 1200..1900 inside two windows meeting at 1450, then 2100 (after).
    const profile = profileOf([
      [8, 100], // 1100: start-up parsing, outside
      [2, 100], // 1200
      [2, 100], // 1300
      [3, 100], // 1400
      [4, 100], // 1500
      [5, 100], // 1600
      [6, 100], // 1700
      [7, 100], // 1800: idle
      [9, 100], // 1900
      [2, 200], // 2100: shutdown, outside
    ]);
    const split = splitProfile(
      profile,
      [
        { fromMicros: 1_150, toMicros: 1_450 },
        { fromMicros: 1_450, toMicros: 2_000 },
      ],
      10,
      OPTIONS,
    );
    assert.equal(split.parts.own, 30); // appendRow 200 + decodeRpc 100, over 10 requests
    assert.equal(split.parts.node, 10);
    assert.equal(split.parts.native, 10);
    assert.equal(split.parts.collector, 10);
    assert.equal(split.parts.program, 10);
    assert.equal(split.parts.dependencies, 0);
    assert.equal(split.idle, 10);
    assert.equal(split.samples, 8);
    assert.equal(split.busy, 70);
    assert.deepEqual(split.folders, [
      { folder: 'audit/chain.js', micros: 20 },
      { folder: 'server/rpc.js', micros: 10 },
    ]);
    assert.equal(split.functions[0]?.name, 'appendRow dist/audit/chain.js:10');
  });

  it("leaves out the samples between two windows (another server's load, say)", () => {
    const profile = profileOf([
      [2, 100], // 1100
      [3, 100], // 1200: between the windows
      [2, 100], // 1300
    ]);
    const split = splitProfile(
      profile,
      [
        { fromMicros: 1_050, toMicros: 1_150 },
        { fromMicros: 1_250, toMicros: 1_350 },
      ],
      2,
      OPTIONS,
    );
    assert.equal(split.samples, 2);
    assert.equal(split.parts.own, 100);
    assert.deepEqual(split.folders, [{ folder: 'audit/chain.js', micros: 100 }]);
  });

  it('reports a window the profile does not reach as holding no sample', () => {
    const split = splitProfile(profileOf([[2, 100]]), [{ fromMicros: 5_000, toMicros: 6_000 }], 10, OPTIONS);
    assert.equal(split.samples, 0);
    assert.equal(split.busy, 0);
  });

  it('places code by where it lives: own (and the compiled peers), node, dependencies, native', () => {
    assert.deepEqual(placeOf('handle', 'file:///repo/dist/server/http.js', OPTIONS), {
      part: 'own',
      file: 'dist/server/http.js',
      folder: 'server/http.js',
    });
    assert.equal(placeOf('complete', 'file:///repo/node_modules/.cache/peers/bench/peers/f.js', OPTIONS).part, 'own');
    assert.equal(placeOf('x', 'file:///repo/node_modules/pg/lib/client.js', OPTIONS).part, 'dependencies');
    assert.equal(placeOf('emit', 'node:events', OPTIONS).part, 'node');
    assert.equal(placeOf('writev', '', OPTIONS).part, 'native');
    assert.equal(placeOf('(garbage collector)', '', OPTIONS).part, 'collector');
  });

  it('ranks the functions one side spends more in, matched by name', () => {
    const a = splitProfile(
      profileOf([
        [4, 300],
        [5, 100],
      ]),
      [{ fromMicros: 0, toMicros: 10_000 }],
      1,
      OPTIONS,
    );
    const b = splitProfile(
      profileOf([
        [4, 100],
        [5, 100],
        [10, 50],
      ]),
      [{ fromMicros: 0, toMicros: 10_000 }],
      1,
      OPTIONS,
    );
    const rows = largestDifferences(a, b, 3);
    assert.deepEqual(rows[0], { name: 'writevGeneric node:internal/stream_base_commons:10', a: 300, b: 100 });
    assert.deepEqual(rows.at(-1), {
      name: 'complete node_modules/.cache/peers/bench/peers/floor-http.js:10',
      a: 0,
      b: 50,
    });
  });
});
