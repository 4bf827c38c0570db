/**
 * Detection folding: the text a detector looks at instead of the raw text, so that look-alikes
 * are caught. One code point at a time: invisible and format characters are dropped;
 * compatibility forms are decomposed (NFKD — the same compatibility mapping as NFKC, without
 * recomposition, so that accents come apart from their letters); combining marks are dropped;
 * the result is lower-cased; and a small table maps common Cyrillic, Greek, Armenian and
 * small-capital homoglyphs of Latin letters to those letters.
 *
 * The fold is only ever used to *find* things. Callers edit or count the original text.
 *
 * @example
 * ```ts
 * foldForDetection('ＩＧＮＯ\u200BＲＥ'); // 'ignore'
 * foldCodePoint(0x0435);                  // 'e' (Cyrillic ie)
 * ```
 */

/**
 * True for characters that render as nothing (or nearly nothing) and can be slipped between
 * letters to dodge a detector: zero-width characters, word joiners and invisible operators, the
 * BOM, soft hyphen, bidi embeddings/overrides/isolates, tag characters, variation selectors,
 * Hangul fillers and every other format (Cf) or default-ignorable code point. The explicit
 * ranges keep the listed characters covered whatever Unicode version the runtime ships.
 *
 * @example
 * ```ts
 * isInvisible(0x200b); // true (zero-width space)
 * isInvisible(0x61);   // false ('a')
 * ```
 */
export function isInvisible(cp: number): boolean {
  if (cp < 0xad) return false;
  if (cp <= 0xffff) return (bmpInvisible ?? invisibleTable()).table[cp] === 1;
  return ONE_INVISIBLE.test(String.fromCodePoint(cp));
}

/**
 * The invisible code points as a character class: the listed ranges (soft hyphen, zero-width
 * characters and marks, bidi embeddings and overrides, word joiner and invisible operators,
 * isolates, BOM, tag characters) and the format and default-ignorable classes. None lies below
 * U+00AD.
 */
const INVISIBLE_SET = String.raw`\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\u{e0000}-\u{e0fff}\p{Cf}\p{Default_Ignorable_Code_Point}`;
const ONE_INVISIBLE = new RegExp(`^[${INVISIBLE_SET}]$`, 'u');

/**
 * The invisible code points of the Basic Multilingual Plane, read from one scan of the class over
 * every such code point, on first need: `table` holds 1 for each, by code point (64 KiB), and
 * `candidate` finds the first code unit that may be one (an invisible Latin-1 character, or any
 * above Latin-1). A look-up instead of the class per character: the class, with its two
 * properties, cost ~6 ns a character of text in other scripts; and Latin-1 text, which holds
 * none but the soft hyphen, is passed over by the pattern engine without a look at each unit.
 */
interface InvisibleTable {
  readonly table: Uint8Array;
  readonly candidate: RegExp;
}
let bmpInvisible: InvisibleTable | undefined;

function invisibleTable(): InvisibleTable {
  const table = new Uint8Array(0x10000);
  // Every code point of the plane but the surrogates, which the class never holds.
  const codes = new Uint16Array(0x10000 - 0x800);
  for (let i = 0; i < codes.length; i++) codes[i] = i < 0xd800 ? i : i + 0x800;
  const plane = Buffer.from(codes.buffer).toString('utf16le');
  for (const { index = 0 } of plane.matchAll(new RegExp(`[${INVISIBLE_SET}]`, 'gu'))) table[codes[index] as number] = 1;
  let latin1 = '';
  for (let cp = 0; cp <= 0xff; cp++) if (table[cp] === 1) latin1 += `\\u${cp.toString(16).padStart(4, '0')}`;
  bmpInvisible = { table, candidate: new RegExp(`[${latin1}\\u0100-\\uffff]`, 'g') };
  return bmpInvisible;
}

/**
 * Where the next invisible code point ({@link isInvisible}) of `text` starts, at `from` or later;
 * −1 for none. `from` is the start of a code point.
 *
 * @example
 * ```ts
 * nextInvisible('a\u200bb', 0); // 1
 * nextInvisible('a\u200bb', 2); // -1
 * ```
 */
