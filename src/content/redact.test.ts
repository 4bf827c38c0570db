import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import {
  EMAIL_REPLACEMENT,
  MIN_SECRET_LENGTH,
  SECRET_REPLACEMENT,
  redactContactDetails,
  redactSecrets,
  secretForms,
} from './redact.js';
import { ADVERSARIAL_BUDGET_MS, ADVERSARIAL_INPUTS, hostileText, repeatTo, timeMs } from './arbitraries.test.js';

const E = EMAIL_REPLACEMENT;
const S = SECRET_REPLACEMENT;

/** A plain email shape, as a check independent of the implementation's pattern. */
const PLAIN_EMAIL = /[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/i;

describe('redactContactDetails: redacted', () => {
  const cases: Array<[input: string, expected: string]> = [
    ['jane@example.com', E],
    ['Jane.Doe+tag@mail.example.co.uk', E],
    ['Write to jane@example.com.', `Write to ${E}.`],
    ['<jane@example.com>', `<${E}>`],
    ['mailto:jane@example.com', `mailto:${E}`],
    ['JANE@EXAMPLE.COM', E],
    ['a@b.co, c@d.io; e@f.dev', `${E}, ${E}; ${E}`],
    ['"Jane" <jane_doe-99@sub.example.org>', `"Jane" <${E}>`],
    ['jane [at] example [dot] com', E],
    ['jane(at)example(dot)com', E],
    ['jane {at} example {dot} com', E],
    ['jane <at> example <dot> org', E],
    ['jane [ at ] example [ dot ] com', E],
    ['JANE [AT] EXAMPLE [DOT] COM', E],
    ['jane [at] example.com', E],
    ['jane @ example . com', E],
    ['jane @ example.com', E],
    ['jane@example dot com', E],
    ['jane at example dot com', E],
    ['jane dot doe at example dot com', E],
    ['jane [dot] doe [at] example [dot] com', E],
    ['JANE AT EXAMPLE DOT COM', E],
    ['jane＠example.com', E],
    ['jane﹫example.com', E],
    ['Contact: jane@example.com or bob [at] corp [dot] io.', `Contact: ${E} or ${E}.`],
    ['git@github.com:org/repo.git', `${E}:org/repo.git`],
    [`${'x'.repeat(200)}@example.com`, E],
  ];
  for (const [input, expected] of cases) {
    it(JSON.stringify(input.slice(0, 60)), () => {
      const result = redactContactDetails(input);
      assert.equal(result.text, expected);
      assert.equal(result.redacted, expected.split(E).length - 1);
    });
  }
});

describe('redactContactDetails: left alone', () => {
  const untouched = [
    '',
    'Meet me at noon.',
    'look at example.com',
    'Visit https://example.com/docs?ref=a for details.',
    'https://medium.com/@alice/post',
    '@alice on twitter',
    'npm i @types/node @scope/pkg',
    'user@localhost',
    'foo@bar',
    'version 1.2.3@latest',
    'decorator @Component() and a @ b',
    'price: 3 at 4.99',
    '5 @ 10 dollars',
    'x at y, a dot b',
    'I am at home dot',
    'email me at the office dot com',
    'const email = user.email; // @param email',
    '[email redacted]',
  ];
  for (const text of untouched) {
    it(JSON.stringify(text), () => assert.deepEqual(redactContactDetails(text), { text, redacted: 0 }));
  }

  it('treats non-string input as empty', () => {
    assert.deepEqual(redactContactDetails(undefined as unknown as string), { text: '', redacted: 0 });
  });
});

describe('redactContactDetails: an address a previous match ran into', () => {
  it('is redacted too', () => {
    const { text } = redactContactDetails(' 0@0.aa . aa.@a.aa ');
    assert.ok(!PLAIN_EMAIL.test(text), text);
  });
});

describe('redactContactDetails: properties', () => {
  const local = fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,15}$/);
  const label = fc.stringMatching(/^[a-z0-9]{1,12}$/);
  const tld = fc.stringMatching(/^[a-z]{2,6}$/);
  const email = fc
    .tuple(local, fc.array(label, { minLength: 1, maxLength: 3 }), tld)
    .map(([l, labels, t]) => `${l}@${labels.join('.')}.${t}`);
  const prose = fc.string().map((s) => s.replace(/[@＠﹫]/g, ' '));

  it('leaves no plain email address behind, wherever it sits in the text', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(prose, email)), prose, (pairs, tail) => {
        const text = pairs.map(([p, e]) => `${p} ${e} `).join('') + tail;
        const out = redactContactDetails(text).text;
        assert.ok(!PLAIN_EMAIL.test(out), out);
        for (const [, e] of pairs) assert.ok(!out.includes(e));
      }),
      { numRuns: 500 },
    );
  });

  it('is idempotent and total', () => {
    fc.assert(
      fc.property(fc.oneof(hostileText, fc.string({ unit: 'binary' }), fc.string()), (text) => {
        const once = redactContactDetails(text);
        assert.ok(Number.isInteger(once.redacted) && once.redacted >= 0);
        assert.deepEqual(redactContactDetails(once.text), { text: once.text, redacted: 0 });
      }),
      { numRuns: 500 },
    );
  });
});

