/**
 * The upstream id maps: least recently used eviction, keys per session (so two callers never
 * share an upstream context), and the ids that are not kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedMap, MAX_UPSTREAM_ID_CHARS, UpstreamIds, isUsableUpstreamId } from './ids.js';

describe('BoundedMap', () => {
  it('drops the least recently used entry beyond its limit', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    assert.equal(map.get('a'), 1, 'reading a makes it the newest');
    map.set('c', 3);
    assert.equal(map.has('b'), false);
    assert.equal(map.has('a'), true);
    assert.equal(map.size, 2);
    map.set('a', 10);
    map.set('d', 4);
    assert.deepEqual([map.get('a'), map.has('c'), map.get('d')], [10, false, 4]);
  });

  it('refuses a limit that is not a positive integer', () => {
    assert.throws(() => new BoundedMap(0), RangeError);
    assert.throws(() => new BoundedMap(1.5), RangeError);
  });
});

describe('UpstreamIds', () => {
  it('keeps one upstream context per session', () => {
    const ids = new UpstreamIds();
    ids.rememberContext('a2a-alice', 'up-ctx-a');
    ids.rememberContext('a2a-bob', 'up-ctx-b');
    assert.equal(ids.contextOf('a2a-alice'), 'up-ctx-a');
    assert.equal(ids.contextOf('a2a-bob'), 'up-ctx-b');
    assert.equal(ids.contextOf('a2a-carol'), undefined);
    ids.rememberContext('a2a-alice', undefined);
    ids.rememberContext('a2a-alice', 'x'.repeat(MAX_UPSTREAM_ID_CHARS + 1));
    assert.equal(ids.contextOf('a2a-alice'), 'up-ctx-a', 'unusable ids are ignored');
  });

  it('keys waiting tasks by session and inbound task, and forgets them', () => {
    const ids = new UpstreamIds();
    ids.rememberWaiting('a2a-alice', 't-1', { taskId: 'up-1', contextId: 'up-ctx', relayed: [['a', 3]] });
    assert.equal(ids.waitingOf('a2a-bob', 't-1'), undefined, 'another session never sees it');
    assert.deepEqual(ids.waitingOf('a2a-alice', 't-1'), { taskId: 'up-1', contextId: 'up-ctx', relayed: [['a', 3]] });
    ids.forgetWaiting('a2a-alice', 't-1');
    assert.equal(ids.waitingOf('a2a-alice', 't-1'), undefined);
  });

  it('is bounded', () => {
    const ids = new UpstreamIds(3);
    for (let i = 0; i < 10; i++) ids.rememberContext(`a2a-${i}`, `ctx-${i}`);
    assert.equal(ids.contextOf('a2a-0'), undefined);
    assert.equal(ids.contextOf('a2a-9'), 'ctx-9');
    const relayed = Array.from({ length: 100 }, (_, i) => [`a-${i}`, i] as const);
    ids.rememberWaiting('a2a-9', 't', { taskId: 'up', contextId: 'c', relayed });
    assert.equal(ids.waitingOf('a2a-9', 't')?.relayed.length, 64, 'the newest artifacts are kept');
  });

  it('accepts ids of 1..512 characters', () => {
    assert.equal(isUsableUpstreamId('3f2c9a70-1b2d-4c5e-8f90-1234567890ab'), true);
    assert.equal(isUsableUpstreamId(''), false);
    assert.equal(isUsableUpstreamId('x'.repeat(513)), false);
    assert.equal(isUsableUpstreamId(42), false);
  });
});
