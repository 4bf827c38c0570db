import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import fc from 'fast-check';

import { MIN_SECRET_LENGTH, SECRET_REPLACEMENT, redactSecrets } from '../../content/index.js';
import { createReplyScrubber, type ReplyScrubber } from './scrub.js';

const S = SECRET_REPLACEMENT;
const TOKEN = 'tok_0123456789abcdef';

/** Pushes `chunks` through a new stream of `scrubber` and returns everything it emitted. */
function streamed(scrubber: ReplyScrubber, chunks: readonly string[]): string {
  const stream = scrubber.stream();
  let out = '';
  for (const chunk of chunks) out += stream.push(chunk);
  return out + stream.flush();
}

/** `text` cut at the given positions (any order, duplicates allowed). */
function cutAt(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const p of points) {
    chunks.push(text.slice(from, p));
    from = p;
  }
  chunks.push(text.slice(from));
  return chunks;
}

/** The encodings of `secret` a reply could carry, as the test knows them (independently of scrub.ts). */
function encodings(secret: string): string[] {
  const b64 = Buffer.from(secret, 'utf8').toString('base64');
  return [
    secret,
    b64,
    b64.replace(/=+$/, ''),
    b64.replace(/\+/g, '-').replace(/\//g, '_'),
    Buffer.from(secret, 'utf8').toString('base64url'),
    ...uriEncoded(secret),
  ].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/** `encodeURIComponent` in both hex cases; nothing for a lone surrogate, which it refuses. */
function uriEncoded(secret: string): string[] {
  try {
    const upper = encodeURIComponent(secret);
    return [upper, upper.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())];
  } catch {
    return [];
  }
}

describe('createReplyScrubber: no secrets', () => {
  it('is an inactive identity that returns the very same string', () => {
    const scrubber = createReplyScrubber([]);
    const text = `a reply ${'x'.repeat(100)}`;
    assert.equal(scrubber.active, false);
    assert.equal(scrubber.holdBack, 0);
    assert.equal(scrubber.scrub(text), text);
    assert.deepEqual(scrubber.redact(text), { text, redacted: 0 });
  });

  it('shares one scrubber and one stateless stream: nothing is allocated per reply', () => {
    const a = createReplyScrubber([]);
    assert.equal(createReplyScrubber([]), a);
    assert.equal(a.stream(), a.stream());
    const stream = a.stream();
    const chunk = 'chunk';
    assert.equal(stream.push(chunk), chunk);
    assert.equal(stream.flush(), '');
    assert.equal(stream.redacted, 0);
  });

  it('ignores secrets shorter than MIN_SECRET_LENGTH code points, and counts them', () => {
    assert.equal(MIN_SECRET_LENGTH, 8);
    const scrubber = createReplyScrubber(['hunter2', '1234567', '👋👋👋👋👋👋👋']);
    assert.equal(scrubber.active, false);
    assert.equal(scrubber.ignored, 3);
    assert.equal(scrubber.scrub('hunter2 1234567'), 'hunter2 1234567');
    assert.equal(streamed(scrubber, ['hunt', 'er2']), 'hunter2');
  });

  it('ignores non-strings without throwing', () => {
    const scrubber = createReplyScrubber([42, null, TOKEN] as unknown as string[]);
    assert.equal(scrubber.ignored, 2);
    assert.equal(scrubber.scrub(TOKEN), S);
    assert.equal(createReplyScrubber(undefined as unknown as string[]).active, false);
  });

  it('treats non-string text as empty', () => {
    assert.equal(createReplyScrubber([]).scrub(undefined as unknown as string), '');
    assert.equal(createReplyScrubber([TOKEN]).scrub(undefined as unknown as string), '');
  });
});

describe('createReplyScrubber: whole text', () => {
  const scrubber = createReplyScrubber([TOKEN]);

  it('replaces the secret', () => {
    assert.equal(scrubber.scrub(`token=${TOKEN}; again ${TOKEN}.`), `token=${S}; again ${S}.`);
    assert.deepEqual(scrubber.redact(`${TOKEN} ${TOKEN}`), { text: `${S} ${S}`, redacted: 2 });
  });

  it('returns text without a secret unchanged (the same string)', () => {
    const text = 'nothing to see here';
    assert.equal(scrubber.scrub(text), text);
  });

  it('replaces its base64 and URL-encoded forms', () => {
    for (const form of encodings(TOKEN)) assert.equal(scrubber.scrub(`[${form}]`), `[${S}]`, form);
  });

  it('finds the secret inside a longer base64 payload (a Basic credential)', () => {
    const basic = Buffer.from(`user:${TOKEN}`).toString('base64');
    assert.ok(!scrubber.scrub(`Authorization: Basic ${basic}`).includes(basic));
  });

  it('replaces overlapping occurrences with one replacement', () => {
    const s = createReplyScrubber(['abababab']);
    assert.equal(s.scrub('xababababab y'), `x${S} y`);
  });

  it('is case-insensitive, and sees through separators and encodings (issue 16)', () => {
    assert.equal(scrubber.scrub(TOKEN.toUpperCase()), S);
    assert.equal(scrubber.scrub(`x ${[...TOKEN].join(' ')} y`), `x ${S} y`);
    assert.equal(scrubber.scrub(Buffer.from(TOKEN).toString('hex')), S);
  });

  it('agrees with redactSecrets on text built from secrets, their encodings and prose', () => {
    // Secrets over an alphabet that shares nothing with "[secret redacted]" can never join a
    // replacement, so redactSecrets never needs its fallback and both must agree exactly.
    const alphabet = fc.constantFrom(...'ABCDEFGHIJKLMNOPQUVWXYZ0123456789_-+/é€😀'.split(/(?:)/u));
    const secret = fc.string({ unit: alphabet, minLength: 6, maxLength: 14 });
    fc.assert(
      fc.property(
        fc.array(secret, { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (secrets, picks) => {
          const pieces = secrets.flatMap(encodings);
          const text = picks.map((p) => (p % 3 === 0 ? ' prose ' : (pieces[p % pieces.length] ?? ''))).join('');
          assert.equal(createReplyScrubber(secrets).scrub(text), redactSecrets(text, secrets).text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('replaces a contrived secret that could join with the replacement, leaving no secret behind', () => {
    const contrived = ']secret-token-x';
    const s = createReplyScrubber([contrived]);
    const out = s.scrub(`${contrived}secret-token-x and ${contrived}`);
    assert.ok(!out.includes(contrived));
    assert.ok(!out.includes('[secret redacted]')); // the fallback replacement is used throughout
    assert.ok(!redactSecrets(out, [contrived]).redacted);
  });
});

describe('createReplyScrubber: streams', () => {
  const scrubber = createReplyScrubber([TOKEN]);

  it('replaces a secret split across two chunks, at every split point', () => {
    const text = `before ${TOKEN} after`;
    for (let cut = 0; cut <= text.length; cut++) {
      assert.equal(streamed(scrubber, [text.slice(0, cut), text.slice(cut)]), `before ${S} after`, `cut ${cut}`);
    }
  });

  it('replaces a secret sent one character at a time', () => {
    const text = `x${TOKEN}y${Buffer.from(TOKEN).toString('base64')}z`;
    assert.equal(streamed(scrubber, [...text]), `x${S}y${S}z`);
  });

  it('never emits a secret prefix that the next chunk completes', () => {
    const stream = scrubber.stream();
    const first = stream.push(`hello ${TOKEN.slice(0, 10)}`);
    assert.ok(!first.includes(TOKEN.slice(0, 10)));
    assert.equal(first + stream.push(TOKEN.slice(10)) + stream.flush(), `hello ${S}`);
  });

  it('holds back at most holdBack characters of text with no secret in it', () => {
    // The normalising matcher's window: 8 characters per UTF-8 byte of the secret, plus 64.
    assert.equal(scrubber.holdBack, 8 * TOKEN.length + 64 - 1);
    const stream = scrubber.stream();
    let sent = 0;
    let emitted = 0;
    for (let i = 0; i < 200; i++) {
      const chunk = `chunk ${i} of a long reply. `;
      sent += chunk.length;
      emitted += stream.push(chunk).length;
      assert.ok(sent - emitted <= scrubber.holdBack, `${sent - emitted} held`);
    }
    assert.equal(emitted + stream.flush().length, sent);
  });

  it('counts replacements', () => {
    const stream = scrubber.stream();
    stream.push(`${TOKEN} and ${TOKEN.slice(0, 5)}`);
    stream.push(`${TOKEN.slice(5)} end`);
    stream.flush();
    assert.equal(stream.redacted, 2);
  });

  it('can be flushed and reused for another reply', () => {
    const stream = scrubber.stream();
    assert.equal(stream.push(`a ${TOKEN}`) + stream.flush(), `a ${S}`);
    assert.equal(stream.push(`b ${TOKEN}`) + stream.flush(), `b ${S}`);
  });

  it('keeps surrogate pairs whole at the cuts it makes', () => {
    const stream = scrubber.stream();
    const text = '😀'.repeat(100);
    let out = '';
    for (let i = 0; i < text.length; i += 7) {
      const piece = stream.push(text.slice(i, i + 7));
      if (piece.length > 0) assert.ok(!/[\ud800-\udbff]$/.test(piece), 'ends with half a pair');
      out += piece;
    }
    assert.equal(out + stream.flush(), text);
  });

  it('matches the whole-text result and leaves no secret, for any secrets and any chunking', () => {
    // A small alphabet that shares characters with the replacement, so secrets overlap each other,
    // repeat inside the text and sometimes join with "[secret redacted]".
    const unit = fc.constantFrom('a', 'b', 's', 'e', 'c', 'r', 't', ' ', '[', ']', 'd', '%', '=', '😀', '\ud800');
    const secret = fc.string({ unit, minLength: 5, maxLength: 12 });
    fc.assert(
      fc.property(
        fc.array(secret, { maxLength: 3 }),
        fc.array(fc.oneof(fc.string({ unit, maxLength: 10 }), fc.nat()), { maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (secrets, pieces, cuts) => {
          const forms = secrets.flatMap(encodings);
          const text = pieces
            .map((p) => (typeof p === 'string' ? p : (forms[p % Math.max(1, forms.length)] ?? '')))
            .join('');
          const scrubber = createReplyScrubber(secrets);
          const whole = scrubber.scrub(text);
          assert.equal(streamed(scrubber, cutAt(text, cuts)), whole);
          for (const s of secrets) {
            if ([...s].length < MIN_SECRET_LENGTH) continue;
            for (const form of encodings(s))
              assert.ok(!whole.includes(form), `output contains ${JSON.stringify(form)}`);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('createReplyScrubber: cost', () => {
  it('scrubs and streams a megabyte quickly', () => {
    const scrubber = createReplyScrubber([TOKEN, 'another-secret-value-123', `${TOKEN}-2`]);
    const text = `${'lorem ipsum dolor sit amet '.repeat(40_000)}${TOKEN}`;
    let start = performance.now();
    assert.ok(scrubber.scrub(text).endsWith(S));
    // The normalising matcher (issue 16) builds its views of the text too: ~70 ms warm, alone.
    assert.ok(performance.now() - start < 400, `whole text ${(performance.now() - start).toFixed(0)} ms`);
    start = performance.now();
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 64) chunks.push(text.slice(i, i + 64));
    assert.ok(streamed(scrubber, chunks).endsWith(S));
    assert.ok(performance.now() - start < 2000, `stream ${(performance.now() - start).toFixed(0)} ms`);
  });
});