describe('redactContactDetails: linear time', () => {
  for (const [name, input] of Object.entries(ADVERSARIAL_INPUTS)) {
    it(`100k adversarial input (${name}) in < ${ADVERSARIAL_BUDGET_MS} ms`, () => {
      const ms = timeMs(() => redactContactDetails(input));
      assert.ok(ms < ADVERSARIAL_BUDGET_MS, `${ms.toFixed(1)} ms`);
    });
  }
});

const TOKEN = 'tok_0123456789abcdef';
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const b64url = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');

describe('redactSecrets: forms', () => {
  const special = 'p@ss w0rd/+=&?é';
  const cases: Array<[name: string, text: string, secrets: string[], expected: string]> = [
    ['the exact value', `Authorization: Bearer ${TOKEN}`, [TOKEN], `Authorization: Bearer ${S}`],
    ['every occurrence', `${TOKEN} and ${TOKEN}`, [TOKEN], `${S} and ${S}`],
    ['glued to other text', `x${TOKEN}y`, [TOKEN], `x${S}y`],
    ['base64, padded', `b64: ${b64(TOKEN + 'x')}`, [TOKEN + 'x'], `b64: ${S}`],
    ['base64, unpadded', `b64: ${b64(TOKEN + 'x').replace(/=+$/, '')}!`, [TOKEN + 'x'], `b64: ${S}!`],
    ['base64url', `u=${b64url('\u00ff\u00fe' + TOKEN)}`, ['\u00ff\u00fe' + TOKEN], `u=${S}`],
    ['URL-encoded (encodeURIComponent)', `?k=${encodeURIComponent(special)}&x=1`, [special], `?k=${S}&x=1`],
    [
      'URL-encoded, lower-case hex',
      `?k=${encodeURIComponent(special).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())}`,
      [special],
      `?k=${S}`,
    ],
    [
      'form-encoded (+ for spaces)',
      `k=${new URLSearchParams({ k: special }).toString().slice(2)}`,
      [special],
      `k=${S}`,
    ],
    [
      'strict RFC 3986 encoding',
      `k=${encodeURIComponent("it's(a)secret!*").replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())}`,
      ["it's(a)secret!*"],
      `k=${S}`,
    ],
    ['the longest secret wins', `key=${TOKEN}-extended`, [TOKEN, `${TOKEN}-extended`], `key=${S}`],
    ['overlapping secrets merge', 'AAAABBBBCCCC', ['AAAABBBB', 'BBBBCCCC'], S],
    ['adjacent secrets stay apart', `${TOKEN}${TOKEN}`, [TOKEN], `${S}${S}`],
    ['unicode secrets', 'x 🔑🔑🔑🔑🔑🔑🔑🔑 y', ['🔑🔑🔑🔑🔑🔑🔑🔑'], `x ${S} y`],
  ];
  for (const [name, text, secrets, expected] of cases) {
    it(name, () => {
      const result = redactSecrets(text, secrets);
      assert.equal(result.text, expected);
      assert.equal(result.redacted, expected.split(S).length - 1);
    });
  }

  it('finds the secret inside a longer base64 payload (HTTP Basic) at every alignment', () => {
    for (const user of ['u', 'us', 'use', 'user']) {
      const basic = b64(`${user}:${TOKEN}`);
      const out = redactSecrets(`Authorization: Basic ${basic}`, [TOKEN]).text;
      assert.ok(out.includes(S), `${user}: ${out}`);
      // What is left of the payload is at most the user name's bytes and two partial characters.
      const rest = out.slice('Authorization: Basic '.length).replace(S, '');
      assert.ok(rest.replace(/=+$/, '').length <= Math.ceil(((user.length + 1) * 4) / 3) + 2, rest);
    }
  });
});

