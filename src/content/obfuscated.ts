/**
 * The normalising secret matcher: finds a configured secret in text even when it was disguised —
 * case changed, separators, zero-width characters or soft hyphens slipped between its characters,
 * split by a line break, fullwidth or other compatibility forms, reversed, hex (any case, with or
 * without `0x`/`\x`/`:`/space separators), fully percent-encoded, HTML entities (`&#115;`,
 * `&#x73;`), `\uXXXX`/`\u{…}`/`\xHH` escapes, base64 (both alphabets, any alignment, with line
 * breaks), base64 of base64, and base64 of the secret's UTF-16LE/BE bytes.
 *
 * It does not replace anything: it reports spans of the original text, which the callers
 * (`redactSecrets`, the inbound reply scrubber) merge with the exact forms' occurrences and
 * replace. Everything here is pure and linear in the text length (a constant number of views,
 * each built in one pass; one substring search per needle per view).
 *
 * The views, each a string whose every character maps back to a range of the original text:
 *
 * - the **skeleton**: each code point folded as detectors fold it (`foldCodePoint`: NFKD, marks
 *   and invisible characters dropped, lower-cased, common homoglyphs mapped), keeping letters and
 *   digits only — so separators, line breaks, zero-width characters and case are gone;
 * - the **decoded skeleton**: the same after percent escapes, HTML character references and
 *   `\u`/`\x` escapes are decoded (built only when the text holds `%`, `&` or `\`);
 * - the **hex view**: runs of hex digits, lower-cased, allowing separators between them;
 * - **base64 runs**: each run of base64 characters (line breaks allowed inside) decoded at all
 *   four alignments, the bytes searched for the secret's UTF-8, UTF-16LE and UTF-16BE bytes and
 *   its skeleton, and decoded once more (base64 of base64).
 *
 * The needles of a secret: its skeleton and the skeleton reversed (only when the skeleton has at
 * least `MIN_SECRET_LENGTH` letters and digits — a secret made mostly of punctuation is matched by
 * its exact forms only), the hex of its UTF-8 bytes, and its bytes as above.
 *
 * An occurrence is reported only when its span in the original text is at most `maxSpan`
 * characters (8 per UTF-8 byte of the longest secret, plus 64): enough for every listed encoding
 * with a separator between each character, and what lets a stream hold back a bounded window.
 *
 * @example
 * ```ts
 * const m = createObfuscationMatcher(['sk-live-0123456789']);
 * m.spans('key: S K L I V E 0 1 2 3 4 5 6 7 8 9 !'); // [5, 38]
 * ```
 */
import { Buffer } from 'node:buffer';
import { MAX_EXPANSION } from './fold.js';
import {
  type View,
  bmpSkeletonCode,
  buildHexView,
  buildSkeleton,
  hasHexRun,
  NO_SKELETON,
  SEVERAL_CHARS,
  skeletonChars,
} from './obfuscated-views.js';
import { firstOpenWindow } from './windows.js';

/** Letters and digits a secret's skeleton needs before it is matched in folded form. */
const MIN_SKELETON_LENGTH = 8;
/** Base64 characters a run needs before it is decoded (8 bytes take 11). */
const MIN_BASE64_RUN = 11;
/** Levels of base64 decoded: the text's base64, and base64 inside that. */
const MAX_BASE64_DEPTH = 2;

/**
 * A matcher built once for a set of secrets.
 *
 * @example
 * ```ts
 * const m = createObfuscationMatcher(secrets);
 * if (m.active) for (const [start, end] of pairs(m.spans(text) ?? [])) redact(start, end);
 * ```
 */
export interface ObfuscationMatcher {
  /** False when no secret has needles: `spans` then always returns undefined. */
  readonly active: boolean;
  /** Longest span (original characters) an occurrence may have. 0 when inactive. */
  readonly maxSpan: number;
  /** Flat `[start, end, start, end, …]` of the occurrences found (unordered, may overlap); undefined for none. */
  spans(text: string): number[] | undefined;
  /**
   * True when the skeleton of `replacement` could take part in an occurrence: some needle
   * contains it, lies inside it, or shares at least three characters with one of its edges.
   */
  canJoin(replacement: string): boolean;
  /**
   * A replacement no needle and none of `forms` can take part in: eight copies of a letter that
   * occurs in none of them (a letter, so that it also keeps its neighbours apart in the skeleton).
   */
  fallback(forms: readonly string[]): string;
}

