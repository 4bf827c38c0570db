/**
 * The detection skeleton behind marker neutralisation (`neutralise.ts`): every code point of a
 * text mapped to the few characters the phrase pattern reads (a letter of the phrase, a
 * separator, a bracket, a letter-like symbol, or another letter), with the confusables data
 * (UTS #39), folding and invisible characters taken into account.
 *
 * @example
 * ```ts
 * skeleton('ＥＸＴ').skel; // 'ext'
 * ```
 */
import { foldCodePoint, isInvisible } from './fold.js';
import { confusablePrototype } from './confusables.js';

/**
 * Digits read as letters ("3XT3RNAL", "C0NTENT"). Symbols that resemble a letter ('|', '$') are
 * letter-like marks instead (see {@link skeleton}): separators except where the phrase wants
 * that letter, so "EXTERNAL|UNTRUSTED" and "UNTRU$TED" are both caught.
 */
const DIGIT_AS_LETTER: Readonly<Record<string, string>> = {
  '0': 'o',
  '1': 'l',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
};

/** Angle-bracket look-alikes (after folding, which already maps '＜', '﹤' and the like to '<'). */
const BRACKETS = new Set([...'<‹«〈⟨⟪《≪⋘❮❬❰˂ᐸ⧼⦉⦑⊲◁◀◂◃', ...'>›»〉⟩⟫》≫⋙❯❭❱˃ᐳ⧽⦊⦒⊳▷▶▸▹', '\u2329', '\u232a'].flat());

const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;
const LINE_BREAK = /^[\n\v\f\r\u0085\u2028\u2029]$/;
const ASCII_ONLY = /^\p{ASCII}*$/u;

/**
 * A separator in the skeleton (space, punctuation, symbols, controls). Letters 'a'–'z' stand for
 * themselves.
 *
 * @example
 * ```ts
 * skeleton('a-b').skel; // 'a b'
 * ```
 */
export const SEP = ' ';
const NEWLINE = '\n';
/**
 * An angle bracket or a look-alike of one in the skeleton.
 *
 * @example
 * ```ts
 * skeleton('«x»').skel; // '<x<'
 * ```
 */
export const BRACKET = '<';
const OTHER = '#';

/** Skeleton characters are ASCII: written as bytes, decoded once. */
const LATIN1 = new TextDecoder('latin1');

/**
 * The detection skeleton of the text: each code point becomes its confusables skeleton (its
 * UTS #39 prototype from `confusables.ts`, folded, see `fold.ts`; a code point without a
 * prototype is only folded), each folded character classified as a letter 'a'–'z' (digits
 * included, see {@link DIGIT_AS_LETTER}), a bracket '<', a separator ' ' (space, punctuation,
 * symbols, controls), a letter-like symbol 'A'–'Z' (a symbol whose prototype is that letter: '$'
 * is 'S', '|' and '∣' are 'L'; a separator except where the phrase wants that letter) or other
 * '#' (any other letter or digit, which breaks the phrase); line breaks are separators written
 * '\n', so that bracket widening stops at them. Invisible characters (zero width, bidi
 * embeddings, overrides and isolates, tag characters, …) have an empty skeleton: they are
 * stripped before matching. `owner[k]` is the code-unit index, in the original, of the code
 * point skeleton character `k` came from; `null` means the identity (ASCII text).
 *
 * @example
 * ```ts
 * skeleton('3XT').skel; // 'ext'
 * ```
 */
export function skeleton(text: string): { skel: string; owner: Int32Array | null } {
  const length = text.length;
  if (ASCII_ONLY.test(text)) {
    const codes = new Uint8Array(length);
    for (let i = 0; i < length; i++) codes[i] = ASCII_CODES[text.charCodeAt(i)] ?? SEP_CODE;
    return { skel: LATIN1.decode(codes), owner: null };
  }
  let capacity = length + 16;
  let codes: Uint8Array = new Uint8Array(capacity);
  let owner: Int32Array = new Int32Array(capacity);
  let n = 0;
  for (let i = 0; i < length;) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      if (n === capacity) [codes, owner, capacity] = grow(codes, owner, capacity);
      codes[n] = ASCII_CODES[unit] ?? SEP_CODE;
      owner[n++] = i++;
      continue;
    }
    const cp = text.codePointAt(i) ?? 0;
    const sk = skeletonOf(cp);
    for (let j = 0; j < sk.length; j++) {
      if (n === capacity) [codes, owner, capacity] = grow(codes, owner, capacity);
      codes[n] = sk.charCodeAt(j);
      owner[n++] = i;
    }
    i += cp > 0xffff ? 2 : 1;
  }
  return { skel: LATIN1.decode(codes.subarray(0, n)), owner: owner.subarray(0, n) };
}