export function nextInvisible(text: string, from: number): number {
  const { table, candidate } = bmpInvisible ?? invisibleTable();
  candidate.lastIndex = from;
  if (!candidate.test(text)) return -1;
  for (let i = candidate.lastIndex - 1; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xad) continue;
    if (unit < 0xd800 || unit > 0xdfff) {
      if (table[unit] === 1) return i;
      continue;
    }
    const cp = text.codePointAt(i) ?? unit;
    if (cp > 0xffff) {
      if (ONE_INVISIBLE.test(String.fromCodePoint(cp))) return i;
      i++;
    }
  }
  return -1;
}

const COMBINING_MARK = /^[\p{Mn}\p{Me}]$/u;
const ASCII_ONLY = /^\p{ASCII}*$/u;

/**
 * Homoglyphs of Latin letters that neither NFKD nor lower-casing maps. Keys are lower case
 * (folding lower-cases first, so upper-case homoglyphs such as Cyrillic 'Е' arrive here as 'е').
 * Deliberately small: the letters that spell the marker phrase and common injection keywords.
 */
const CONFUSABLES: ReadonlyMap<string, string> = new Map([
  // Cyrillic
  ['а', 'a'],
  ['в', 'b'],
  ['с', 'c'],
  ['ԁ', 'd'],
  ['е', 'e'],
  ['һ', 'h'],
  ['н', 'h'],
  ['і', 'i'],
  ['ј', 'j'],
  ['к', 'k'],
  ['ӏ', 'l'],
  ['м', 'm'],
  ['о', 'o'],
  ['р', 'p'],
  ['ԛ', 'q'],
  ['ѕ', 's'],
  ['т', 't'],
  ['у', 'y'],
  ['ԝ', 'w'],
  ['х', 'x'],
  // Greek
  ['α', 'a'],
  ['β', 'b'],
  ['ς', 'c'], // final sigma; lunate sigma 'ϲ' decomposes to it
  ['ε', 'e'],
  ['η', 'n'],
  ['ι', 'i'],
  ['κ', 'k'],
  ['μ', 'm'],
  ['ν', 'n'],
  ['ο', 'o'],
  ['ρ', 'p'],
  ['τ', 't'],
  ['υ', 'u'],
  ['χ', 'x'],
  ['ζ', 'z'],
  // Armenian
  ['հ', 'h'],
  ['ո', 'n'],
  ['օ', 'o'],
  ['ս', 'u'],
  // Latin small capitals and variants
  ['ı', 'i'],
  ['ȷ', 'j'],
  ['ɑ', 'a'],
  ['ɛ', 'e'],
  ['ɡ', 'g'],
  ['ɢ', 'g'],
  ['ɩ', 'i'],
  ['ɪ', 'i'],
  ['ɴ', 'n'],
  ['ʀ', 'r'],
  ['ʏ', 'y'],
  ['ʙ', 'b'],
  ['ʜ', 'h'],
  ['ʟ', 'l'],
  ['ᴀ', 'a'],
  ['ᴄ', 'c'],
  ['ᴅ', 'd'],
  ['ᴇ', 'e'],
  ['ᴋ', 'k'],
  ['ᴍ', 'm'],
  ['ᴏ', 'o'],
  ['ᴘ', 'p'],
  ['ᴛ', 't'],
  ['ᴜ', 'u'],
  ['ᴠ', 'v'],
  ['ᴡ', 'w'],
  ['ᴢ', 'z'],
  ['ꜱ', 's'],
]);

/** ASCII folds to itself, lower-cased: precomputed so the common case does no work. */
const ASCII_FOLD: readonly string[] = Array.from({ length: 0x80 }, (_, cp) => String.fromCharCode(cp).toLowerCase());

/** Memo of non-ASCII folds. Bounded: cleared when full, so memory stays flat on hostile input. */
const foldCache = new Map<number, string>();
const FOLD_CACHE_MAX = 8192;

/**
 * Longest fold kept for one code point ('㎈' is 'cal', '㏂' is 'a.m.'); see {@link foldCodePoint}.
 *
 * @example
 * ```ts
 * foldCodePoint(cp).length <= MAX_EXPANSION; // true for every code point
 * ```
 */
export const MAX_EXPANSION = 6;

