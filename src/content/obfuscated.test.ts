import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createObfuscationMatcher, skeletonOf } from './obfuscated.js';
import { hasHexRun, skeletonChars } from './obfuscated-views.js';
import { SECRET_REPLACEMENT, redactSecrets } from './redact.js';

const SECRET = 'sk-live-0123456789';
const b64 = (x: string | Buffer): string => Buffer.from(x).toString('base64');
const pairs = (s: string): string[] => Buffer.from(s).toString('hex').match(/../g) ?? [];
const codePoints = (s: string): number[] => [...s].map((c) => c.codePointAt(0) ?? 0);

/** Every disguise the matcher is meant to see through, as functions of the secret. */
export const DISGUISES: Readonly<Record<string, (s: string) => string>> = {
  'upper case': (s) => s.toUpperCase(),
  'mixed case': (s) => [...s].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join(''),
  'spaces between': (s) => [...s].join(' '),
  'dashes between': (s) => [...s].join('-'),
  'dots and underscores between': (s) => [...s].join('._'),
  'zero-width spaces between': (s) => [...s].join('\u200b'),
  'zero-width joiners between': (s) => [...s].join('\u200d'),
  'soft hyphens between': (s) => [...s].join('\u00ad'),
  'split by a newline': (s) => `${s.slice(0, 4)}\n${s.slice(4)}`,
  'split by CRLF': (s) => `${s.slice(0, 5)}\r\n${s.slice(5)}`,
  fullwidth: (s) =>
    codePoints(s)
      .map((c) => (c > 0x20 && c < 0x7f ? String.fromCodePoint(c + 0xfee0) : String.fromCodePoint(c)))
      .join(''),
  reversed: (s) => [...s].reverse().join(''),
  'reversed, upper case': (s) => [...s].reverse().join('').toUpperCase(),
  hex: (s) => Buffer.from(s).toString('hex'),
  'hex, upper case': (s) => Buffer.from(s).toString('hex').toUpperCase(),
  'hex, spaced': (s) => pairs(s).join(' '),
  'hex, colons': (s) => pairs(s).join(':'),
  'hex, 0x prefixes': (s) =>
    pairs(s)
      .map((h) => `0x${h}`)
      .join(', '),
  'hex, \\x escapes': (s) =>
    pairs(s)
      .map((h) => `\\x${h}`)
      .join(''),
  'percent, every byte': (s) =>
    pairs(s)
      .map((h) => `%${h}`)
      .join(''),
  'percent, every byte, upper case': (s) =>
    pairs(s)
      .map((h) => `%${h.toUpperCase()}`)
      .join(''),
  'HTML decimal entities': (s) =>
    codePoints(s)
      .map((c) => `&#${c};`)
      .join(''),
  'HTML hex entities': (s) =>
    codePoints(s)
      .map((c) => `&#x${c.toString(16).toUpperCase()};`)
      .join(''),
  '\\u escapes': (s) =>
    codePoints(s)
      .map((c) => `\\u${c.toString(16).padStart(4, '0')}`)
      .join(''),
  '\\u{} escapes': (s) =>
    codePoints(s)
      .map((c) => `\\u{${c.toString(16)}}`)
      .join(''),
  base64: (s) => b64(s),
  'base64 inside a longer payload': (s) => b64(`user:${s}`),
  'base64, url-safe': (s) => b64(`>>?${s}`).replace(/\+/g, '-').replace(/\//g, '_'),
  'base64 with line breaks': (s) => b64(`prefix ${s} suffix`).replace(/(.{6})/g, '$1\n'),
  'base64 with CRLF every 4': (s) => b64(s).replace(/(.{4})/g, '$1\r\n'),
  'base64 of base64': (s) => b64(b64(s)),
  'base64 of base64 of a payload': (s) => b64(`x=${b64(`a:${s}`)}`),
  'base64 of UTF-16LE': (s) => b64(Buffer.from(s, 'utf16le')),
  'base64 of UTF-16BE': (s) => b64(Buffer.from(s, 'utf16le').swap16()),
};

describe('createObfuscationMatcher: every disguise', () => {
  const matcher = createObfuscationMatcher([SECRET]);
  for (const [name, disguise] of Object.entries(DISGUISES)) {
    it(`finds the secret as ${name}`, () => {
      const form = disguise(SECRET);
      const text = `before: ${form} :after`;
      const spans = matcher.spans(text);
      assert.ok(spans !== undefined, `not found in ${JSON.stringify(text)}`);
      const out = redactSecrets(text, [SECRET]);
      assert.ok(out.text.startsWith('before: '), out.text);
      assert.ok(out.text.endsWith(' :after'), out.text);
      assert.ok(out.text.includes(SECRET_REPLACEMENT), out.text);
      assert.equal(redactSecrets(out.text, [SECRET]).redacted, 0, out.text);
    });
  }
});

describe('createObfuscationMatcher: what it leaves alone', () => {
  const matcher = createObfuscationMatcher([SECRET, 'tok_ABCDEFGHIJ0123']);

  it('is inactive without a usable secret', () => {
    for (const secrets of [[], ['short'], [42 as unknown as string]]) {
      const m = createObfuscationMatcher(secrets);
      assert.equal(m.active, false);
      assert.equal(m.maxSpan, 0);
      assert.equal(m.spans(SECRET), undefined);
    }
  });

  it('finds nothing in prose, code, URLs, hex hashes and base64 blobs that hold no secret', () => {
    const texts = [
      'The quick brown fox jumps over the lazy dog. See https://example.com/a?b=%20c&d=e.',
      'const x = 0xdeadbeef; // cafe babe face feed',
      'sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      b64('an ordinary attachment with nothing to hide, really'),
      '&amp; &lt;b&gt; \\u00e9 %E2%82%AC',
      'sk live 01234 5678', // a prefix of the secret's letters only
    ];
    for (const text of texts) assert.equal(matcher.spans(text), undefined, text);
  });

  it('does not match a secret of fewer than 8 letters and digits in folded form', () => {
    const m = createObfuscationMatcher(['!!--ab--!!']);
    assert.equal(m.spans('A B'), undefined);
  });

  it('ignores a disguise spread over more than maxSpan characters', () => {
    const far = [...SECRET].join(' '.repeat(20));
    assert.ok(far.length > matcher.maxSpan);
    assert.equal(matcher.spans(far), undefined);
  });

  it('reports the span of the disguise in the original text', () => {
    const text = `x ${[...SECRET].join(' ')} y`;
    assert.deepEqual(matcher.spans(text)?.slice(0, 2), [2, text.length - 2]);
  });
});

describe('skeletonOf', () => {
  it('folds case, width, separators and invisible characters', () => {
    assert.equal(skeletonOf('Ｓk-LIVE\u200b_\u00ad01'), 'sklive01');
    assert.equal(skeletonOf('É-ß'), 'eß');
  });
});

describe('skeletonOf: the table of one-code skeletons', () => {
  it('is the skeleton of each code point in turn, for every code point of the Basic Multilingual Plane (learnt, then read)', () => {
    let text = '';
    let expected = '';
    for (let cp = 0x80; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      text += `${String.fromCharCode(cp)}z`;
      expected += `${skeletonChars(cp)}z`;
    }
    assert.equal(skeletonOf(text), expected);
    assert.equal(skeletonOf(text), expected);
  });
});

describe('hasHexRun', () => {
  /** The runs of the hex view, read with patterns: digits between separators, ended by anything else. */
  const longestRun = (text: string): number =>
    Math.max(
      0,
      ...text.split(/[^0-9a-fA-F \t\n\r:,.\-_%\\#&;xX]/).map((run) => run.replace(/[^0-9a-fA-F]/g, '').length),
    );

  it('is true exactly when a run of the hex view holds the digits', () => {
    const unit = fc.constantFrom(
      ...'0123456789abcdefABCDEF :,.-_%\\#&;xX\t\n\rgzG!é\u00a0\u2028'.split(''),
      '0x',
      '\ud83d\ude00',
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 60 }), fc.integer({ min: 1, max: 24 }), (units, digits) => {
        const text = units.join('');
        assert.equal(hasHexRun(text, digits), longestRun(text) >= digits, JSON.stringify(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('finds the hex of the shortest secret, 16 digits between letters that end a run', () => {
    const matcher = createObfuscationMatcher(['k3y-2024']);
    const hex = Buffer.from('k3y-2024').toString('hex');
    assert.ok(matcher.spans(`zz ${hex} zz`) !== undefined);
    assert.ok(matcher.spans(`zz ${pairs('k3y-2024').join(':')} zz`) !== undefined);
  });
});

describe('skeleton needles in ASCII text, wherever they start', () => {
  it('finds the secret spelt out after any prefix of prose, between letters no needle holds', () => {
    const matcher = createObfuscationMatcher([SECRET]);
    const prose = 'quick wry fox, jumpy dwarf; quiz whiz. '.repeat(2);
    for (let p = 0; p < 40; p++) {
      for (const form of [SECRET, SECRET.toUpperCase(), [...SECRET].join(' '), [...SECRET].reverse().join('.')]) {
        for (const edge of ['', 'q', 'qq ']) {
          const text = `${prose.slice(0, p)}${edge}${form}${edge}${prose.slice(p)}`;
          assert.ok(matcher.spans(text) !== undefined, JSON.stringify(text));
        }
      }
    }
  });

  it('finds the needle that only just fits between two letters no needle holds', () => {
    const matcher = createObfuscationMatcher([SECRET]);
    assert.ok(matcher.spans(`q${'sklive0123456789'}q`) !== undefined);
    assert.equal(matcher.spans(`q${'sklive012345678'}q9`), undefined);
  });
});

describe('skeleton needles in text outside ASCII, wherever they start', () => {
  /** One character of a secret in a form whose skeleton is that character. */
  const lookAlike = (c: string, form: number): string => {
    const code = c.charCodeAt(0);
    const letter = code >= 0x61 && code <= 0x7a;
    if (form === 1) return c.toUpperCase();
    if (form === 2) return String.fromCodePoint(code + 0xfee0); // fullwidth
    if (form === 3 && letter) return String.fromCodePoint(0x1d41a + code - 0x61); // mathematical bold
    if (form === 3) return String.fromCodePoint(0x1d7ce + code - 0x30); // mathematical bold digit
    if (form === 4 && letter) return String.fromCodePoint(0x24d0 + code - 0x61); // circled
    return c;
  };
  const LIGATURES: readonly (readonly [string, string])[] = [
    ['ffi', '\ufb03'],
    ['ffl', '\ufb04'],
    ['ff', '\ufb00'],
    ['fi', '\ufb01'],
    ['fl', '\ufb02'],
  ];
  const disguised = (secret: string, forms: readonly number[], gaps: readonly string[]): string => {
    let out = '';
    for (let i = 0; i < secret.length; i++) {
      const ligature = forms[i] === 5 ? LIGATURES.find(([plain]) => secret.startsWith(plain, i)) : undefined;
      out += ligature === undefined ? lookAlike(secret[i] as string, forms[i] ?? 0) : ligature[1];
      if (ligature !== undefined) i += ligature[0].length - 1;
      out += gaps[i] ?? '';
    }
    return out;
  };
  const prose = fc.constantFrom(
    '这是一个测试消息，我们正在检查性能。',
    'مرحبا كيف حالك اليوم؟ ',
    'Привет, как дела? ',
    'Καλημέρα σας. ',
    'naïve façade, déjà vu. ',
  );

  it('finds a secret in any mix of look-alike forms, ligatures and gaps, inside prose in other scripts', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^(?:[a-z0-9]|ffi|ffl|fl){8,16}$/),
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 48, maxLength: 48 }),
        fc.array(fc.constantFrom('', '', ' ', '\u200b', '-'), { minLength: 48, maxLength: 48 }),
        prose,
        fc.nat({ max: 30 }),
        (secret, forms, gaps, before, cut) => {
          const matcher = createObfuscationMatcher([secret]);
          const around = before.repeat(3);
          const text = `${around.slice(0, cut)}${disguised(secret, forms, gaps)}${around.slice(cut)}`;
          assert.ok(matcher.spans(text) !== undefined, `${secret} in ${JSON.stringify(text)}`);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('finds a secret written in fewer characters than its skeleton, between characters no needle holds', () => {
    const matcher = createObfuscationMatcher(['ffiffiffiffl']);
    for (const text of [
      '测试\ufb03\ufb03\ufb03\ufb04测试',
      '\ufb03\ufb03\ufb03\ufb04',
      '这\ufb03 \ufb03\ufb03\ufb04是',
    ]) {
      assert.ok(matcher.spans(text) !== undefined, JSON.stringify(text));
    }
    assert.equal(matcher.spans('测试\ufb03\ufb03测\ufb03\ufb04测试'), undefined);
    // Outside the plane: two code units a character.
    const bold = [...'sklive0123456789']
      .map((c) => String.fromCodePoint(c < 'a' ? 0x1d7ce + c.charCodeAt(0) - 0x30 : 0x1d41a + c.charCodeAt(0) - 0x61))
      .join('');
    assert.ok(createObfuscationMatcher([SECRET]).spans(`测试${bold}测试`) !== undefined);
  });

  it('finds nothing in long text in a script no needle uses, nor in it with the secret cut short', () => {
    const matcher = createObfuscationMatcher([SECRET]);
    const text = '这是一个测试消息，我们正在检查性能。'.repeat(250);
    assert.equal(matcher.spans(text), undefined);
    assert.equal(matcher.spans(`${text}ｓｋ－ｌｉｖｅ－０１２３４５６７８${text}`), undefined);
    assert.ok(matcher.spans(`${text}ｓｋ－ｌｉｖｅ－０１２３４５６７８９${text}`) !== undefined);
  });
});

describe('base64 runs, wherever they start', () => {
  it('finds the base64 of the shortest secret (11 characters) after any prefix, with line breaks inside', () => {
    const secret = 'k3y-2024';
    const form = b64(secret).replace(/=+$/, '');
    assert.equal(form.length, 11);
    const matcher = createObfuscationMatcher([secret]);
    for (let p = 0; p < 30; p++) {
      const prefix = 'ab cd ef gh ij kl mn op qr st uv'.slice(0, p);
      for (let cut = 0; cut <= form.length; cut++) {
        for (const form2 of [
          form,
          `${form.slice(0, cut)}\n${form.slice(cut)}`,
          `${form.slice(0, cut)}\r\n${form.slice(cut)}`,
        ]) {
          const text = `${prefix} ${form2}. ok`;
          assert.ok(matcher.spans(text) !== undefined, JSON.stringify(text));
        }
      }
    }
  });

  it('does not read a run across a character outside the alphabet', () => {
    const secret = 'k3y-2024';
    const form = b64(secret).replace(/=+$/, '');
    const matcher = createObfuscationMatcher([secret]);
    for (let cut = 1; cut < form.length; cut++) {
      const text = `${form.slice(0, cut)} ${form.slice(cut)}`;
      // The skeleton still sees letters and digits; only the base64 reading is looked at here.
      const spans = matcher.spans(text) ?? [];
      assert.ok(!(spans[0] === 0 && spans[1] === text.length), JSON.stringify(text));
    }
  });
});

describe('createObfuscationMatcher: cost', () => {
  it('stays linear: 1 MB of adversarial text in well under a second each', () => {
    const matcher = createObfuscationMatcher([SECRET, 'tok_ABCDEFGHIJ0123']);
    for (const unit of ['a', 'sk-', '%73', '&#115;', '\\u0073', 'c2stbGl2', 'ＳＫ\u200b', '0x73 ', '\n']) {
      const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
      const start = performance.now();
      matcher.spans(text);
      const ms = performance.now() - start;
      assert.ok(ms < 1500, `${JSON.stringify(unit)}: ${ms.toFixed(0)} ms`);
    }
  });
});

describe('redactSecrets with the normalising matcher: property', () => {
  it('for random secrets of 8+ characters and every disguise, the output holds no decodable form', () => {
    const alphabet = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_'.split(''));
    const secret = fc.string({ unit: alphabet, minLength: 8, maxLength: 40 }).filter((s) => skeletonOf(s).length >= 8);
    const filler = fc.string({ unit: fc.constantFrom(...'the quick brown fox, 42! \n'.split('')), maxLength: 30 });
    const names = Object.keys(DISGUISES);
    fc.assert(
      fc.property(secret, fc.constantFrom(...names), filler, filler, (s, name, left, right) => {
        const form = (DISGUISES[name] as (x: string) => string)(s);
        const text = `${left} ${form} ${right}`;
        const out = redactSecrets(text, [s]).text;
        // Nothing the matcher (or the exact forms) would still find…
        assert.equal(redactSecrets(out, [s]).redacted, 0, `${name}: ${JSON.stringify(out)}`);
        // …and none of the disguised forms, nor the secret, in the output.
        for (const disguise of Object.values(DISGUISES)) assert.ok(!out.includes(disguise(s)), name);
        assert.ok(!out.toLowerCase().includes(s.toLowerCase()));
      }),
      { numRuns: 600 },
    );
  });
});
