/**
 * The views of a text the normalising secret matcher searches (see obfuscated.ts): the skeleton
 * (letters and digits as detectors fold them), the decoded skeleton (percent escapes, HTML
 * character references and `\u`/`\x` escapes decoded first) and the hex view. Each view is a
 * string whose every character maps back to a range of the original text; each is built in one
 * pass.
 *
 * @example
 * ```ts
 * const view = buildSkeleton('S-K l i v e', false, true);
 * view.text; // 'sklive'
 * ```
 */
import { foldCodePoint } from './fold.js';
import { firstOpenWindow } from './windows.js';

/** A view of the text: `text[i]` came from the original `[start[i], end[i])`. */
export interface View {
  readonly text: string;
  readonly start: Int32Array;
  readonly end: Int32Array;
  /** Whether any escape was decoded (only for the decoded skeleton). */
  readonly decoded: boolean;
}

/** ASCII letters and digits, lower-cased; '' for the rest. */
const ASCII_SKELETON: readonly string[] = Array.from({ length: 128 }, (_, cp) => {
  const ch = String.fromCharCode(cp);
  return /[A-Za-z0-9]/.test(ch) ? ch.toLowerCase() : '';
});
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** The skeleton characters of one code point. */
export function skeletonChars(cp: number): string {
  if (cp < 0x80) return ASCII_SKELETON[cp] ?? '';
  if (cp >= 0xd800 && cp <= 0xdfff) return '';
  let out = '';
  for (const ch of foldCodePoint(cp)) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x80) out += ASCII_SKELETON[c] ?? '';
    else if (LETTER_OR_DIGIT.test(ch)) out += ch;
  }
  return out;
}

/**
 * The skeleton of each code point of the Basic Multilingual Plane past ASCII as one UTF-16
 * code, learnt from {@link skeletonChars} on first sight: 0 not yet known, {@link NO_SKELETON},
 * {@link SEVERAL_CHARS} (then made again: rare). Made on the first such code point; 128 KiB,
 * fixed whatever the input.
 */
let bmpSkeleton: Uint16Array | undefined;
/** Surrogate codes: never the one-character skeleton of a code point of the Basic Multilingual Plane. */
export const NO_SKELETON = 0xdfff;
export const SEVERAL_CHARS = 0xdffe;

/**
 * The skeleton of a code point of the plane past ASCII (not a surrogate) as one code: its one
 * character's, {@link NO_SKELETON} or {@link SEVERAL_CHARS}.
 *
 * @example
 * ```ts
 * bmpSkeletonCode(0xff25); // 0x65 ('e', from fullwidth 'Ｅ')
 * ```
 */
export function bmpSkeletonCode(cp: number): number {
  const table = (bmpSkeleton ??= new Uint16Array(0x10000));
  let code = table[cp] as number;
  if (code === 0) {
    const chars = skeletonChars(cp);
    code = chars.length === 0 ? NO_SKELETON : chars.length === 1 ? chars.charCodeAt(0) : SEVERAL_CHARS;
    table[cp] = code;
  }
  return code;
}

/** ASCII skeleton codes: the lower-case letter or digit, 0 for the rest. */
const ASCII_CODE: Uint16Array = Uint16Array.from(ASCII_SKELETON, (ch) => (ch === '' ? 0 : ch.charCodeAt(0)));

/** The codes of an unmapped view, shared (a view's text is copied out before the next build). */
let scratchCodes = new Uint16Array(1024);
const NO_MAP = new Int32Array(0);

/**
 * A growable output: UTF-16 codes and, when `mapped`, for each the original range. The first
 * pass over a text is unmapped (no allocation but the string); the mapped pass runs only when a
 * needle was found.
 */
class ViewBuilder {
  codes: Uint16Array;
  start: Int32Array;
  end: Int32Array;
  length = 0;
  readonly mapped: boolean;

  constructor(capacity: number, mapped: boolean) {
    this.mapped = mapped;
    if (mapped) {
      this.codes = new Uint16Array(capacity);
      this.start = new Int32Array(capacity);
      this.end = new Int32Array(capacity);
    } else {
      if (scratchCodes.length < capacity) scratchCodes = new Uint16Array(capacity);
      this.codes = scratchCodes;
      this.start = NO_MAP;
      this.end = NO_MAP;
    }
  }

  push(code: number, from: number, to: number): void {
    if (this.length === this.codes.length) this.#grow();
    const k = this.length++;
    this.codes[k] = code;
    if (this.mapped) {
      this.start[k] = from;
      this.end[k] = to;
    }
  }

  pushAll(chars: string, from: number, to: number): void {
    for (let j = 0; j < chars.length; j++) this.push(chars.charCodeAt(j), from, to);
  }

  view(decoded: boolean): View {
    const bytes = Buffer.from(this.codes.buffer, this.codes.byteOffset, this.length * 2);
    return { text: bytes.toString('utf16le'), start: this.start, end: this.end, decoded };
  }