interface Needles {
  /** Skeletons and reversed skeletons. */
  readonly skeletons: readonly string[];
  /** By ASCII code, 1 for a letter or digit whose skeleton no needle holds: no occurrence spans one. */
  readonly skeletonBreaks: Uint8Array;
  /** By code, 1 for a character a needle holds (see {@link mayHoldSkeleton}). */
  readonly heldCodes: Uint8Array;
  /** The length of the shortest of {@link skeletons}. */
  readonly shortestSkeleton: number;
  /** Lower-case hex of the UTF-8 bytes. */
  readonly hex: readonly string[];
  /** The length of the shortest of {@link hex}: a text with no hex run as long holds none. */
  readonly shortestHex: number;
  /** The secret's bytes as latin1 strings (UTF-8, UTF-16LE, UTF-16BE), to search decoded base64. */
  readonly bytes: readonly string[];
}

const INACTIVE: ObfuscationMatcher = Object.freeze({
  active: false,
  maxSpan: 0,
  spans: (): undefined => undefined,
  canJoin: (): boolean => false,
  fallback: (forms: readonly string[]): string => letterFallback(forms),
});

/**
 * Builds the matcher for `secrets` (strings of fewer than `minLength` code points and non-strings
 * are skipped, as `redactSecrets` skips them).
 *
 * @example
 * ```ts
 * createObfuscationMatcher(['tok_0123456789']).spans('TOK 0123456789'); // [0, 14]
 * ```
 */
export function createObfuscationMatcher(secrets: readonly string[], minLength = 8): ObfuscationMatcher {
  if (!Array.isArray(secrets)) return INACTIVE;
  const skeletons = new Set<string>();
  const hex = new Set<string>();
  const bytes = new Set<string>();
  let longest = 0;
  for (const secret of secrets as readonly unknown[]) {
    if (typeof secret !== 'string' || [...secret].length < minLength) continue;
    const utf8 = Buffer.from(secret, 'utf8');
    longest = Math.max(longest, utf8.length);
    const skeleton = skeletonOf(secret);
    if (skeleton.length >= MIN_SKELETON_LENGTH) {
      skeletons.add(skeleton);
      skeletons.add([...skeleton].reverse().join(''));
    }
    hex.add(utf8.toString('hex'));
    bytes.add(utf8.toString('latin1'));
    const le = Buffer.from(secret, 'utf16le');
    bytes.add(le.toString('latin1'));
    bytes.add(Buffer.from(le).swap16().toString('latin1'));
  }
  if (longest === 0) return INACTIVE;
  const shortestHex = Math.min(...[...hex].map((needle) => needle.length));
  const held = new Set([...skeletons].join(''));
  const skeletonBreaks = Uint8Array.from({ length: 0x80 }, (_, code) => {
    const chars = skeletonChars(code);
    return chars !== '' && !held.has(chars) ? 1 : 0;
  });
  const heldCodes = new Uint8Array(0x10000);
  for (const ch of held) if (ch.length === 1) heldCodes[ch.charCodeAt(0)] = 1;
  const needles: Needles = {
    skeletons: [...skeletons],
    skeletonBreaks,
    heldCodes,
    shortestSkeleton: Math.min(...[...skeletons].map((needle) => needle.length)),
    hex: [...hex],
    shortestHex,
    bytes: [...bytes],
  };
  const maxSpan = 8 * longest + 64;
  return {
    active: true,
    maxSpan,
    spans: (text) => findObfuscated(text, needles, maxSpan),
    canJoin: (replacement) => {
      const skeleton = skeletonOf(replacement);
      return skeleton.length > 0 && needles.skeletons.some((needle) => sharesEdge(needle, skeleton));
    },
    fallback: (forms) => letterFallback([...forms, ...needles.skeletons]),
  };
}

/**
 * The skeleton of a string: folded, letters and digits only (see the module comment).
 *
 * @example
 * ```ts
 * skeletonOf('Ｓk-LIVE\u200b_01'); // 'sklive01'
 * ```
 */
export function skeletonOf(text: string): string {
  return buildSkeleton(text, false, false).text;
}

// ---------------------------------------------------------------------------------------------
// Searching.

function findObfuscated(text: string, needles: Needles, maxSpan: number): number[] | undefined {
  if (typeof text !== 'string' || text.length === 0) return undefined;
  const spans: number[] = [];
  if (needles.skeletons.length > 0) {
    if (mayHoldSkeleton(text, needles) && includesAny(buildSkeleton(text, false, false).text, needles.skeletons)) {
      searchView(buildSkeleton(text, false, true), needles.skeletons, maxSpan, spans);
    }
    if (text.includes('%') || text.includes('&') || text.includes('\\')) {
      const decoded = buildSkeleton(text, true, false);
      if (decoded.decoded && includesAny(decoded.text, needles.skeletons)) {
        searchView(buildSkeleton(text, true, true), needles.skeletons, maxSpan, spans);
      }
    }
  }
  const hex = hasHexRun(text, needles.shortestHex) ? buildHexView(text, false) : undefined;
  if (hex !== undefined && includesAny(hex.text, needles.hex)) {
    searchView(buildHexView(text, true) as View, needles.hex, maxSpan, spans);
  }
  scanBase64(text, needles, 1, spans, maxSpan, undefined);
  return spans.length === 0 ? undefined : spans;
}