function grow(codes: Uint8Array, owner: Int32Array, capacity: number): [Uint8Array, Int32Array, number] {
  const next = capacity * 2;
  const c = new Uint8Array(next);
  c.set(codes);
  const o = new Int32Array(next);
  o.set(owner);
  return [c, o, next];
}

/** The skeleton of one folded character. */
function classify(ch: string): string {
  if (ch >= 'a' && ch <= 'z') return ch;
  const digit = DIGIT_AS_LETTER[ch];
  if (digit !== undefined) return digit;
  if (BRACKETS.has(ch)) return BRACKET;
  if (ch >= '0' && ch <= '9') return OTHER;
  if ((ch.codePointAt(0) ?? 0) >= 0x80 && LETTER_OR_NUMBER.test(ch)) return OTHER;
  if (LINE_BREAK.test(ch)) return NEWLINE;
  return SEP;
}

function classifyAll(folded: string): string {
  let sk = '';
  for (const ch of folded) sk += classify(ch);
  return sk;
}

const HAS_LETTER = /[a-z]/;
const ONE_LETTER = /^[a-z]$/;

/** Longest skeleton kept for one code point (as in `fold.ts`); a longer one is one separator. */
const MAX_EXPANSION = 6;

/**
 * The skeleton of one code point, computed: the folded code point classified (`native`) and the
 * same for its confusables prototype (`look`, `null` without one). A letter of another script
 * ('#' natively) takes its prototype. When both spell Latin letters, the one with more letters
 * of the phrase wins ('I' reads as 'l', Greek 'ν' stays 'n' rather than
 * the 'v' UTS #39 gives it), so the confusables data only ever adds look-alikes; when only the
 * prototype does and it is one letter (a symbol such as '$' or
 * '∣'), the code point is a letter-like symbol, written as that letter in upper case. An ASCII
 * code point keeps a one-character skeleton (ASCII text maps one to one): 'm' → "rn" is left to
 * the phrase pattern, which reads an 'm' there.
 */
function computeSkeleton(cp: number): string {
  if (isInvisible(cp)) return '';
  const native = classifyAll(foldCodePoint(cp));
  // Combining marks fold to nothing: they stay transparent, whatever their prototype.
  if (native === '') return '';
  const look = lookalikeSkeleton(cp);
  if (look === null || look === native || !HAS_LETTER.test(look)) return native;
  if (cp < 0x80 && look.length !== 1) return native;
  if (HAS_LETTER.test(native)) return phraseLetters(look) > phraseLetters(native) ? look : native;
  // A letter of another script (Lisu, Cherokee, …) reads as the Latin letters it looks like.
  if (native.includes(OTHER)) return look;
  return ONE_LETTER.test(look) ? look.toUpperCase() : native;
}

/** The letters of the phrase ("end external untrusted content") a skeleton holds; "rn" counts as one 'm'. */
function phraseLetters(sk: string): number {
  let n = 0;
  for (const ch of sk.replaceAll('rn', 'm')) if (PHRASE_LETTERS.has(ch)) n++;
  return n;
}

const PHRASE_LETTERS = new Set('endxtrnalusco' + 'm');

/**
 * The classified fold of a code point's confusables prototype, or `null` if it has none: the
 * prototype of the code point itself, else those of the characters of its compatibility
 * decomposition (a fullwidth or styled form of a confusable), upper case falling back to lower.
 */
