/**
 * The extension activation policy (`activateExtensions`): exhaustively over a small universe of
 * URIs, and as properties over random ones — what is activated is requested and declared, a
 * required declared extension not requested refuses, and neither depends on order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { activateExtensions, parseExtensions, type DeclaredExtension } from './headers.js';

const UNIVERSE: readonly string[] = [
  'https://a.example/e',
  'https://b.example/e',
  'urn:x:c',
  'https://undeclared.example/d',
];

/** Every subset of `items`, in their order. */
function subsets<T>(items: readonly T[]): T[][] {
  return items.reduce<T[][]>((all, item) => [...all, ...all.map((subset) => [...subset, item])], [[]]);
}

/** Every declaration of the first three URIs: each absent, optional or required (27). */
function declarations(): DeclaredExtension[][] {
  let out: DeclaredExtension[][] = [[]];
  for (const uri of UNIVERSE.slice(0, 3)) {
    out = out.flatMap((declared) => [
      declared,
      [...declared, { uri, required: false }],
      [...declared, { uri, required: true }],
    ]);
  }
  return out;
}

describe('activateExtensions: exhaustive over 4 URIs', () => {
  it('activates requested ∩ declared in request order, or names a required one not requested', () => {
    let cases = 0;
    for (const declared of declarations()) {
      for (const requested of subsets(UNIVERSE)) {
        cases++;
        const outcome = activateExtensions(requested, declared);
        const missing = declared.filter((extension) => extension.required && !requested.includes(extension.uri));
        if (missing.length > 0) {
          assert.deepEqual(outcome, { missing: missing[0]?.uri }, JSON.stringify({ declared, requested }));
        } else {
          const expected = requested.filter((uri) => declared.some((extension) => extension.uri === uri));
          assert.deepEqual(outcome, { activated: expected }, JSON.stringify({ declared, requested }));
        }
      }
    }
    assert.equal(cases, 27 * 16);
  });
  it('an undeclared URI is never activated and never refused; nothing declared ignores every request', () => {
    assert.deepEqual(activateExtensions([...UNIVERSE], []), { activated: [] });
    assert.deepEqual(activateExtensions(['https://undeclared.example/d'], [{ uri: 'urn:x:c', required: false }]), {
      activated: [],
    });
  });
  it('URIs compare exactly (no case folding, no trailing-slash games)', () => {
    const declared = [{ uri: 'https://a.example/e', required: true }];
    assert.deepEqual(activateExtensions(['https://A.example/e'], declared), { missing: 'https://a.example/e' });
    assert.deepEqual(activateExtensions(['https://a.example/e/'], declared), { missing: 'https://a.example/e' });
  });
});

describe('activateExtensions: properties', () => {
  const uri = fc.constantFrom(...UNIVERSE, 'urn:y:1', 'https://z.example/2');
  const declaredArb = fc.uniqueArray(fc.record({ uri, required: fc.boolean() }), {
    selector: (extension) => extension.uri,
    maxLength: 6,
  });
  const requestedArb = fc.uniqueArray(uri, { maxLength: 6 });

  it('activated ⊆ declared ∩ requested; refused exactly when a required declared one is not requested', () => {
    fc.assert(
      fc.property(declaredArb, requestedArb, (declared, requested) => {
        const outcome = activateExtensions(requested, declared);
        const requiredMissing = declared.filter((e) => e.required && !requested.includes(e.uri)).map((e) => e.uri);
        if ('missing' in outcome) {
          assert.ok(requiredMissing.includes(outcome.missing));
          return;
        }
        assert.equal(requiredMissing.length, 0);
        for (const activated of outcome.activated) {
          assert.ok(requested.includes(activated) && declared.some((e) => e.uri === activated));
        }
        // Everything both requested and declared is activated (⊇ as well: the sets are equal).
        const both = requested.filter((r) => declared.some((e) => e.uri === r));
        assert.deepEqual(new Set(outcome.activated), new Set(both));
      }),
      { numRuns: 500 },
    );
  });

  it('is order-insensitive: shuffled requests and declarations activate the same set, refuse alike', () => {
    fc.assert(
      fc.property(
        declaredArb,
        requestedArb,
        fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
        (declared, requested, seeds) => {
          const shuffle = <T>(items: readonly T[], salt: number): T[] =>
            items
              .map((item, index) => ({ item, key: (seeds[(index + salt) % seeds.length] ?? 0) * 31 + index }))
              .sort((a, b) => a.key - b.key)
              .map((entry) => entry.item);
          const one = activateExtensions(requested, declared);
          const other = activateExtensions(shuffle(requested, 0), shuffle(declared, 6));
          assert.equal('missing' in one, 'missing' in other);
          if ('activated' in one && 'activated' in other) {
            assert.deepEqual(new Set(one.activated), new Set(other.activated));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a header value round-trips: what parseExtensions reads of a joined list is the list', () => {
    fc.assert(
      fc.property(requestedArb, (requested) => {
        assert.deepEqual(parseExtensions([requested.join(', ')]), requested);
      }),
    );
  });
});
