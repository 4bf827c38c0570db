/**
 * Redaction: take contact details and configured secrets out of text before it reaches a model,
 * a caller or a log. A remote agent's reply is someone else's text, so email addresses in it are
 * redacted; secrets Airlock holds (tokens, API keys) must never be echoed back in any form.
 *
 * @example
 * ```ts
 * let reply = redactContactDetails(raw).text;
 * reply = redactSecrets(reply, [config.upstreamToken]).text;
 * ```
 */
import { Buffer } from 'node:buffer';
import { createObfuscationMatcher, type ObfuscationMatcher } from './obfuscated.js';

/** The result of a redaction. */
export interface RedactResult {
  /** The text with every match replaced. */
  readonly text: string;
  /** How many replacements were made. */
  readonly redacted: number;
}

/**
 * What an email address becomes.
 *
 * @example
 * ```ts
 * redactContactDetails('a@b.io').text === EMAIL_REPLACEMENT; // true
 * ```
 */
export const EMAIL_REPLACEMENT = '[email redacted]';

/**
 * What a secret (in any of its forms) becomes.
 *
 * @example
 * ```ts
 * redactSecrets('token=s3cr3t-t0ken', ['s3cr3t-t0ken']).text; // 'token=[secret redacted]'
 * ```
 */
export const SECRET_REPLACEMENT = '[secret redacted]';

/**
 * Secrets shorter than this (in code points) are not redacted: a short value would match
 * ordinary text, and a secret that short is not a secret.
 *
 * @example
 * ```ts
 * redactSecrets('hunter2 hunter2', ['hunter2']).redacted; // 0 (7 characters)
 * ```
 */
export const MIN_SECRET_LENGTH = 8;

// ---------------------------------------------------------------------------------------------
// Email addresses. Adjacent pieces use disjoint character sets (word characters never include
// '@', spaces or brackets; domain labels never include '.'), so backing off inside a word fails at once; an address may only
// start where a word starts (the look-behind), so a long run of word characters is scanned once,
// not once per position; and every other quantifier is bounded. The scan is linear.

const WORD_CHAR = String.raw`[a-z0-9_%+-]`;
const WORD = String.raw`${WORD_CHAR}+`;
/** A local part's characters: dots included, in any position ("a..b.", which mail servers accept). */
const LOCAL_CHAR = String.raw`[a-z0-9._%+-]`;
const LOCAL_RUN = String.raw`${LOCAL_CHAR}+`;
const LABEL = String.raw`[a-z0-9-]{1,63}`;
const OPEN = String.raw`[\[({<]`;
const CLOSE = String.raw`[\])}>]`;
const AT_SYMBOL = String.raw`\s{0,3}[@\uFF20\uFE6B]\s{0,3}`;
const AT_BRACKETED = String.raw`\s{0,3}${OPEN}\s{0,2}at\s{0,2}${CLOSE}\s{0,3}`;
const AT_WORD = String.raw`\s{1,3}at\s{1,3}`;
const DOT_BRACKETED = String.raw`\s{0,3}${OPEN}\s{0,2}dot\s{0,2}${CLOSE}\s{0,3}`;
const DOT_WORD = String.raw`\s{1,3}dot\s{1,3}`;
const DOT_SPACED = String.raw`\s{1,3}\.\s{0,3}`;
const DOT_ANY = String.raw`(?:\.|${DOT_BRACKETED}|${DOT_WORD}|${DOT_SPACED})`;
const TLD = String.raw`[a-z]{2,24}(?![a-z0-9-])`;
/** Top-level domains accepted after the all-words form, which otherwise reads like prose. */
const COMMON_TLD = String.raw`(?:com|net|org|edu|gov|mil|int|io|co|ai|dev|app|me|info|biz|us|uk|ca|au|de|fr|nl|es|it|jp|cn|in|br|ru|ch|se|dk|fi|eu|tech|xyz|online|site)\b`;

const MAX_EMAIL_PASSES = 8;

/**
 * What every address the pattern takes holds: an at sign (or a look-alike), a bracketed "at", or
 * a spelled-out "dot" (the all-words form needs one). Most text holds none and is returned
 * without the pattern's scan, which tries every word (12 ns a character on prose).
 */
const EMAIL_HINT = new RegExp(String.raw`[@\uFF20\uFE6B]|${OPEN}\s{0,2}at\s{0,2}${CLOSE}|dot`, 'i');

