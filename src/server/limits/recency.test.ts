import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RecencyTable } from './recency.js';

/** Keys from oldest to newest, walking the table's list. */
function order(table: RecencyTable, keyOf: Map<number, string>): string[] {
  const keys: string[] = [];
  for (let slot = table.oldest; slot !== -1; slot = table.newerThan(slot)) keys.push(keyOf.get(slot)!);
  return keys;
}

describe('RecencyTable', () => {
  it('reuses the victim’s slot once full and forgets its key', () => {
    const table = new RecencyTable(2);
    const a = table.insert('a', -1);
    table.insert('b', -1);
    assert.equal(table.full, true);
    const c = table.insert('c', table.oldest);
    assert.equal(c, a);
    assert.equal(table.slotOf('a'), undefined);
    assert.equal(table.slotOf('c'), c);
    assert.equal(table.size, 2);
  });

  it('keeps the same order as a reference list under any inserts and touches', () => {
    const op = fc.oneof(
      fc.record({ insert: fc.constant(true as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({ insert: fc.constant(false as const), key: fc.integer({ min: 0, max: 12 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 80 }), (capacity, ops) => {
        const table = new RecencyTable(capacity);
        const keyOf = new Map<number, string>();
        let reference: string[] = [];
        for (const { insert, key } of ops) {
          const name = `k${key}`;
          const slot = table.slotOf(name);
          if (slot !== undefined) {
            // Present: touch it (an insert of a present key is a touch too).
            table.touch(slot);
            reference = [...reference.filter((k) => k !== name), name];
          } else if (insert) {
            const placed = table.insert(name, table.oldest);
            keyOf.set(placed, name);
            if (reference.length === capacity) reference.shift();
            reference.push(name);
          }
          if (order(table, keyOf).join() !== reference.join() || table.size !== reference.length) return false;
        }
        return true;
      }),
      { numRuns: 500 },
    );
  });
});