/**
 * False when no skeleton needle can occur in `text`, told without building the skeleton. An
 * occurrence spans no character whose skeleton is a letter or digit that no needle holds (prose
 * has one every few characters, and text in a script the needles do not use has nothing else),
 * and covers at least the shortest needle's length in skeleton characters: in ASCII one a
 * character, so at least that many characters; past ASCII up to {@link MAX_EXPANSION} a code
 * unit (a character of several, or half of one outside the plane, never ends a stretch), so at
 * least that many over MAX_EXPANSION. Text is crossed in strides of that width
 * ({@link firstOpenWindow}), a few characters read each.
 */
function mayHoldSkeleton(text: string, needles: Needles): boolean {
  if (Buffer.byteLength(text) === text.length) {
    return firstOpenWindow(text, 0, needles.shortestSkeleton, needles.skeletonBreaks) !== -1;
  }
  // firstOpenWindow's strides with every code unit judged: a loop of its own, so that the
  // base64 and hex scans' calls of firstOpenWindow stay specialised to their ASCII tables.
  const width = Math.ceil(needles.shortestSkeleton / MAX_EXPANSION);
  for (let i = 0; i + width <= text.length;) {
    let back = i + width - 1;
    while (back >= i && !endsSkeletonStretch(text.charCodeAt(back), needles)) back--;
    if (back < i) return true;
    i = back + 1;
  }
  return false;
}

/** Whether no needle occurrence spans this code unit (see {@link mayHoldSkeleton}). */
function endsSkeletonStretch(code: number, needles: Needles): boolean {
  if (code < 0x80) return needles.skeletonBreaks[code] === 1;
  // Half of a code point outside the plane, or a character of several: up to MAX_EXPANSION.
  if (code >= 0xd800 && code <= 0xdfff) return false;
  const skeleton = bmpSkeletonCode(code);
  return skeleton !== NO_SKELETON && skeleton !== SEVERAL_CHARS && needles.heldCodes[skeleton] !== 1;
}

function includesAny(text: string, needles: readonly string[]): boolean {
  for (const needle of needles) if (text.includes(needle)) return true;
  return false;
}

/** Every occurrence of every needle in `view`, as original spans of at most `maxSpan`. */
function searchView(view: View, needles: readonly string[], maxSpan: number, spans: number[]): void {
  for (const needle of needles) {
    for (let at = view.text.indexOf(needle); at !== -1; at = view.text.indexOf(needle, at + 1)) {
      const from = view.start[at] as number;
      const to = view.end[at + needle.length - 1] as number;
      if (to - from <= maxSpan) spans.push(from, to);
    }
  }
}

/** Base64 character values (both alphabets); −1 for others. */
const BASE64_VALUE: Int8Array = (() => {
  const table = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  table[0x2b] = 62; // +
  table[0x2d] = 62; // -
  table[0x2f] = 63; // /
  table[0x5f] = 63; // _
  return table;
})();

/**
 * Decodes each base64 run of `text` (line breaks allowed inside a run) at all four alignments
 * and searches the bytes. `map`, when given, maps a position of `text` to an original span
 * (for the inner level: `text` is then the decoded bytes of the outer run).
 */
function scanBase64(
  text: string,
  needles: Needles,
  depth: number,
  spans: number[],
  maxSpan: number,
  map: Level | undefined,
): void {
  const n = text.length;
  // A run is a stretch of base64 characters and line breaks; one of MIN_BASE64_RUN characters
  // covers as many positions, so prose is crossed in strides (firstOpenWindow).
  for (let i = firstOpenWindow(text, 0, MIN_BASE64_RUN, ENDS_BASE64_RUN); i !== -1;) {
    const from = i;
    let count = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0a || c === 0x0d) continue;
      if (!isBase64Char(c)) break;
      count++;
    }
    if (count < MIN_BASE64_RUN) {
      i = firstOpenWindow(text, i, MIN_BASE64_RUN, ENDS_BASE64_RUN);
      continue;
    }
    const positions = new Int32Array(count);
    const values = new Uint8Array(count);
    let k = 0;
    for (let j = from; j < i; j++) {
      const c = text.charCodeAt(j);
      if (c === 0x0a || c === 0x0d) continue;
      positions[k] = j;
      values[k++] = BASE64_VALUE[c] as number;
    }
    for (let offset = 0; offset < 4; offset++)
      searchRun(positions, values, offset, needles, depth, spans, maxSpan, map);
    i = firstOpenWindow(text, i, MIN_BASE64_RUN, ENDS_BASE64_RUN);
  }
}