const EMAIL_PATTERN = new RegExp(
  // name@domain.tld, name [at] domain [dot] tld, name(at)domain.tld, name @ domain dot tld, …
  String.raw`(?<!${LOCAL_CHAR})${LOCAL_RUN}(?:(?:${DOT_BRACKETED}|${DOT_WORD}|${DOT_SPACED})${LOCAL_RUN}){0,8}(?:${AT_SYMBOL}|${AT_BRACKETED})(?:${LABEL}${DOT_ANY}){1,8}${TLD}` +
    // name at domain dot com: only with spelled-out dots and a common TLD, so that
    // "look at example.com" stays as it is.
    String.raw`|(?<!${WORD_CHAR})${WORD}(?:${DOT_WORD}${WORD}){0,3}${AT_WORD}(?:${LABEL}(?:${DOT_WORD}|${DOT_BRACKETED})){1,4}${COMMON_TLD}`,
  'gi',
);

/**
 * Replaces email addresses with `[email redacted]`: plain ones (`name@example.com`, including
 * fullwidth '＠'), and the common obfuscations — `name [at] example [dot] com`, `name (at)
 * example (dot) com`, `{at}`/`<at>`, spaces around '@' and before dots (`name @ example . com`),
 * `name@example dot com`, and the
 * all-words `name at example dot com` (only with a common top-level domain, so prose such as
 * "look at example.com" is left alone). Dotted local parts (`first.last`, `first [dot] last`)
 * are taken whole. Phone numbers and postal addresses are not touched.
 *
 * Linear time; never throws; non-string input is treated as empty.
 *
 * @example
 * ```ts
 * redactContactDetails('Mail jane.doe@example.com or bob [at] corp [dot] io');
 * // { text: 'Mail [email redacted] or [email redacted]', redacted: 2 }
 * redactContactDetails('see https://example.com/a@b').redacted; // 0 (no top-level domain after '@')
 * ```
 */
export function redactContactDetails(text: string): RedactResult {
  if (typeof text !== 'string') return { text: '', redacted: 0 };
  if (!EMAIL_HINT.test(text)) return { text, redacted: 0 };
  let redacted = 0;
  let out = text;
  // A match can end inside the next address ("a@b.io . c.@d.io" takes "a@b.io . c"), and the
  // scan goes on after it, so the rest is looked at again until nothing changes. Each pass
  // is linear and only redactions start another one, so a few passes always suffice.
  for (let pass = 0; pass < MAX_EMAIL_PASSES; pass++) {
    const before = redacted;
    out = out.replace(EMAIL_PATTERN, () => {
      redacted++;
      return EMAIL_REPLACEMENT;
    });
    if (redacted === before) break;
  }
  return { text: out, redacted };
}

// ---------------------------------------------------------------------------------------------
// Secrets.

/**
 * Replaces every occurrence of each configured secret with `[secret redacted]`: the exact value,
 * its base64 (standard and URL-safe alphabets, padded and unpadded, and the stable middle of
 * the secret's encoding at each of the three byte alignments, so it is also found inside a
 * longer base64 payload such as an HTTP Basic credential), and its URL-encoded forms
 * (`encodeURIComponent`, strict RFC 3986, form encoding with '+' for spaces, upper- and
 * lower-case hex). Secrets shorter than {@link MIN_SECRET_LENGTH} code points are skipped.
 *
 * Disguised forms are found too, by the normalising matcher (`obfuscated.ts`): case changed,
 * separators, zero-width characters or soft hyphens inserted, split by a line break, fullwidth,
 * reversed, hex, full percent-encoding, HTML character references, `\uXXXX` escapes, base64
 * with line breaks, base64 of base64, base64 of UTF-16. Such an occurrence's whole span
 * (separators included) is replaced.
 *
 * All occurrences of all forms are found first and overlapping ones merged, which is the same
 * as replacing the longest first. The result is guaranteed to contain none of the forms and no
 * occurrence the matcher finds: if a replacement would join its neighbours into a secret (only
 * possible for a secret that shares characters with `[secret redacted]` in a contrived way),
 * the redaction is redone with a replacement made of a letter that occurs in no secret. Never
 * throws; non-string secrets are ignored.
 *
 * @example
 * ```ts
 * redactSecrets('Bearer tok_0123456789 / dG9rXzAxMjM0NTY3ODk=', ['tok_0123456789']);
 * // { text: 'Bearer [secret redacted] / [secret redacted]', redacted: 2 }
 * ```
 */
