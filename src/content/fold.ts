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
  return cp >= 0xad && ONE_INVISIBLE.test(String.fromCodePoint(cp));
}

/**
 * The invisible code points as a character class: the listed ranges (soft hyphen, zero-width
 * characters and marks, bidi embeddings and overrides, word joiner and invisible operators,
 * isolates, BOM, tag characters) and the format and default-ignorable classes. None lies below
 * U+00AD.
 */
const INVISIBLE_SET = String.raw`\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\u{e0000}-\u{e0fff}\p{Cf}\p{Default_Ignorable_Code_Point}`;
const ONE_INVISIBLE = new RegExp(`^[${INVISIBLE_SET}]$`, 'u');
const ANY_INVISIBLE = new RegExp(`[${INVISIBLE_SET}]`, 'gu');

/**
 * Each invisible code point of `text` ({@link isInvisible}), in order, found by one pattern scan:
 * most text holds none, and the scan costs less than a look at every code point.
 *
 * @example
 * ```ts
 * [...invisibleCodePoints('a\u200bb')].map((m) => m.index); // [1]
 * ```
 */
export function invisibleCodePoints(text: string): IterableIterator<RegExpMatchArray> {
  return text.matchAll(ANY_INVISIBLE);
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

/** Longest fold kept for one code point ('㎈' is 'cal', '㏂' is 'a.m.'); see {@link foldCodePoint}. */
const MAX_EXPANSION = 6;

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
 * The detection fold of a whole string (see the module comment). Linear in the input length.
 *
 * @example
 * ```ts
 * foldForDetection('Ignоre\u00ADall'); // 'ignoreall' (Cyrillic 'о', soft hyphen dropped)
 * ```
 */
export function foldForDetection(text: string): string {
  if (ASCII_ONLY.test(text)) return text.toLowerCase();
  // ASCII folds to its lower case: runs of it are copied whole, so prose with a dash or a curly
  // quote here and there is not rebuilt one character at a time. Appended to one string (V8
  // joins the pieces once, when the string is first read) rather than collected and joined: an
  // array of a piece per character cost about as much again for text in other scripts.
  let out = '';
  let run = 0;
  for (let i = 0; i < text.length;) {
    if (text.charCodeAt(i) < 0x80) {
      i++;
      continue;
    }
    if (run < i) out += text.slice(run, i).toLowerCase();
    const cp = text.codePointAt(i) ?? 0;
    out += foldCodePoint(cp);
    i += cp > 0xffff ? 2 : 1;
    run = i;
  }
  return run < text.length ? out + text.slice(run).toLowerCase() : out;
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
