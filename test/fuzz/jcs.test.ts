/**
 * Fuzzing RFC 8785 (JCS): `canonicalJson` (src/trust/digest.ts, what card pins and card
 * signatures hash) and the card signing payload (src/trust/signing/canonical.ts, whose
 * extension `params` are raw JSON and so reach JCS unchanged but for the empty-value cleanup),
 * against two references: the `canonicalize` package and a small JCS written here from the RFC
 * text alone (§3.2.2 serialisation, §3.2.3 UTF-16 key order), plus the RFC's vectors.
 *
 * Each property says which control it protects.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { MAX_CANONICAL_DEPTH, canonicalJson } from '../../src/trust/digest.js';
import { cardSigningPayload } from '../../src/trust/signing/canonical.js';
import { CardSignatureError } from '../../src/trust/signing/errors.js';
import { fuzzRuns, fuzzTimeout } from './runs.js';
import { RFC8785_NUMBER_VECTORS } from '../fixtures/rfc8785-numbers.js';

// ---------------------------------------------------------------------------------------------
// The reference: RFC 8785 from its text

/** RFC 8785 §3.2.2.2: the two-character escapes, `\u00xx` (lower case) for other controls. */
function refString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) throw new Error('lone high surrogate');
      out += text[i]! + text[i + 1]!;
      i++;
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) throw new Error('lone low surrogate');
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0d) out += '\\r';
    else if (c < 0x20) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += text[i]!;
  }
  return `${out}"`;
}

/** RFC 8785 §3.2.2.3: ECMAScript Number::toString, -0 as 0, no NaN or infinities. */
function refNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error('not a finite number');
  return Object.is(n, -0) ? '0' : String(n);
}