function lookalikeSkeleton(cp: number): string | null {
  const own = prototypeOf(String.fromCodePoint(cp));
  if (own !== undefined) return foldPrototype(own);
  let changed = false;
  let out = '';
  for (const ch of String.fromCodePoint(cp).normalize('NFKD')) {
    const prototype = prototypeOf(ch);
    if (prototype === undefined) {
      out += foldCodePoint(ch.codePointAt(0) ?? 0);
      continue;
    }
    changed = true;
    out += prototype;
  }
  return changed ? foldPrototype(out) : null;
}

/** The UTS #39 prototype of one character; for a non-ASCII one, that of its lower case too. */
function prototypeOf(ch: string): string | undefined {
  const c = ch.codePointAt(0) ?? 0;
  const prototype = confusablePrototype(c);
  if (prototype !== undefined || c < 0x80) return prototype;
  const lower = ch.toLowerCase();
  const lc = lower.codePointAt(0) ?? 0;
  return lower !== ch && lower.length === (lc > 0xffff ? 2 : 1) ? confusablePrototype(lc) : undefined;
}

/** A prototype folded and classified; a longer one than {@link MAX_EXPANSION} is one separator. */
function foldPrototype(prototype: string): string {
  let out = '';
  for (const p of prototype) out += foldCodePoint(p.codePointAt(0) ?? 0);
  return out.length > MAX_EXPANSION ? SEP : classifyAll(out);
}

const SEP_CODE = SEP.charCodeAt(0);

/** The skeleton byte of every ASCII character (each is one skeleton character). */
const ASCII_CODES: Uint8Array = Uint8Array.from({ length: 0x80 }, (_, cp) => computeSkeleton(cp).charCodeAt(0));

/** Memo of non-ASCII skeletons; bounded like the fold memo. */
const skeletonCache = new Map<number, string>();
const SKELETON_CACHE_MAX = 8192;

/**
 * The skeleton of one code point ('' for an invisible one), memoised.
 *
 * @example
 * ```ts
 * skeletonOf(0x200b); // '' (zero width space)
 * ```
 */
export function skeletonOf(cp: number): string {
  if (cp < 0x80) return String.fromCharCode(ASCII_CODES[cp] ?? SEP_CODE);
  const cached = skeletonCache.get(cp);
  if (cached !== undefined) return cached;
  const sk = computeSkeleton(cp);
  if (skeletonCache.size >= SKELETON_CACHE_MAX) skeletonCache.clear();
  skeletonCache.set(cp, sk);
  return sk;
}

/** What an ASCII character's skeleton is to the phrase pattern: a gap (separator, line break, bracket). */
const GAP = 0;
/** A letter the phrase may use, or a letter-like symbol that may stand for one. */
const LETTER = 1;
/**
 * A character no look-alike can hold: a letter outside the phrase ('b', 'h', 'i', …, upper case
 * folded) or another letter or digit ('#': '2', '6', '8', '9'). The phrase pattern admits only
 * the phrase's letters, separators, line breaks, brackets and letter-like symbols, so no match
 * spans one of these.
 */
const BREAK = 2;
/** The role of each skeleton character (skeletons are ASCII), by its code. */
const SKELETON_ROLE: Uint8Array = Uint8Array.from({ length: 0x80 }, (_, code) => {
  const k = String.fromCharCode(code);
  if (k === OTHER || (k >= 'a' && k <= 'z' && !PHRASE_LETTERS.has(k))) return BREAK;
  return (k >= 'a' && k <= 'z') || (k >= 'A' && k <= 'Z') ? LETTER : GAP;
});
/** The role of each ASCII character: that of its one-character skeleton. */
const ASCII_ROLE: Uint8Array = ASCII_CODES.map((code) => SKELETON_ROLE[code] ?? GAP);

/**
 * The fewest letters a look-alike spells: "external untrusted content" with 'm' for "rn" (7 + 9
 * + 7), each a lower-case letter or a letter-like symbol of the skeleton.
 */
const MIN_PHRASE_LETTERS = 23;

/**
 * True for a UTF-16 code unit that no marker look-alike can contain (an ASCII letter outside the
 * phrase, or a digit not read as one); false for every other unit, non-ASCII ones included.
 *
 * @example
 * ```ts
 * breaksPhrase('h'.charCodeAt(0)); // true
 * breaksPhrase('e'.charCodeAt(0)); // false
 * ```
 */
