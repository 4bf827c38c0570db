/**
 * Finding long runs without reading every character. Several scans look for a stretch of at
 * least `width` characters none of which ends it (a base64 run, a hex run, an ASCII stretch that
 * could hold a secret's skeleton). Such a stretch that starts at `i` or later, before
 * `i + width`, covers the character at `i + width - 1`; reading back from there to the nearest
 * character that ends a stretch skips every start that cannot qualify, so prose, where such
 * characters come every few letters, is crossed in strides of about `width` with a few reads
 * each, instead of a read of every character.
 *
 * @example
 * ```ts
 * const ENDS = Uint8Array.from({ length: 0x80 }, (_, c) => (c === 0x20 ? 1 : 0)); // a space ends
 * firstOpenWindow('ab cdefgh', 0, 4, ENDS); // 3: 'cdef' holds no space
 * firstOpenWindow('ab cd ef', 0, 4, ENDS);  // -1
 * ```
 */

/**
 * The first `i` at or after `from` such that none of `text[i, i + width)` ends a stretch, or −1
 * when there is none. `ends[c]` is 1 for an ASCII code that ends one; every code above ASCII ends
 * one too. When `from` is a character that ends a stretch or the start of one (0, or where the
 * previous stretch ended), `i` is the start of the stretch found.
 *
 * @example
 * ```ts
 * firstOpenWindow(text, 0, 80, NOT_BASE64); // where the first base64 run of 80 or more starts
 * ```
 */
export function firstOpenWindow(text: string, from: number, width: number, ends: Uint8Array): number {
  let i = from;
  while (i + width <= text.length) {
    let back = i + width - 1;
    while (back >= i && !endsAt(text.charCodeAt(back), ends)) back--;
    if (back < i) return i;
    i = back + 1;
  }
  return -1;
}

function endsAt(code: number, ends: Uint8Array): boolean {
  return code >= 0x80 || ends[code] === 1;
}