/** RFC 8785 §3.2.3: keys compared as arrays of UTF-16 code units. */
function compareUtf16(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

function refJcs(value: unknown): string {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') return refNumber(value);
  if (typeof value === 'string') return refString(value);
  if (Array.isArray(value)) return `[${value.map(refJcs).join(',')}]`;
  if (typeof value === 'object') {
    const keys = Object.keys(value).sort(compareUtf16);
    return `{${keys.map((k) => `${refString(k)}:${refJcs((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  throw new Error(`not JSON: ${typeof value}`);
}

/** A plain-object copy with -0 read as 0: what `JSON.parse` of the canonical form must give. */
function normalise(value: unknown): unknown {
  if (typeof value === 'number') return Object.is(value, -0) ? 0 : value;
  if (Array.isArray(value)) return value.map(normalise);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, {
        value: normalise((value as Record<string, unknown>)[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** A2A's step 3 (written here independently): no '', null, [], {} or `__proto__` members. */
function refRemoveEmpty(value: unknown): unknown {
  if (value === '' || value === null) return undefined;
  if (Array.isArray(value)) {
    const items = value.map(refRemoveEmpty).filter((v) => v !== undefined);
    return items.length === 0 ? undefined : items;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    let kept = 0;
    for (const key of Object.keys(value)) {
      if (key === '__proto__') continue;
      const inner = refRemoveEmpty((value as Record<string, unknown>)[key]);
      if (inner === undefined) continue;
      Object.defineProperty(out, key, { value: inner, enumerable: true, writable: true, configurable: true });
      kept++;
    }
    return kept === 0 ? undefined : out;
  }
  return value;
}

/** A card whose only extension carries `params` (a Struct: raw JSON inside the payload). */
function withParams(params: unknown): Record<string, unknown> {
  return { name: 'N', capabilities: { extensions: [{ uri: 'urn:x', params }] } };
}

const PREFIX = '{"capabilities":{"extensions":[{"params":';
const SUFFIX = ',"uri":"urn:x"}]},"name":"N"}';

/** The whole payload of `withParams(params)`, from the reference. */
function expectedPayload(params: unknown): string {
  const cleaned = refRemoveEmpty(params);
  return cleaned === undefined
    ? '{"capabilities":{"extensions":[{"uri":"urn:x"}]},"name":"N"}'
    : `${PREFIX}${refJcs(cleaned)}${SUFFIX}`;
}

/** The canonical text of `params` as the card signing payload writes it. */
function paramsForm(params: unknown): string {
  const payload = cardSigningPayload(withParams(params));
  assert.ok(payload.startsWith(PREFIX) && payload.endsWith(SUFFIX), payload);
  return payload.slice(PREFIX.length, payload.length - SUFFIX.length);
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** Every double: random IEEE 754 bit patterns (all exponents, subnormals, -0), less NaN/∞. */
const anyDouble = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((bits) => {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, bits);
  const n = view.getFloat64(0);
  return Number.isFinite(n) ? n : 0;
});

const number = fc.oneof(
  anyDouble,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(-0, 0, 1e21, 1e-7, 9007199254740992, 2 ** 53 + 2, 5e-324, 1.7976931348623157e308, 0.1 + 0.2),
);

/** Strings with controls, escapes, BMP and astral characters (surrogate pairs), never lone halves. */
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({
    unit: fc.constantFrom('"', '\\', '/', '\b', '\f', '\n', '\r', '\t', '\u0000', '\u001f', '\u007f', 'a'),
    maxLength: 8,
  }),
  fc.string({
    unit: fc.constantFrom('\u20ac', '\ufb33', '\ud83d\ude00', '\u{10ffff}', '\u0080', '\u00f6', '\u2028', '\ufeff'),
    maxLength: 6,
  }),
  fc.string({ maxLength: 8 }),
);

const key = fc.oneof(text, fc.constantFrom('__proto__', 'toJSON', 'constructor', '', 'a', 'A', 'é', 'e\u0301'));

const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false),
    number,
    text,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** fast-check's own JSON generator too, with full-Unicode strings. */
const fcJson = fc.oneof(json, fc.jsonValue({ maxDepth: 6 }), fc.jsonValue({ maxDepth: 4, stringUnit: 'grapheme' }));

/** Keys in random order, recursively (JCS output must not depend on it). */
function shuffled(value: unknown, rng: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffled(v, rng));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    Object.defineProperty(out, k, {
      value: shuffled((value as Record<string, unknown>)[k], rng),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

const options = (): fc.Parameters<unknown> => ({ numRuns: fuzzRuns() });

// ---------------------------------------------------------------------------------------------

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('JCS: RFC 8785 vectors, for the product and for the reference alike', () => {
  const impls: [string, (value: unknown) => string][] = [
    ['canonicalJson', (v) => canonicalJson(v)],
    ['card payload params', (v) => paramsForm(v)],
    ['reference', refJcs],
    ['canonicalize', (v) => canonicalize(v)!],
  ];

  it('Appendix B: IEEE 754 bits → text', () => {
    const vectors = RFC8785_NUMBER_VECTORS;
    for (const [name, impl] of impls) {
      for (const [bits, expected] of vectors) assert.equal(impl([fromBits(bits)]), `[${expected}]`, `${name} ${bits}`);
      for (const bits of ['7fffffffffffffff', '7ff0000000000000', 'fff0000000000000']) {
        assert.throws(() => impl([fromBits(bits)]), `${name} refuses ${bits}`);
      }
    }
  });

  it('§3.2.2 / §3.2.4: the sample object, and §3.2.3: the key-sorting sample', () => {
    const sample = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    ) as unknown;
    const sorting = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
        '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    ) as unknown;
    const sortedText =
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
      '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
    for (const [name, impl] of impls) {
      const expected =
        name === 'card payload params'
          ? // A2A's cleanup removes the null first (§8.4.1 step 3).
            '{"literals":[true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
          : '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}';
      assert.equal(impl(sample), expected, name);
      assert.equal(impl(sorting), sortedText, name);
    }
  });
});

describe('JCS: properties', () => {
  // Protects: the whole serialiser (key order by UTF-16 code units, ECMAScript number text,
  // minimal escaping, no whitespace) — a change of library, an options flag or a hand-rolled
  // replacement that differs from RFC 8785 anywhere fails here.
  it(
    'canonicalJson equals the RFC reference and the canonicalize package on random JSON',
    { timeout: fuzzTimeout(5_000) },
    () => {
      fc.assert(
        fc.property(fcJson, (value) => {
          const got = canonicalJson(value, 1_000);
          assert.equal(got, refJcs(value));
          assert.equal(got, canonicalize(value));
        }),
        options(),
      );
    },
  );

  // Protects: the card signing payload's JCS step and its empty-value cleanup (A2A#2249):
  // extension params are Struct JSON, so they reach JCS as sent less '', null, [], {}, __proto__.
  it('the card payload writes extension params as JCS of the cleaned value', { timeout: fuzzTimeout(8_000) }, () => {
    fc.assert(
      fc.property(fcJson, (params) => {
        fc.pre(params !== null && typeof params === 'object' && !Array.isArray(params));
        assert.equal(cardSigningPayload(withParams(params)), expectedPayload(params));
      }),
      options(),
    );
  });

  // Protects: the signature/pin meaning — the canonical text must parse back to the same value
  // (no lossy number formatting, no dropped or mangled keys, no broken escapes).
  it('round trips: JSON.parse(canonical(x)) deep-equals x (-0 read as 0)', { timeout: fuzzTimeout(5_000) }, () => {
    fc.assert(
      fc.property(fcJson, (value) => {
        assert.deepStrictEqual(JSON.parse(canonicalJson(value, 1_000)), normalise(value));
      }),
      options(),
    );
  });

  // Protects: spelling independence — the same JSON written with other whitespace and member
  // order (as a remote may serve it) must canonicalise to the same bytes, and canonical text is
  // a fixed point.
  it('is idempotent and independent of member order and whitespace', { timeout: fuzzTimeout(8_000) }, () => {
    fc.assert(
      fc.property(fcJson, fc.integer(), fc.constantFrom(0, 1, 2, '\t', ' \n '), (value, seed, indent) => {
        const once = canonicalJson(value, 1_000);
        assert.equal(canonicalJson(JSON.parse(once), 1_000), once);
        let state = seed >>> 0 || 1;
        const rng = (): number => {
          state = (state * 1103515245 + 12345) >>> 0;
          return state / 2 ** 32;
        };
        const respelled = JSON.stringify(shuffled(value, rng), null, indent);
        assert.equal(canonicalJson(JSON.parse(respelled), 1_000), once);
      }),
      options(),
    );
  });

  // Protects: the I-JSON refusals (lone surrogates in values and keys; non-finite numbers) —
  // such a value has no canonical form, and signing one anyway would sign a lossy text.
  it('refuses lone surrogates and non-finite numbers wherever they sit', { timeout: fuzzTimeout(5_000) }, () => {
    const poison = fc.constantFrom<[string, unknown]>(
      ['high', 'x\ud800'],
      ['low', '\udc00y'],
      ['reversed', '\ude00\ud83d'],
      ['nan', Number.NaN],
      ['inf', Number.POSITIVE_INFINITY],
      ['-inf', Number.NEGATIVE_INFINITY],
    );
    fc.assert(
      fc.property(json, poison, fc.boolean(), fc.nat(), (value, [, bad], asKey, where) => {
        if (asKey && typeof bad !== 'string') return;
        const planted = plant(value, asKey ? { [bad as string]: 1 } : bad, where);
        assert.throws(() => canonicalJson(planted, 1_000));
        assert.throws(() => refJcs(planted));
        // The payload drops `__proto__` members first (A2A#2249), and what sits under one with them.
        const survives = (() => {
          try {
            refJcs(refRemoveEmpty({ p: planted }) ?? null);
            return false;
          } catch {
            return true;
          }
        })();
        if (survives) {
          assert.throws(
            () => cardSigningPayload(withParams({ p: planted })),
            (e: unknown) => e instanceof CardSignatureError && e.code === 'card_malformed',
          );
        } else {
          assert.equal(cardSigningPayload(withParams({ p: planted })), expectedPayload({ p: planted }));
        }
      }),
      options(),
    );
  });

  // Protects: the depth cap (MAX_CANONICAL_DEPTH) that stops `canonicalize` recursing into a
  // nesting bomb — deeper values are a RangeError, never a stack overflow; shallower ones pass.
  it(
    'caps depth: deeper than the cap is a RangeError, never a stack overflow',
    { timeout: fuzzTimeout(10_000) },
    () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 20_000 }), fc.array(fc.boolean(), { maxLength: 8 }), (depth, kinds) => {
          let value: unknown = 0;
          for (let i = 0; i < depth; i++) value = kinds[i % Math.max(1, kinds.length)] ? { k: value } : [value];
          if (depth <= MAX_CANONICAL_DEPTH) {
            assert.equal(canonicalJson(value), refJcs(value));
          } else {
            assert.throws(() => canonicalJson(value), RangeError);
            assert.throws(
              () => cardSigningPayload(withParams(value)),
              (e: unknown) => e instanceof CardSignatureError && e.code === 'card_too_deep',
            );
          }
        }),
        options(),
      );
    },
  );
});

/** `value` with `bad` put somewhere inside it (or wrapped around it). */
function plant(value: unknown, bad: unknown, where: number): unknown {
  if (Array.isArray(value) && value.length > 0) {
    const i = where % value.length;
    const copy = [...value];
    copy[i] = plant(copy[i], bad, Math.floor(where / 2));
    return copy;
  }
  if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) {
    const keys = Object.keys(value);
    const k = keys[where % keys.length]!;
    const copy = normalise(value) as Record<string, unknown>;
    copy[k] = plant(copy[k], bad, Math.floor(where / 2));
    return copy;
  }
  return where % 2 === 0 ? [value, bad] : { v: value, w: bad };
}
