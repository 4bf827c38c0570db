import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { escapePrincipalPart, makePrincipal, principalKey, type PrincipalKind } from './principal.js';

/** Undoes `escapePrincipalPart` (both `%HH` runs and the `%uHHHH` form for lone surrogates). */
function unescape(part: string): string {
  return part
    .split(/(%u[0-9A-F]{4})/)
    .map((piece) =>
      piece.startsWith('%u') ? String.fromCharCode(parseInt(piece.slice(2), 16)) : decodeURIComponent(piece),
    )
    .join('');
}

const kinds = fc.constantFrom<PrincipalKind>('client', 'service', 'delegated');
/** Strings built mostly from the characters that matter here, so that collisions are actually tried. */
const tricky = fc.string({ unit: fc.constantFrom(':', '%', '3', 'A', 'a', '\n', '\u202e', '\ud800', '\udc00', 'é') });
const part = fc.oneof(tricky, fc.string({ unit: 'binary' }));

describe('principal keys', () => {
  it('keeps the keys of configured clients as they were', () => {
    assert.equal(principalKey('client', 'a', '', 'a'), 'client:a::a');
    assert.equal(principalKey('client', '*anonymous', '', '*anonymous'), 'client:*anonymous::*anonymous');
  });

  it('escapes the separator and the escape character', () => {
    assert.equal(escapePrincipalPart('a:b%c'), 'a%3Ab%25c');
    assert.equal(escapePrincipalPart('line\nbreak'), 'line%0Abreak');
    assert.equal(escapePrincipalPart('\u202eevil'), '%E2%80%AEevil');
    assert.equal(escapePrincipalPart('\ud800x'), '%uD800x');
  });

  it('never lets a subject with ":" imitate another principal', () => {
    // Unescaped, both would be `service:iss:x:y:z`.
    const a = principalKey('service', 'iss', '', 'x:y:z');
    const b = principalKey('service', 'iss:x', 'y', 'z');
    const c = principalKey('service', 'iss', 'x:y', 'z');
    assert.equal(new Set([a, b, c]).size, 3);
  });

  it('never lets an escaped-looking subject imitate a raw ":" (the "%" is escaped too)', () => {
    assert.notEqual(principalKey('service', 'c', '', 'a%3Ab'), principalKey('service', 'c', '', 'a:b'));
  });

  it('escaping is reversible, so different parts always give different escapes (property)', () => {
    fc.assert(
      fc.property(part, (value) => {
        const escaped = escapePrincipalPart(value);
        assert.ok(!escaped.includes(':'));
        assert.equal(unescape(escaped), value);
      }),
      { numRuns: 2000 },
    );
  });

  it('two keys are equal only when every part is equal (property)', () => {
    const principal = fc.tuple(kinds, part, part, part);
    fc.assert(
      fc.property(principal, principal, (p, q) => {
        const same = p.every((value, index) => value === q[index]);
        assert.equal(principalKey(...p) === principalKey(...q), same);
      }),
      { numRuns: 5000 },
    );
  });

  it('makePrincipal freezes the principal and omits an absent acting agent', () => {
    const principal = makePrincipal({ kind: 'service', clientId: 'c', subject: 's' });
    assert.ok(Object.isFrozen(principal));
    assert.ok(!('actingAgent' in principal));
    assert.equal(principal.key, 'service:c::s');
    const delegated = makePrincipal({ kind: 'delegated', clientId: 'c', subject: 's', actingAgent: 'bot:1' });
    assert.equal(delegated.key, 'delegated:c:bot%3A1:s');
  });
});
