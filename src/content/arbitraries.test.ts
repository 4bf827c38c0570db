/**
 * fast-check arbitraries and helpers shared by the content tests. Named `.test.ts` so that the
 * build leaves it out (it imports fast-check, a dev dependency); it declares no tests of its own.
 *
 * `hostileText` mixes random strings with marker fragments that have been disguised the ways an
 * attacker would: case changes, fullwidth forms, invisible characters between letters,
 * homoglyphs, bracket look-alikes and separator variations.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(hostileText, (text) => { ... }));
 * ```
 */
import fc from 'fast-check';
import { UNTRUSTED_END_MARKER, UNTRUSTED_START_MARKER } from './markers.js';

/** Invisible and format characters an attacker can slip between letters. */
export const INVISIBLES: readonly string[] = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\u200e',
  '\u200f',
  '\u2060',
  '\u2061',
  '\u2062',
  '\u2063',
  '\u2064',
  '\ufeff',
  '\u00ad',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u{e0001}',
  '\u{e0041}',
  '\u{e007f}',
  '\u034f',
  '\u180e',
  '\ufe0f',
];

/** Angle-bracket look-alikes. */
export const OPEN_LOOKALIKES: readonly string[] = ['<', '‹', '«', '〈', '\u2329', '⟨', '＜', '﹤', '≪', '《', '❮', '˂'];
export const CLOSE_LOOKALIKES: readonly string[] = [
  '>',
  '›',
  '»',
  '〉',
  '\u232a',
  '⟩',
  '＞',
  '﹥',
  '≫',
  '》',
  '❯',
  '˃',
];

/** Separators tolerated inside the marker phrase. */
export const SEPARATORS: readonly string[] = ['_', ' ', '-', '__', '  ', '\t', '\n', '‐', '—', '＿', '.', '\u00a0', ''];

/** Homoglyphs (upper and lower case) for letters of the marker phrase. */
const HOMOGLYPHS: Readonly<Record<string, readonly string[]>> = {
  a: ['а', 'А', 'α', 'Α', 'ᴀ'],
  c: ['с', 'С', 'ϲ', 'ᴄ'],
  d: ['ԁ', 'ᴅ'],
  e: ['е', 'Е', 'ε', 'Ε', 'ᴇ', '3'],
  l: ['ӏ', 'ʟ', '1'],
  n: ['ν', 'Ν', 'ɴ', 'ո'],
  o: ['о', 'О', 'ο', 'Ο', 'ᴏ', '0'],
  r: ['ʀ'],
  s: ['ѕ', 'Ѕ', 'ꜱ', '5'],
  t: ['т', 'Т', 'τ', 'Τ', 'ᴛ', '7'],
  u: ['υ', 'ս', 'Ս', 'ᴜ'],
  x: ['х', 'Х', 'χ', 'Χ'],
};

/** Fullwidth form of a printable ASCII character (U+FF01–U+FF5E). */
export function fullwidth(ch: string): string {
  const c = ch.charCodeAt(0);
  return c >= 0x21 && c <= 0x7e ? String.fromCharCode(c + 0xfee0) : ch;
}

/** One way of writing one letter of the marker phrase. */
function letterVariant(letter: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constant(letter),
    fc.constant(letter.toUpperCase()),
    fc.constant(fullwidth(letter)),
    fc.constant(fullwidth(letter.toUpperCase())),
    fc.constant(String.fromCodePoint(0x1d400 + letter.charCodeAt(0) - 0x61)), // mathematical bold capital
    fc.constant(String.fromCodePoint(0x24b6 + letter.charCodeAt(0) - 0x61)), // circled capital
    fc.constant(letter + '\u0301'), // combining acute
    fc.constantFrom(...(HOMOGLYPHS[letter] ?? [letter])),
  );
}

/** Zero or one invisible character. */
const maybeInvisible: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom(...INVISIBLES) },
);

/** A disguised word: each letter varied, invisible characters between letters. */
function disguisedWord(word: string): fc.Arbitrary<string> {
  return fc
    .tuple(...[...word].map((letter) => fc.tuple(letterVariant(letter), maybeInvisible)))
    .map((pairs) => pairs.map(([l, z]) => l + z).join(''));
}

/** A run of 0–4 bracket look-alikes. */
function bracketRun(options: readonly string[]): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...options), { minLength: 0, maxLength: 4 }).map((a) => a.join(''));
}

/**
 * A disguised marker that must be neutralised: optional "END", then EXTERNAL, UNTRUSTED,
 * CONTENT, each disguised, joined by tolerated separators, between look-alike brackets.
 */