export function redactSecrets(text: string, secrets: readonly string[]): RedactResult {
  if (typeof text !== 'string') return { text: '', redacted: 0 };
  const { forms, matcher } = derivedFor(secrets);
  if (forms.length === 0 || text.length === 0) return { text, redacted: 0 };
  const first = replaceForms(text, forms, SECRET_REPLACEMENT, matcher);
  if (first.redacted === 0) return first;
  if (!forms.some((form) => first.text.includes(form)) && matcher.spans(first.text) === undefined) return first;
  return replaceForms(text, forms, matcher.fallback(forms), matcher);
}

/**
 * What redaction derives from a list of secrets, built once per list: `redactSecrets` is called
 * with the same few lists over and over (a remote's reply filter once per chunk), and deriving
 * the forms alone costs about 10 µs per secret. Keyed by the list's strings as JSON, which no two
 * different lists share (joining with a separator would let `['a\u0000b']` stand for `['a', 'b']`).
 */
const matchers = new Map<string, ObfuscationMatcher>();
const formsByList = new Map<string, { readonly forms: readonly string[]; readonly ignored: number }>();
const MAX_CACHED_LISTS = 32;

/** What one list was derived into, and a copy of its entries to tell whether it has changed since. */
interface Derived {
  readonly entries: readonly unknown[];
  readonly forms: readonly string[];
  readonly matcher: ObfuscationMatcher;
}

/**
 * The derivation of the last lists seen, by the array itself: a caller passes the same array
 * call after call (the reply filter, chunk after chunk), and comparing its entries one by one
 * costs less than the key (2 µs a call for one secret). An array changed in place is derived again.
 */
const derivedByList = new WeakMap<readonly string[], Derived>();

function derivedFor(secrets: readonly string[]): Derived {
  const known = Array.isArray(secrets) ? derivedByList.get(secrets) : undefined;
  if (known !== undefined && sameEntries(known.entries, secrets)) return known;
  const derived: Derived = {
    entries: Array.isArray(secrets) ? [...(secrets as readonly unknown[])] : [],
    forms: secretForms(secrets).forms,
    matcher: obfuscationMatcher(secrets),
  };
  if (Array.isArray(secrets)) derivedByList.set(secrets, derived);
  return derived;
}

function sameEntries(entries: readonly unknown[], secrets: readonly unknown[]): boolean {
  if (entries.length !== secrets.length) return false;
  for (let i = 0; i < entries.length; i++) if (entries[i] !== secrets[i]) return false;
  return true;
}

/** Each string entry as JSON (quoted, escaped), anything else as `_` (ignored when deriving): never throws. */
function listKey(secrets: readonly string[]): string {
  if (!Array.isArray(secrets)) return '';
  let key = '';
  for (const secret of secrets as readonly unknown[])
    key += typeof secret === 'string' ? `${JSON.stringify(secret)},` : '_,';
  return key;
}

function remember<T>(cache: Map<string, T>, key: string, value: T): T {
  if (cache.size >= MAX_CACHED_LISTS) cache.clear();
  cache.set(key, value);
  return value;
}

/**
 * The normalising matcher for `secrets` (see `obfuscated.ts`), built once per list and cached.
 *
 * @example
 * ```ts
 * obfuscationMatcher(['tok_0123456789']).spans('T O K 0123456789'); // [0, 16]
 * ```
 */
export function obfuscationMatcher(secrets: readonly string[]): ObfuscationMatcher {
  const key = listKey(secrets);
  return matchers.get(key) ?? remember(matchers, key, createObfuscationMatcher(secrets, MIN_SECRET_LENGTH));
}

/**
 * Every form {@link redactSecrets} replaces for these secrets — the value itself, its
 * URL-encoded forms and its base64 forms (whole and the alignment-stable cores, both
 * alphabets) — deduplicated, and how many secrets were unusable (not strings, or shorter
 * than {@link MIN_SECRET_LENGTH} code points). Shared with the streaming reply scrubber, which
 * needs the forms' lengths to know how much text to hold back. Built once per list and cached;
 * the list returned is frozen.
 *
 * @example
 * ```ts
 * secretForms(['sk-live-0123456789']).forms.includes('c2stbGl2ZS0wMTIzNDU2Nzg5'); // true
 * ```
 */
export function secretForms(secrets: readonly string[]): {
  readonly forms: readonly string[];
  readonly ignored: number;
} {
  if (!Array.isArray(secrets)) return { forms: [], ignored: 0 };
  const key = listKey(secrets);
  return formsByList.get(key) ?? remember(formsByList, key, deriveForms(secrets));
}