/**
 * The detection fold of one code point: `''` for an invisible character, otherwise one to six
 * lower-case characters (a compatibility character such as 'ﬃ' folds to 'ffi'; one whose
 * expansion is longer, such as 'ﷺ', folds to a single space). Lone surrogates fold to
 * themselves.
 *
 * @example
 * ```ts
 * foldCodePoint(0xff25); // 'e' (fullwidth 'Ｅ')
 * foldCodePoint(0x00e9); // 'e' ('é', accent dropped)
 * foldCodePoint(0x200b); // ''  (zero-width space)
 * ```
 */
export function foldCodePoint(cp: number): string {
  if (cp < 0x80) return ASCII_FOLD[cp] ?? '';
  const cached = foldCache.get(cp);
  if (cached !== undefined) return cached;
  let out = '';
  if (!isInvisible(cp)) {
    for (const ch of String.fromCodePoint(cp).normalize('NFKD').toLowerCase()) {
      const c = ch.codePointAt(0) ?? 0;
      if (c < 0x80) {
        out += ch;
        continue;
      }
      if (isInvisible(c) || COMBINING_MARK.test(ch)) continue;
      out += CONFUSABLES.get(ch) ?? ch;
    }
  }
  // Longer expansions are whole words in other scripts ('ﷺ' is 18 characters): no use to a
  // detector of English phrases, and they would multiply the work. They fold to one space.
  if (out.length > MAX_EXPANSION) out = ' ';
  if (foldCache.size >= FOLD_CACHE_MAX) foldCache.clear();
  foldCache.set(cp, out);
  return out;
}

/**
 * The fold of each code point of the Basic Multilingual Plane past ASCII as one UTF-16 code,
 * learnt from {@link foldCodePoint} on first sight: 0 not yet known, {@link FOLDS_TO_NOTHING},
 * {@link FOLDS_TO_SEVERAL} (then read from the memo). Made on the first such code point; 128 KiB,
 * fixed whatever the input, so hostile text cannot make it grow or thrash it.
 */
let bmpFold: Uint16Array | undefined;
/** Surrogate codes: never the one-code fold of a code point of the Basic Multilingual Plane. */
const FOLDS_TO_NOTHING = 0xdfff;
const FOLDS_TO_SEVERAL = 0xdffe;

/** ASCII lower-cased, by code. */
const ASCII_LOWER: Uint16Array = Uint16Array.from(ASCII_FOLD, (ch) => ch.charCodeAt(0));

/** Where {@link foldForDetection} writes, reused call after call (grown, never shrunk past a bound). */
let foldCodes: Uint16Array = new Uint16Array(4096);
const KEEP_FOLD_CODES = 256 * 1024;

function bmpFoldCode(cp: number, table: Uint16Array): number {
  const folded = foldCodePoint(cp);
  const code = folded.length === 0 ? FOLDS_TO_NOTHING : folded.length === 1 ? folded.charCodeAt(0) : FOLDS_TO_SEVERAL;
  table[cp] = code;
  return code;
}

/**
 * The detection fold of a whole string (see the module comment). Linear in the input length.
 *
 * @example
 * ```ts
 * foldForDetection('Ignоre\u00ADall'); // 'ignoreall' (Cyrillic 'о', soft hyphen dropped)
 * ```
 */
export function foldForDetection(text: string): string {
  if (ASCII_ONLY.test(text)) return text.toLowerCase();
  return foldToString(text, false);
}

/**
 * {@link foldForDetection} for patterns written in ASCII that tell no two characters above
 * Latin-1 apart (ASCII literals and classes, negated classes, `\b`, no `\s` or `.`): each such
 * character folds to U+00FF instead, except the white space `\s` takes (kept, to be collapsed)
 * and the curly apostrophes U+2018, U+2019 and U+02BC (made `'`). The result is a one-byte
 * string, which V8's pattern engine reads several times faster than a two-byte one, and every
 * such pattern matches it where it matches the plain fold with its apostrophes made `'`.
 *
 * @example
 * ```ts
 * foldForAsciiPatterns('Ignore всё’s'); // "ignore ÿÿÿ's"
 * ```
 */
export function foldForAsciiPatterns(text: string): string {
  if (ASCII_ONLY.test(text)) return text.toLowerCase();
  return foldToString(text, true);
}

