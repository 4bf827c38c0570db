import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { EMAIL_REPLACEMENT, MIN_SECRET_LENGTH, SECRET_REPLACEMENT } from '../content/redact.js';
import { isSecretKey, redactActionArgs, REDACTED_VALUE, TRUNCATED_VALUE, type JsonValue } from './redact.js';

const SECRET = 'sk-live-0123456789abcdef';

describe('isSecretKey', () => {
  it('matches credential-like key names in any spelling', () => {
    for (const key of [
      'password',
      'Password',
      'passwd',
      'pwd',
      'pass',
      'secret',
      'client_secret',
      'token',
      'access_token',
      'refreshToken',
      'Authorization',
      'authorisation',
      'auth',
      'api_key',
      'API-Key',
      'apiKey',
      'x-api-key',
      'private_key',
      'aws_access_key_id',
      'credentials',
      'Cookie',
      'set-cookie',
      'session_id',
      'signature',
      'passphrase',
      'otp',
    ]) {
      assert.equal(isSecretKey(key), true, key);
    }
  });

  it('leaves ordinary keys readable', () => {
    for (const key of [
      'author',
      'compass',
      'path',
      'to',
      'subject',
      'body',
      'passenger',
      'authority_name',
      'keyword',
      'pinned',
    ]) {
      assert.equal(isSecretKey(key), false, key);
    }
  });
});