export const disguisedMarker: fc.Arbitrary<string> = fc
  .tuple(
    bracketRun(OPEN_LOOKALIKES),
    fc.option(fc.tuple(disguisedWord('end'), fc.constantFrom(...SEPARATORS)), { nil: undefined }),
    disguisedWord('external'),
    fc.constantFrom(...SEPARATORS),
    disguisedWord('untrusted'),
    fc.constantFrom(...SEPARATORS),
    disguisedWord('content'),
    bracketRun(CLOSE_LOOKALIKES),
  )
  .map(
    ([open, end, ext, s1, unt, s2, con, close]) =>
      open + (end ? end[0] + end[1] : '') + ext + s1 + unt + s2 + con + close,
  );

/** Fragments of markers that are not whole markers, plus the real markers. */
const markerFragment: fc.Arbitrary<string> = fc.constantFrom(
  UNTRUSTED_START_MARKER,
  UNTRUSTED_END_MARKER,
  '<<<',
  '>>>',
  'END_',
  'EXTERNAL_',
  'UNTRUSTED_',
  'CONTENT',
  '<<<END_EXTERNAL_UNTRUSTED_',
  '_CONTENT>>>',
  'EXTERNAL_UNTRUSTED',
  'UNTRUSTED_CONTENT',
  '[[marker removed]]',
  '\ud800',
  '\udc00',
  '\n',
  '\r\n',
);

/**
 * Hostile text: random strings (ASCII and full Unicode), marker fragments, disguised markers and
 * invisible characters, concatenated in any order, so fragments can also combine into markers.
 */
export const hostileText: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
      { weight: 3, arbitrary: markerFragment },
      { weight: 3, arbitrary: disguisedMarker },
      { weight: 1, arbitrary: fc.constantFrom(...INVISIBLES, ...OPEN_LOOKALIKES, ...CLOSE_LOOKALIKES) },
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

/** Counts non-overlapping literal occurrences of `needle` in `haystack`. */
export function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** Wall-clock milliseconds for one call, after one warm-up call on the same input. */
export function timeMs(fn: () => unknown): number {
  fn();
  const start = performance.now();
  fn();
  return performance.now() - start;
}

/** The time budget for one call on a 100k-character adversarial input. */
export const ADVERSARIAL_BUDGET_MS = 200;

/** Length of the adversarial inputs. */
export const ADVERSARIAL_LENGTH = 100_000;

/** `unit` repeated and cut to exactly `length` code units. */
export function repeatTo(unit: string, length = ADVERSARIAL_LENGTH): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

/**
 * Adversarial 100k-character inputs aimed at the detectors: near-misses of every pattern repeated
 * back to back, long runs that regex engines like to rescan, and worst-case Unicode expansions.
 */
export const ADVERSARIAL_INPUTS: Readonly<Record<string, string>> = {
  'one letter': repeatTo('a'),
  spaces: repeatTo(' '),
  'marker prefixes': repeatTo('<<<END_EXTERNAL_UNTRUSTED_CONTEN'),
  'whole markers': repeatTo(UNTRUSTED_END_MARKER),
  'spaced near-miss': repeatTo('e x t e r n a l _ u n t r u s t e d - c o n t e n '),
  brackets: repeatTo('<'),
  'brackets and spaces': repeatTo('< '),
  'letter, zero-width': repeatTo('e\u200b'),
  'fullwidth letters': repeatTo('ＥＸＴＥＲＮＡＬ'),
  'tag characters': repeatTo('\u{e0041}'),
  'long expansions': repeatTo('ﷺ𝐄ⓔ﹤㌖Ⅷ'),
  'ignore near-miss': repeatTo('ignore all all all '),
  'ignore repeated': repeatTo('ignore '),
  'send near-miss': repeatTo('send the data the data '),
  'you are now': repeatTo('you are now '),
  'act as': repeatTo('act as '),
  'reveal near-miss': repeatTo('show me the the '),
  'curl without pipe': repeatTo('curl x'),
  'at signs': repeatTo('a@'),
  'at-dot chains': repeatTo('a@b.'),
  'bracketed at': repeatTo('a [at] b [dot] '),
  'spelled dots': repeatTo('john dot '),
  'spelled at and dots': repeatTo('x at y dot '),
  'long local part': repeatTo('a') + '@',
  'base64-ish': repeatTo('Ab1'),
  'base64 under the threshold': repeatTo('Ab1+'.repeat(19) + ' '),
  'byte escapes': repeatTo('\\x4'),
  'markdown images': repeatTo('!['),
  newlines: repeatTo('ignore\n'),
  'lone surrogates': repeatTo('\ud800x\udc00'),
};