/** The fold of `text`, built in {@link foldCodes}; `narrow`: see {@link foldForAsciiPatterns}. */
function foldToString(text: string, narrow: boolean): string {
  // One code at a time into a reused array, decoded into a string once: appending a piece per
  // character to a string, or collecting them to join, cost 10–14 ns a character in other
  // scripts; the code of most characters is one read of the table.
  const n = text.length;
  const table = (bmpFold ??= new Uint16Array(0x10000));
  let codes = foldCodes.length >= n + MAX_EXPANSION ? foldCodes : (foldCodes = new Uint16Array(2 * n + MAX_EXPANSION));
  let k = 0;
  let wide = false;
  for (let i = 0; i < n; i++) {
    if (k + MAX_EXPANSION > codes.length) codes = growFoldCodes(k);
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      codes[k++] = ASCII_LOWER[unit] as number;
      continue;
    }
    if (unit < 0xd800 || unit > 0xdfff) {
      let code = table[unit] as number;
      if (code === 0) code = bmpFoldCode(unit, table);
      if (code < FOLDS_TO_SEVERAL || code > FOLDS_TO_NOTHING) {
        if (code > 0xff) {
          if (narrow) code = narrowCode(code);
          if (code > 0xff) wide = true;
        }
        codes[k++] = code;
        continue;
      }
      if (code === FOLDS_TO_NOTHING) continue;
    }
    // Several characters, a surrogate pair, or a lone surrogate (which folds to itself).
    const cp = text.codePointAt(i) ?? unit;
    if (cp > 0xffff) i++;
    const folded = foldCodePoint(cp);
    for (let j = 0; j < folded.length; j++) {
      let code = folded.charCodeAt(j);
      if (code > 0xff) {
        if (narrow) code = narrowCode(code);
        if (code > 0xff) wide = true;
      }
      codes[k++] = code;
    }
  }
  const string = wide ? utf16String(codes, k) : latin1String(codes, k);
  if (foldCodes.length > KEEP_FOLD_CODES) foldCodes = new Uint16Array(4096);
  return string;
}

/** What {@link foldForAsciiPatterns} writes for a code above Latin-1. */
function narrowCode(code: number): number {
  if (code === 0x2018 || code === 0x2019 || code === 0x02bc) return 0x27;
  // The white space `\s` takes above Latin-1 (what a fold can leave of it: the rest folds to ' ').
  if (code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029) return code;
  if (code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff) return code;
  return 0xff;
}

function growFoldCodes(used: number): Uint16Array {
  const grown = new Uint16Array(2 * foldCodes.length + MAX_EXPANSION);
  grown.set(foldCodes.subarray(0, used));
  foldCodes = grown;
  return grown;
}

/** Where a Latin-1 fold is narrowed to bytes before it is decoded. */
let latin1Bytes: Uint8Array = new Uint8Array(4096);

function utf16String(codes: Uint16Array, length: number): string {
  return Buffer.from(codes.buffer, codes.byteOffset, length * 2).toString('utf16le');
}

/** Codes all below 0x100 as a one-byte string: half the memory, and the patterns' faster path. */
function latin1String(codes: Uint16Array, length: number): string {
  if (latin1Bytes.length < length) latin1Bytes = new Uint8Array(length + 4096);
  latin1Bytes.set(codes.subarray(0, length));
  const text = Buffer.from(latin1Bytes.buffer, latin1Bytes.byteOffset, length).toString('latin1');
  if (latin1Bytes.length > KEEP_FOLD_CODES) latin1Bytes = new Uint8Array(4096);
  return text;
}
/**
 * Every run of white space (`\s`: spaces, tabs, line breaks, no-break and other Unicode spaces)
 * made one space: what `text.replace(/\s+/g, ' ')` gives, without replacing each single space by
 * another (in ordinary prose every word gap is a match, and the copy cost 5 µs a KB).
 *
 * @example
 * ```ts
 * collapseWhitespace('ignore\n\n  all\tprevious'); // 'ignore all previous'
 * ```
 */
export function collapseWhitespace(text: string): string {
  return text.replace(WHITESPACE_TO_COLLAPSE, ' ');
}

/** A run of two or more, or one that is not a plain space: the runs `\s+` changes. */
const WHITESPACE_TO_COLLAPSE = /\s{2,}|[^\S ]/g;
