import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isoNow, newId, newTaskId } from './ids.js';

it('newId makes distinct RFC 9562 version-4 UUIDs across batches', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const id = newId();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    seen.add(id);
  }
  assert.equal(seen.size, 5000);
});

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The millisecond a version 7 UUID carries in its first 48 bits. */
function msOf(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

it('newTaskId makes distinct version-7 UUIDs that carry their millisecond, newId stays version 4', () => {
  const seen = new Set<string>();
  const at = Date.UTC(2026, 11, 4, 12, 0, 0, 123);
  for (let i = 0; i < 5000; i++) {
    const id = newTaskId(at + (i >> 4));
    assert.match(id, V7);
    assert.equal(msOf(id), at + (i >> 4));
    seen.add(id);
    // Both share one batch of random bytes: neither may leak its layout into the other.
    assert.match(newId(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  }
  assert.equal(seen.size, 5000);
  assert.ok(Math.abs(msOf(newTaskId()) - Date.now()) < 1000);
});

it('newTaskId orders by time as text: a later millisecond sorts after every earlier one', () => {
  const ids = Array.from({ length: 2000 }, (_, i) => newTaskId(1_700_000_000_000 + (i >> 3)));
  for (let i = 8; i < ids.length; i++) assert.ok(ids[i - 8]! < ids[i]!, `${ids[i - 8]} < ${ids[i]}`);
});

it("newTaskId holds times outside 48 bits at the field's ends", () => {
  assert.equal(msOf(newTaskId(-5)), 0);
  assert.equal(msOf(newTaskId(2 ** 48 + 5)), 2 ** 48 - 1);
  assert.match(newTaskId(Number.NaN), V7);
});

it('isoNow is a UTC ISO 8601 time with milliseconds', () => {
  assert.match(isoNow(), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.ok(Math.abs(Date.parse(isoNow()) - Date.now()) < 1000);
});