function deriveForms(secrets: readonly string[]): { readonly forms: readonly string[]; readonly ignored: number } {
  const forms = new Set<string>();
  let ignored = 0;
  for (const secret of secrets as readonly unknown[]) {
    if (typeof secret !== 'string' || codePointLength(secret) < MIN_SECRET_LENGTH) {
      ignored++;
      continue;
    }
    forms.add(secret);
    const bytes = Buffer.from(secret, 'utf8');
    for (const form of percentForms(bytes)) forms.add(form);
    for (const form of base64Forms(bytes)) forms.add(form);
  }
  return Object.freeze({
    forms: Object.freeze([...forms].filter((form) => form.length >= MIN_SECRET_LENGTH)),
    ignored,
  });
}

function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Characters `encodeURIComponent` leaves alone; strict RFC 3986 also encodes `!'()*`. */
const URI_COMPONENT_SAFE = /[A-Za-z0-9\-_.!~*'()]/;
const RFC3986_SAFE = /[A-Za-z0-9\-_.~]/;

/** URL-encoded forms of the secret's UTF-8 bytes (never throws, unlike `encodeURIComponent`). */
function percentForms(bytes: Buffer): string[] {
  const encode = (safe: RegExp, plusForSpace: boolean, lower: boolean): string => {
    let out = '';
    for (const byte of bytes) {
      const ch = String.fromCharCode(byte);
      if (byte < 0x80 && safe.test(ch)) out += ch;
      else if (plusForSpace && byte === 0x20) out += '+';
      else {
        const hex = byte.toString(16).padStart(2, '0');
        out += '%' + (lower ? hex : hex.toUpperCase());
      }
    }
    return out;
  };
  const forms: string[] = [];
  for (const lower of [false, true]) {
    forms.push(encode(URI_COMPONENT_SAFE, false, lower));
    forms.push(encode(RFC3986_SAFE, false, lower));
    forms.push(encode(RFC3986_SAFE, true, lower));
  }
  return forms;
}

/** Base64 forms: whole-value encodings and the alignment-stable cores (see {@link redactSecrets}). */
function base64Forms(bytes: Buffer): string[] {
  const forms: string[] = [];
  const whole = bytes.toString('base64');
  forms.push(whole, whole.replace(/=+$/, ''));
  for (let offset = 0; offset < 3; offset++) {
    const shifted = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const firstFull = Math.ceil((8 * offset) / 6);
    const lastFull = Math.floor((8 * (offset + bytes.length)) / 6) - 1;
    forms.push(shifted.slice(firstFull, lastFull + 1));
  }
  return forms.flatMap((form) => [form, form.replace(/\+/g, '-').replace(/\//g, '_')]);
}

/**
 * Replaces every occurrence of every form, merging overlapping occurrences into one
 * replacement. Linear in the text length plus the number of occurrences (per form).
 */
function replaceForms(
  text: string,
  forms: readonly string[],
  replacement: string,
  matcher: ObfuscationMatcher,
): RedactResult {
  // coverEnd[i]: the furthest end of an occurrence starting at i (0 when none starts there).
  const coverEnd = new Int32Array(text.length);
  let any = false;
  for (const form of forms) {
    for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) {
      const end = at + form.length;
      if (end > (coverEnd[at] ?? 0)) coverEnd[at] = end;
      any = true;
    }
  }
  // Disguised occurrences (case, separators, encodings: see obfuscated.ts).
  const spans = matcher.spans(text);
  if (spans !== undefined) {
    for (let i = 0; i < spans.length; i += 2) {
      const at = spans[i] as number;
      const end = spans[i + 1] as number;
      if (end > (coverEnd[at] ?? 0)) coverEnd[at] = end;
      any = true;
    }
  }
  if (!any) return { text, redacted: 0 };
  const out: string[] = [];
  let copied = 0;
  let redacted = 0;
  for (let i = 0; i < text.length;) {
    let end = coverEnd[i] ?? 0;
    if (end <= i) {
      i++;
      continue;
    }
    for (let j = i + 1; j < end; j++) end = Math.max(end, coverEnd[j] ?? 0);
    out.push(text.slice(copied, i), replacement);
    redacted++;
    copied = end;
    i = end;
  }
  out.push(text.slice(copied));
  return { text: out.join(''), redacted };
}
