import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isoNow, newId } from './ids.js';

it('newId makes distinct RFC 9562 version-4 UUIDs across batches', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const id = newId();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    seen.add(id);
  }
  assert.equal(seen.size, 5000);
});

it('isoNow is a UTC ISO 8601 time with milliseconds', () => {
  assert.match(isoNow(), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.ok(Math.abs(Date.parse(isoNow()) - Date.now()) < 1000);
});