  #grow(): void {
    const capacity = this.codes.length * 2 + 16;
    const codes = new Uint16Array(capacity);
    codes.set(this.codes);
    this.codes = codes;
    if (!this.mapped) {
      scratchCodes = codes;
      return;
    }
    const start = new Int32Array(capacity);
    const end = new Int32Array(capacity);
    start.set(this.start);
    end.set(this.end);
    this.start = start;
    this.end = end;
  }
}

/**
 * One pass over `text`: each code point (or, with `decode`, each escape) becomes its skeleton
 * characters, each mapped to the range it came from.
 */
export function buildSkeleton(text: string, decode: boolean, mapped: boolean): View {
  const n = text.length;
  if (!mapped && !decode) {
    // The common first pass, tight: ASCII letters and digits only, no map.
    if (scratchCodes.length < n) scratchCodes = new Uint16Array(n + 1024);
    const codes = scratchCodes;
    let k = 0;
    let i = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) break;
      const code = ASCII_CODE[c] as number;
      if (code !== 0) codes[k++] = code;
    }
    if (i === n)
      return {
        text: Buffer.from(codes.buffer, 0, k * 2).toString('utf16le'),
        start: NO_MAP,
        end: NO_MAP,
        decoded: false,
      };
  }
  const out = new ViewBuilder(n + 8, mapped);
  let decoded = false;
  for (let i = 0; i < n;) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (decode && (c === 0x25 || c === 0x26 || c === 0x5c)) {
        const escape = decodeEscape(text, i);
        if (escape !== undefined) {
          decoded = true;
          if (escape.cp >= 0) out.pushAll(skeletonChars(escape.cp), i, escape.next);
          i = escape.next;
          continue;
        }
      }
      const code = ASCII_CODE[c] as number;
      if (code !== 0) out.push(code, i, i + 1);
      i++;
      continue;
    }
    if (c < 0xd800 || c > 0xdfff) {
      const code = bmpSkeletonCode(c);
      if (code < SEVERAL_CHARS || code > NO_SKELETON) out.push(code, i, i + 1);
      else if (code === SEVERAL_CHARS) out.pushAll(skeletonChars(c), i, i + 1);
      i++;
      continue;
    }
    const cp = text.codePointAt(i) ?? c;
    const width = cp > 0xffff ? 2 : 1;
    const chars = skeletonChars(cp);
    if (chars !== '') out.pushAll(chars, i, i + width);
    i += width;
  }
  return out.view(decoded);
}

/** Named character references that stand for characters; any other `&name;` decodes to nothing. */
const NAMED_ENTITIES: Readonly<Record<string, number>> = { amp: 0x26, lt: 0x3c, gt: 0x3e, quot: 0x22, apos: 0x27 };

/** The escape at `i` (`%XX`, `&#…;`, `&name;`, `\uXXXX`, `\u{…}`, `\xHH`), or undefined. cp −1: decodes to nothing. */
function decodeEscape(text: string, i: number): { cp: number; next: number } | undefined {
  const c = text.charCodeAt(i);
  if (c === 0x25) {
    const byte = hexByteAt(text, i + 1);
    if (byte < 0) return undefined;
    if (byte < 0x80) return { cp: byte, next: i + 3 };
    // A UTF-8 sequence of percent escapes: its length from the lead byte.
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    let cp = length === 4 ? byte & 0x07 : length === 3 ? byte & 0x0f : byte & 0x1f;
    let at = i + 3;
    for (let m = 1; m < length; m++) {
      if (text.charCodeAt(at) !== 0x25) return { cp: byte, next: i + 3 };
      const next = hexByteAt(text, at + 1);
      if (next < 0x80 || next > 0xbf) return { cp: byte, next: i + 3 };
      cp = (cp << 6) | (next & 0x3f);
      at += 3;
    }
    return { cp: length === 1 ? byte : cp, next: at };
  }
  if (c === 0x26) {
    if (text.charCodeAt(i + 1) === 0x23) {
      const isHex = (text.charCodeAt(i + 2) | 0x20) === 0x78;
      let at = i + (isHex ? 3 : 2);
      let value = 0;
      const from = at;
      while (at < text.length && at - from < 8) {
        const d = isHex ? hexDigit(text.charCodeAt(at)) : decimalDigit(text.charCodeAt(at));
        if (d < 0) break;
        value = value * (isHex ? 16 : 10) + d;
        at++;
      }
      if (at === from || value > 0x10ffff) return undefined;
      if (text.charCodeAt(at) === 0x3b) at++;
      return { cp: value, next: at };
    }
    let at = i + 1;
    while (at < text.length && at - i <= 32 && isAsciiAlnum(text.charCodeAt(at))) at++;
    if (at - i < 3 || text.charCodeAt(at) !== 0x3b) return undefined;
    const name = text.slice(i + 1, at).toLowerCase();
    return { cp: NAMED_ENTITIES[name] ?? -1, next: at + 1 };
  }
  // Backslash escapes.
  const kind = text.charCodeAt(i + 1) | 0x20;
  if (kind === 0x78) {
    const byte = hexByteAt(text, i + 2);
    return byte < 0 ? undefined : { cp: byte, next: i + 4 };
  }
  if (kind !== 0x75) return undefined;
  if (text.charCodeAt(i + 2) === 0x7b) {
    let at = i + 3;
    let value = 0;
    while (at < text.length && at - i < 11) {
      const d = hexDigit(text.charCodeAt(at));
      if (d < 0) break;
      value = value * 16 + d;
      at++;
    }
    if (at === i + 3 || text.charCodeAt(at) !== 0x7d || value > 0x10ffff) return undefined;
    return { cp: value, next: at + 1 };
  }
  let value = 0;
  for (let m = 2; m < 6; m++) {
    const d = hexDigit(text.charCodeAt(i + m));
    if (d < 0) return undefined;
    value = value * 16 + d;
  }
  return { cp: value, next: i + 6 };
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

function decimalDigit(c: number): number {
  return c >= 0x30 && c <= 0x39 ? c - 0x30 : -1;
}

function isAsciiAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
}