function isBase64Char(c: number): boolean {
  return c < 0x80 && (BASE64_VALUE[c] as number) >= 0;
}

/** 1 for the ASCII codes that are neither a base64 character nor a line break (which a run may hold). */
const ENDS_BASE64_RUN = Uint8Array.from(BASE64_VALUE, (value, c) => (value < 0 && c !== 0x0a && c !== 0x0d ? 1 : 0));

function searchRun(
  positions: Int32Array,
  values: Uint8Array,
  offset: number,
  needles: Needles,
  depth: number,
  spans: number[],
  maxSpan: number,
  map: Level | undefined,
): void {
  const groups = Math.floor((values.length - offset) / 4);
  const rest = values.length - offset - groups * 4;
  const byteCount = groups * 3 + (rest >= 2 ? rest - 1 : 0);
  if (byteCount < 8) return;
  const bytes = Buffer.allocUnsafe(byteCount);
  let b = 0;
  for (let g = 0; g <= groups; g++) {
    const at = offset + g * 4;
    const v0 = values[at] ?? 0;
    const v1 = values[at + 1] ?? 0;
    const v2 = values[at + 2] ?? 0;
    const v3 = values[at + 3] ?? 0;
    if (b < byteCount) bytes[b++] = ((v0 << 2) | (v1 >> 4)) & 0xff;
    if (b < byteCount) bytes[b++] = ((v1 << 4) | (v2 >> 2)) & 0xff;
    if (b < byteCount) bytes[b++] = ((v2 << 6) | v3) & 0xff;
  }
  const decoded = bytes.toString('latin1');
  const level: Level = { positions, offset, parent: map };
  for (const needle of needles.bytes) {
    for (let at = decoded.indexOf(needle); at !== -1; at = decoded.indexOf(needle, at + 1)) {
      const span = spanOf(level, at, at + needle.length);
      if (span !== undefined && span[1] - span[0] <= maxSpan) spans.push(span[0], span[1]);
    }
  }
  if (depth < MAX_BASE64_DEPTH) scanBase64(decoded, needles, depth + 1, spans, maxSpan, level);
}

/** One level of base64 decoding: where its run's characters stand in the level above. */
interface Level {
  readonly positions: Int32Array;
  readonly offset: number;
  readonly parent: Level | undefined;
}

/** Decoded byte range [from, to) of `level` → the run's characters → a span of the original text. */
function spanOf(level: Level, from: number, to: number): [number, number] | undefined {
  const { positions, offset } = level;
  const first = offset + Math.floor(from / 3) * 4 + (from % 3);
  const lastByte = to - 1;
  const last = offset + Math.floor(lastByte / 3) * 4 + (lastByte % 3) + 1;
  const a = positions[first];
  const z = positions[Math.min(last, positions.length - 1)];
  if (a === undefined || z === undefined) return undefined;
  if (level.parent === undefined) return [a, z + 1];
  const left = spanOf(level.parent, a, a + 1);
  const right = spanOf(level.parent, z, z + 1);
  return left === undefined || right === undefined ? undefined : mergeSpans(left, right);
}

function mergeSpans(a: [number, number], b: [number, number]): [number, number] {
  return [Math.min(a[0], b[0]), Math.max(a[1], b[1])];
}

/**
 * Eight copies of the first letter from U+5BC6 on that occurs in none of `strings` and folds to
 * itself: no base64, hex or skeleton needle can use it, and it separates its neighbours.
 */
function letterFallback(strings: readonly string[]): string {
  const used = new Set<number>();
  for (const s of strings) for (const ch of s) used.add(ch.codePointAt(0) ?? 0);
  let cp = 0x5bc6; // '密'
  while (used.has(cp) || skeletonChars(cp) !== String.fromCodePoint(cp)) cp++;
  return String.fromCodePoint(cp).repeat(8);
}

/** True when one string contains the other, or they share at least three characters at an edge. */
function sharesEdge(a: string, b: string): boolean {
  if (a.includes(b) || b.includes(a)) return true;
  for (let k = 3; k < Math.min(a.length, b.length); k++) {
    if (a.endsWith(b.slice(0, k)) || b.endsWith(a.slice(0, k))) return true;
  }
  return false;
}