describe('redactSecrets: what is not redacted', () => {
  it(`skips secrets shorter than ${MIN_SECRET_LENGTH} characters`, () => {
    assert.deepEqual(redactSecrets('hunter2 hunter2', ['hunter2']), { text: 'hunter2 hunter2', redacted: 0 });
    assert.equal(redactSecrets('12345678', ['12345678']).text, S);
  });

  it('counts length in code points', () => {
    assert.deepEqual(redactSecrets('🔑🔑🔑🔑', ['🔑🔑🔑🔑']).redacted, 0); // 4 code points, 8 code units
  });

  it('is case-insensitive (issue 16: an upper-cased secret is still the secret)', () => {
    assert.equal(redactSecrets(TOKEN.toUpperCase(), [TOKEN]).text, S);
  });

  it('leaves a secret of fewer than 8 letters and digits to its exact forms', () => {
    // '!!!!--ab' folds to 'ab': far too short to look for in disguise.
    assert.equal(redactSecrets('!!!!--AB', ['!!!!--ab']).redacted, 0);
    assert.equal(redactSecrets('!!!!--ab', ['!!!!--ab']).text, S);
  });

  it('ignores empty lists, empty strings and non-string entries', () => {
    assert.deepEqual(redactSecrets(`a ${TOKEN}`, []), { text: `a ${TOKEN}`, redacted: 0 });
    assert.deepEqual(redactSecrets('a', ['']), { text: 'a', redacted: 0 });
    assert.equal(redactSecrets(`a ${TOKEN}`, [undefined, 42, TOKEN] as unknown as string[]).text, `a ${S}`);
    assert.deepEqual(redactSecrets('a', undefined as unknown as string[]), { text: 'a', redacted: 0 });
    assert.deepEqual(redactSecrets(undefined as unknown as string, [TOKEN]), { text: '', redacted: 0 });
  });
});

describe('redactSecrets: what it derives from a list is kept per list', () => {
  it('tells two lists apart even when one secret holds what would separate two', () => {
    // A cache keyed by the secrets joined with NUL took the first list's matcher for the second,
    // and the disguised form of 'abcdefgh' went through.
    assert.equal(redactSecrets('a-b-c-d-e-f-g-h', ['abcdefgh\u0000ijklmnop']).redacted, 0);
    assert.deepEqual(redactSecrets('a-b-c-d-e-f-g-h and abcdefgh', ['abcdefgh', 'ijklmnop']), {
      text: `${S} and ${S}`,
      redacted: 2,
    });
  });

  it('never throws on a list holding what JSON cannot write (non-strings are ignored)', () => {
    const odd = [
      1n,
      {
        toJSON: () => {
          throw new Error('boom');
        },
      },
      TOKEN,
    ] as unknown as string[];
    assert.equal(redactSecrets(`a ${TOKEN}`, odd).text, `a ${S}`);
  });

  it('derives a list changed in place again (the same array, other secrets)', () => {
    const list = ['first-secret-0123', 'second-secret-4567'];
    assert.equal(redactSecrets('first-secret-0123 third-secret-89ab', list).text, `${S} third-secret-89ab`);
    list[0] = 'third-secret-89ab';
    assert.equal(redactSecrets('first-secret-0123 third-secret-89ab', list).text, `first-secret-0123 ${S}`);
    list.push('first-secret-0123');
    assert.equal(redactSecrets('first-secret-0123 third-secret-89ab', list).text, `${S} ${S}`);
  });

  it('derives the forms once for equal lists and hands out a frozen list', () => {
    const first = secretForms([TOKEN]);
    assert.equal(secretForms([TOKEN]), first);
    assert.ok(Object.isFrozen(first.forms));
    assert.throws(() => (first.forms as string[]).push('x'));
    assert.notEqual(secretForms([TOKEN, 'another-secret-1234']), first);
  });
});