describe('redactActionArgs', () => {
  it('redacts values under secret-like keys whole, whatever their type', () => {
    const { value, redacted } = redactActionArgs(
      { password: 'p', token: { nested: 'x' }, apiKey: 42, headers: { Authorization: 'Bearer abc' }, path: '/a' },
      { secrets: [] },
    );
    assert.deepEqual(value, {
      password: REDACTED_VALUE,
      token: REDACTED_VALUE,
      apiKey: REDACTED_VALUE,
      headers: { Authorization: REDACTED_VALUE },
      path: '/a',
    });
    assert.equal(redacted, 4);
  });

  it('redacts configured secrets in strings, encoded forms and keys', () => {
    const base64 = Buffer.from(SECRET).toString('base64');
    const { value } = redactActionArgs(
      { url: `https://x.io/?k=${SECRET}`, blob: base64, [SECRET]: 'v', list: [`a ${encodeURIComponent(SECRET)} b`] },
      { secrets: [SECRET] },
    );
    assert.deepEqual(value, {
      url: `https://x.io/?k=${SECRET_REPLACEMENT}`,
      blob: SECRET_REPLACEMENT,
      [SECRET_REPLACEMENT]: 'v',
      list: [`a ${SECRET_REPLACEMENT} b`],
    });
  });

  it('redacts email addresses in values and keys, keeping colliding keys apart', () => {
    const { value } = redactActionArgs(
      { to: 'jane.doe@example.com', cc: ['bob [at] corp [dot] io'], 'a@b.io': 1, 'c@d.io': 2 },
      { secrets: [] },
    );
    assert.deepEqual(value, {
      to: EMAIL_REPLACEMENT,
      cc: [EMAIL_REPLACEMENT],
      [EMAIL_REPLACEMENT]: 1,
      [`${EMAIL_REPLACEMENT} #2`]: 2,
    });
  });

  it('redacts a numeric secret held in a number', () => {
    const { value } = redactActionArgs({ n: 1234567890123, m: 7 }, { secrets: ['1234567890123'] });
    assert.deepEqual(value, { n: SECRET_REPLACEMENT, m: 7 });
  });

  it('keeps plain JSON as it is', () => {
    const args = {
      path: '/tmp/a',
      force: true,
      retries: 3,
      ratio: 0.5,
      none: null,
      tags: ['x', 'y'],
      deep: { a: [1, { b: 2 }] },
    };
    const result = redactActionArgs(args, { secrets: [SECRET] });
    assert.deepEqual(result, { value: args, redacted: 0, truncated: false });
  });

  it('handles non-JSON values without throwing', () => {
    const { value } = redactActionArgs(
      { u: undefined, f: () => 1, s: Symbol('x'), inf: Infinity, nan: NaN, big: 10n, arr: [undefined, () => 1] },
      { secrets: [] },
    );
    assert.deepEqual(value, { inf: null, nan: null, big: '10', arr: [null, null] });
    assert.equal(redactActionArgs(undefined, { secrets: [] }).value, null);
    assert.equal(redactActionArgs('top a@b.io', { secrets: [] }).value, `top ${EMAIL_REPLACEMENT}`);
  });

  it('keeps a __proto__ key as an ordinary own key', () => {
    const args = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    const { value } = redactActionArgs(args, { secrets: [] }) as { value: Record<string, unknown> };
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual(Object.keys(value), ['__proto__', 'a']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('caps depth (and so survives cycles)', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const { value, truncated } = redactActionArgs(cyclic, { secrets: [], maxDepth: 2 });
    assert.equal(truncated, true);
    assert.deepEqual(value, { name: 'loop', self: { name: 'loop', self: TRUNCATED_VALUE } });
    assert.deepEqual(redactActionArgs({ a: { b: 1 } }, { secrets: [], maxDepth: 1 }).value, { a: TRUNCATED_VALUE });
  });

  it('caps the number of values in arrays and objects', () => {
    const array = redactActionArgs(
      Array.from({ length: 100 }, (_, i) => i),
      { secrets: [], maxNodes: 10 },
    );
    assert.equal(array.truncated, true);
    assert.equal((array.value as JsonValue[]).length, 10);
    assert.equal((array.value as JsonValue[]).at(-1), TRUNCATED_VALUE);
    const object = redactActionArgs(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i])), {
      secrets: [],
      maxNodes: 5,
    });
    assert.equal(object.truncated, true);
    assert.equal((object.value as Record<string, JsonValue>)['…'], TRUNCATED_VALUE);
    assert.ok(Object.keys(object.value as object).length <= 6);
  });

  it('cuts long strings after redaction, so a cut never exposes part of a secret', () => {
    const text = 'x'.repeat(10) + SECRET + 'y'.repeat(100);
    const { value, truncated } = redactActionArgs(text, { secrets: [SECRET], maxStringLength: 20 });
    assert.equal(truncated, true);
    assert.equal(value, ('x'.repeat(10) + SECRET_REPLACEMENT).slice(0, 20) + '…');
    assert.ok(!value.includes('sk-live'));
  });

  it('does not split a surrogate pair when cutting', () => {
    const { value } = redactActionArgs('ab😀cd', { secrets: [], maxStringLength: 3 });
    assert.equal(value, 'ab…');
  });

  it('never throws on hostile objects', () => {
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('boom');
        },
      },
    );
    assert.deepEqual(redactActionArgs({ h: hostile, ok: 1 }, { secrets: [] }).value, { h: TRUNCATED_VALUE, ok: 1 });
    const getter = {
      get bad(): string {
        throw new Error('boom');
      },
    };
    assert.equal(redactActionArgs(getter, { secrets: [] }).value, TRUNCATED_VALUE);
  });

  it('ignores bad options and bad secrets', () => {
    const bad = { secrets: 'nope', maxDepth: -1, maxNodes: 0.5, maxStringLength: NaN } as unknown as Parameters<
      typeof redactActionArgs
    >[1];
    assert.deepEqual(redactActionArgs({ a: 'b' }, bad).value, { a: 'b' });
  });

  it('property: no configured secret survives anywhere in the output', () => {
    const secret = fc.string({ unit: 'grapheme', minLength: MIN_SECRET_LENGTH, maxLength: 24 });
    const alnumSecret = fc.stringMatching(/^[A-Za-z0-9_-]{8,24}$/);
    fc.assert(
      fc.property(
        fc.array(fc.oneof(secret, alnumSecret), { minLength: 1, maxLength: 3 }),
        fc.jsonValue({ maxDepth: 4 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 1, max: 60 }),
        (secrets, base, where, maxStringLength) => {
          // Plant the secrets (plain and encoded) inside strings and keys of a random JSON value.
          const planted = plant(base as JsonValue, secrets, where);
          const { value } = redactActionArgs(planted, { secrets, maxStringLength });
          for (const leaf of leaves(value)) {
            for (const s of secrets) {
              if (leaf.includes(s)) return false;
              if (leaf.includes(Buffer.from(s).toString('base64'))) return false;
            }
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** Every key, string and number of a JSON value, as text. */
function leaves(value: JsonValue): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number') return [String(value)];
  if (value === null || typeof value === 'boolean') return [];
  if (Array.isArray(value)) return value.flatMap(leaves);
  return Object.entries(value).flatMap(([key, item]) => [key, ...leaves(item)]);
}

function plant(base: JsonValue, secrets: string[], where: number[]): JsonValue {
  const forms = secrets.flatMap((s) => [s, Buffer.from(s).toString('base64'), `pre ${s} post`]);
  const pick = (i: number): string => forms[i % forms.length]!;
  return {
    base,
    list: where.map((i) => pick(i)),
    [pick(where[0] ?? 0)]: pick(where[1] ?? 1),
    nested: { deeper: [{ [`k${pick(where[2] ?? 2)}`]: `${pick(where[3] ?? 0)}${pick(where[4] ?? 1)}` }] },
  };
}

describe('redactActionArgs without options', () => {
  it('never throws, even when called without options', () => {
    const call = redactActionArgs as (args: unknown, options?: unknown) => ReturnType<typeof redactActionArgs>;
    assert.deepEqual(call({ to: 'a@b.io' }).value, { to: EMAIL_REPLACEMENT });
  });
});