function hexByteAt(text: string, i: number): number {
  const hi = hexDigit(text.charCodeAt(i));
  const lo = hexDigit(text.charCodeAt(i + 1));
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/**
 * The hex view: hex digits, lower-cased. Between two digits of a run may stand separators
 * (whitespace and `: , . - _ % \ # & ; x X` — so `0x41`, `\x41`, `%41`, `&#x41;`, `41:42` and
 * `41 42` all read as hex); any other character ends the run (letters g–z, the replacement).
 * A `0` directly before an `x` is a prefix, not a digit.
 */
export function buildHexView(text: string, mapped: boolean): View | undefined {
  const n = text.length;
  const out = new ViewBuilder(n + 8, mapped);
  let digits = 0;
  let broken = true;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const d = hexDigit(c);
    if (d >= 0) {
      if (c === 0x30 && (text.charCodeAt(i + 1) | 0x20) === 0x78) continue; // "0x"
      out.push(d < 10 ? 0x30 + d : 0x57 + d, i, i + 1);
      digits++;
      broken = false;
      continue;
    }
    if (isHexSeparator(c)) continue;
    // Anything else breaks the run: a marker that matches no needle character.
    if (!broken) {
      out.push(0x7c, i, i);
      broken = true;
    }
  }
  return digits < 16 ? undefined : out.view(false);
}

/** By ASCII code: {@link HEX_DIGIT}, {@link HEX_SEPARATOR} (skipped by the hex view), or 0: it ends a run. */
const HEX_DIGIT = 1;
const HEX_SEPARATOR = 2;
const HEX_ROLE: Uint8Array = Uint8Array.from({ length: 0x80 }, (_, c) =>
  hexDigit(c) >= 0 ? HEX_DIGIT : isHexSeparator(c) ? HEX_SEPARATOR : 0,
);

/**
 * True when a run of the hex view ({@link buildHexView}) would hold at least `digits` hex digits,
 * which a hex needle of that length needs; told in one pass, without building the view.
 *
 * @example
 * ```ts
 * hasHexRun('id 73:6b:2d:6c:69:76:65:30', 16); // true
 * hasHexRun('a decade of bad faces', 16);       // false
 * ```
 */
export function hasHexRun(text: string, digits: number): boolean {
  // A run of `digits` digits covers at least `digits` characters: prose, where every letter past
  // 'f' ends a run, is crossed in strides (firstOpenWindow).
  const n = text.length;
  for (let i = firstOpenWindow(text, 0, digits, ENDS_HEX_RUN); i !== -1;) {
    let run = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80 || ENDS_HEX_RUN[c] === 1) break;
      if (HEX_ROLE[c] === HEX_DIGIT && ++run >= digits) return true;
    }
    i = firstOpenWindow(text, i, digits, ENDS_HEX_RUN);
  }
  return false;
}

/** 1 for the ASCII codes that end a run of the hex view. */
const ENDS_HEX_RUN: Uint8Array = HEX_ROLE.map((role) => (role === 0 ? 1 : 0));

function isHexSeparator(c: number): boolean {
  return (
    c === 0x20 ||
    c === 0x09 ||
    c === 0x0a ||
    c === 0x0d ||
    c === 0x3a || // :
    c === 0x2c || // ,
    c === 0x2e || // .
    c === 0x2d || // -
    c === 0x5f || // _
    c === 0x25 || // %
    c === 0x5c || // \
    c === 0x23 || // #
    c === 0x26 || // &
    c === 0x3b || // ;
    (c | 0x20) === 0x78 // x
  );
}