describe('redactSecrets: the result never contains a secret', () => {
  it('even when the secret is part of the replacement text', () => {
    const out = redactSecrets('my password is redacted', ['redacted']).text;
    assert.ok(!out.includes('redacted'), out);
    assert.ok(!out.includes('[secret redacted]'));
  });

  it('even when a replacement would join its neighbour into a secret', () => {
    // Redacting TOKEN with '[secret redacted]' would produce 'redacted]tail' — itself a secret.
    const out = redactSecrets(`${TOKEN}tail!`, [TOKEN, 'redacted]tail']).text;
    assert.ok(!out.includes('redacted]tail'), out);
    assert.ok(!out.includes(TOKEN));
  });

  const secretArb = fc.oneof(
    fc.string({ minLength: MIN_SECRET_LENGTH, maxLength: 24 }),
    fc.string({ unit: 'binary', minLength: MIN_SECRET_LENGTH, maxLength: 12 }),
    fc.string({ unit: fc.constantFrom('a', 'b'), minLength: MIN_SECRET_LENGTH, maxLength: 12 }),
    fc.constantFrom('[secret redacted]', 'redacted', 'secret redacted', 'ed]ed]ed]', '[secret ', 'aaaaaaaa'),
  );

  it('for any text and secrets: no configured secret and no base64 of one survives', () => {
    fc.assert(
      fc.property(
        fc.array(secretArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.oneof(fc.string(), fc.constantFrom('a', 'b', '[', ']', ' ', S)), { maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (secrets, noise, picks) => {
          // Interleave the secrets (raw and base64) with noise.
          const parts = [...noise];
          for (const [i, pick] of picks.entries()) {
            const secret = secrets[pick % secrets.length]!;
            parts.splice(pick % (parts.length + 1), 0, i % 3 === 2 ? b64(secret) : secret);
          }
          const out = redactSecrets(parts.join(''), secrets).text;
          for (const secret of secrets) {
            if ([...secret].length < MIN_SECRET_LENGTH) continue;
            assert.ok(!out.includes(secret), `${JSON.stringify(secret)} in ${JSON.stringify(out)}`);
            assert.ok(!out.includes(b64(secret)));
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('is total: never throws', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.array(fc.string({ unit: 'binary' })), (text, secrets) => {
        const result = redactSecrets(text, secrets);
        assert.equal(typeof result.text, 'string');
        assert.ok(Number.isInteger(result.redacted) && result.redacted >= 0);
      }),
      { numRuns: 300 },
    );
  });

  it('lone surrogates in secrets and text do not throw', () => {
    assert.equal(redactSecrets('x\ud800abcdefgh\udc00', ['\ud800abcdefgh']).text, `x${S}\udc00`);
  });
});

describe('redactSecrets: linear time', () => {
  const secrets = ['aaaaaaaa', 'aaaaaaab', TOKEN, 'x'.repeat(40), 'e x t e r n a l'];
  for (const [name, input] of Object.entries(ADVERSARIAL_INPUTS)) {
    it(`100k adversarial input (${name}) in < ${ADVERSARIAL_BUDGET_MS} ms`, () => {
      const ms = timeMs(() => redactSecrets(input, secrets));
      assert.ok(ms < ADVERSARIAL_BUDGET_MS, `${ms.toFixed(1)} ms`);
    });
  }

  it('100k characters that are all one secret, overlapping everywhere', () => {
    const input = repeatTo('a');
    let result: { text: string; redacted: number } = { text: '', redacted: 0 };
    const ms = timeMs(() => (result = redactSecrets(input, ['aaaaaaaa'])));
    assert.ok(ms < ADVERSARIAL_BUDGET_MS, `${ms.toFixed(1)} ms`);
    assert.ok(!result.text.includes('aaaaaaaa'));
  });
});