export function breaksPhrase(unit: number): boolean {
  return unit < 0x80 && ASCII_ROLE[unit] === BREAK;
}

/**
 * What a code point of the Basic Multilingual Plane past ASCII adds to {@link mayHoldPhrase}'s
 * count, by code point, learnt from its skeleton on first sight: 0 not yet known, 1 it breaks the
 * phrase (a one-character skeleton that does), 2 + n it adds n letters (a skeleton of n
 * characters counts as n, whatever they are). Made on the first such code point; 64 KiB.
 */
let bmpCounts: Uint8Array | undefined;
const BMP_BREAKS = 1;

function bmpCount(cp: number): number {
  bmpCounts ??= new Uint8Array(0x10000);
  let count = bmpCounts[cp] ?? 0;
  if (count === 0) {
    const sk = skeletonOf(cp);
    const role = sk.length === 1 ? SKELETON_ROLE[sk.charCodeAt(0)] : undefined;
    count = role === BREAK ? BMP_BREAKS : 2 + (role === undefined ? sk.length : role === LETTER ? 1 : 0);
    bmpCounts[cp] = count;
  }
  return count;
}

/**
 * False when the text cannot hold a look-alike, told without building its skeleton: no stretch
 * between two characters that break the phrase has room for the {@link MIN_PHRASE_LETTERS}
 * letters it spells. A character counts the letters of its skeleton (an ASCII one, or one of
 * the Basic Multilingual Plane learnt once from its skeleton; a skeleton of several characters
 * counts them all), one that breaks the phrase (a one-character skeleton such as 'h', or '#' for
 * another letter: most letters of other scripts) ends the stretch, and a surrogate counts as
 * the longest skeleton a code point has ({@link MAX_EXPANSION}), so the answer errs only towards
 * true. Prose breaks the phrase every few characters, in Latin script and in most others, and
 * most text is answered in one pass over its code units; text in a script whose every letter
 * breaks it (Chinese, Arabic, Hindi…) in strides, a unit read in every few: a stretch of
 * MIN_PHRASE_LETTERS letters covers at least that over MAX_EXPANSION units.
 *
 * @example
 * ```ts
 * mayHoldPhrase('the weather is fine today'); // false
 * mayHoldPhrase('<<<END_EXTERNAL_UNTRUSTED_CONTENT>>>'); // true
 * ```
 */
export function mayHoldPhrase(text: string): boolean {
  const n = text.length;
  let i = 0;
  // Strides while every few units break the phrase (text in a script whose letters all do):
  // i starts a stretch (0, or just past a break), and a break among its first PHRASE_UNITS
  // units ends it too short. From the first stretch that long, one unit at a time. The strides
  // are written here, not taken from windows.ts with a predicate: that way ASCII text, which goes
  // straight to the count below, measured 8.6 -> 14.4 µs for 4,000 characters.
  while (i + PHRASE_UNITS <= n) {
    let back = i + PHRASE_UNITS - 1;
    while (back >= i && !endsStretch(text.charCodeAt(back))) back--;
    if (back < i) break;
    i = back + 1;
  }
  let letters = 0;
  for (; i < n; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      const role = ASCII_ROLE[unit];
      if (role === BREAK) {
        letters = 0;
        continue;
      }
      if (role === LETTER) letters++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      letters += MAX_EXPANSION;
    } else {
      const count = bmpCount(unit);
      if (count === BMP_BREAKS) {
        letters = 0;
        continue;
      }
      letters += count - 2;
    }
    if (letters >= MIN_PHRASE_LETTERS) return true;
  }
  return false;
}

/** The fewest code units a stretch of {@link MIN_PHRASE_LETTERS} letters covers: a unit adds at most MAX_EXPANSION. */
const PHRASE_UNITS = Math.ceil(MIN_PHRASE_LETTERS / MAX_EXPANSION);

/** Whether a code unit breaks the phrase: {@link mayHoldPhrase} starts its count again past it. */
function endsStretch(unit: number): boolean {
  if (unit < 0x80) return ASCII_ROLE[unit] === BREAK;
  return (unit < 0xd800 || unit > 0xdfff) && bmpCount(unit) === BMP_BREAKS;
}
