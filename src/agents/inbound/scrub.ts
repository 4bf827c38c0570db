/**
 * Reply scrubbing: configured secrets (`content.scrubSecrets`) never
 * leave in a reply, whether the reply arrives whole or in streamed chunks.
 *
 * It finds and replaces exactly what `redactSecrets` (src/content) does — each secret, its base64
 * forms and its URL-encoded forms, overlapping occurrences merged into one `[secret redacted]` —
 * but computes the forms once, when the scrubber is created, and can work on a stream. It carries
 * its own copy of the form list because src/content does not export one, and because
 * `redactSecrets` decides on its fallback replacement after looking at the whole text, which a
 * stream cannot wait for (see {@link createReplyScrubber}).
 *
 * @example
 * ```ts
 * const scrubber = createReplyScrubber(config.scrubSecrets); // once, at startup
 * const stream = scrubber.stream();                           // once per reply
 * for await (const chunk of reply) send(stream.push(chunk));
 * send(stream.flush());
 * ```
 */
import {
  SECRET_REPLACEMENT,
  obfuscationMatcher,
  secretForms,
  type ObfuscationMatcher,
  type RedactResult,
} from '../../content/index.js';

/** A scrubber for one reply that arrives in chunks. */
export interface StreamScrubber {
  /**
   * Takes the next chunk and returns the scrubbed text that is now certain (possibly `''`). Text
   * that could still turn out to be the start of a secret is held back until the next push.
   */
  push(chunk: string): string;
  /** Returns the scrubbed rest of the reply; the scrubber is then empty and can start again. */
  flush(): string;
  /** Replacements made so far (for the audit row; the secrets themselves are never reported). */
  readonly redacted: number;
}

/** The result of {@link createReplyScrubber}. */
export interface ReplyScrubber {
  /** False when no secret was usable: every method is then the identity. */
  readonly active: boolean;
  /**
   * Secrets that were skipped: not a string, or shorter than `MIN_SECRET_LENGTH` (8) code points.
   * Worth a warning at startup: such a value is left in replies as it is.
   */
  readonly ignored: number;
  /**
   * Most characters a stream holds back between pushes: the longest form of any secret, less one
   * (plus, rarely, one more to keep a surrogate pair whole, and any secret already in view that
   * reaches into that window). 0 when inactive.
   */
  readonly holdBack: number;
  /** The whole text, every secret form replaced. */
  scrub(text: string): string;
  /** {@link ReplyScrubber.scrub} with the number of replacements made. */
  redact(text: string): RedactResult;
  /** A new streaming scrubber; its pushes and flush together give `scrub` of all chunks joined. */
  stream(): StreamScrubber;
}

/**
 * Creates a scrubber for `secrets`. Each secret of at least `MIN_SECRET_LENGTH` (8) code points
 * is replaced in every form `redactSecrets` knows — the exact value; base64, standard and
 * URL-safe, padded and unpadded, and the alignment-stable middle of its encoding (so it is found
 * inside a longer base64 payload); and its URL-encoded forms — with `[secret redacted]`.
 * Shorter secrets are ignored (they would match ordinary text), as are non-strings; `ignored`
 * counts them. Matching is exact and case-sensitive.
 *
 * Whole text and streams agree: for any split of a text into chunks, the pushes and the flush of
 * a stream concatenate to exactly `scrub(text)`, and for any secrets the output contains none of
 * their forms. A stream holds back at most `holdBack` characters (the longest form less one; a
 * base64 form is about 4/3 of the secret, a URL-encoded one up to three times its UTF-8 bytes),
 * so a secret split across chunks is still caught.
 *
 * `scrub` equals `redactSecrets(text, secrets).text` with one documented exception: when a form
 * of some secret could join with part of `[secret redacted]` into a secret (a contrived secret
 * such as `']secret-token'`), this scrubber uses the fallback replacement (eight copies of a
 * character that occurs in no form) for every text, where `redactSecrets` uses it only for texts
 * that would actually produce one. Deciding once keeps streamed output stable.
 *
 * With no usable secret the scrubber is a shared identity: `scrub` returns its argument and
 * `stream()` a stateless pass-through, with no allocation. Create it once (the form list is built
 * here) and reuse it; one call costs one substring search per form.
 *
 * @example
 * ```ts
 * const scrubber = createReplyScrubber(['tok_0123456789']);
 * scrubber.scrub('Bearer tok_0123456789'); // 'Bearer [secret redacted]'
 * const s = scrubber.stream();
 * s.push('Bearer tok_01') + s.push('23456789!') + s.flush(); // 'Bearer [secret redacted]!'
 * ```
 */
export function createReplyScrubber(secrets: readonly string[]): ReplyScrubber {
  const { forms, ignored } = secretForms(secrets);
  if (forms.length === 0) return ignored === 0 ? IDENTITY : { ...IDENTITY, ignored };
  const matcher = obfuscationMatcher(secrets);
  const replacement =
    forms.some((form) => canOverlap(form, SECRET_REPLACEMENT)) || matcher.canJoin(SECRET_REPLACEMENT)
      ? matcher.fallback(forms)
      : SECRET_REPLACEMENT;
  let longest = matcher.maxSpan;
  for (const form of forms) longest = Math.max(longest, form.length);
  const holdBack = longest - 1;
  const redact = (text: string): RedactResult => {
    if (typeof text !== 'string') return { text: '', redacted: 0 };
    const spans = findSpans(text, forms, matcher);
    if (spans === undefined) return { text, redacted: 0 };
    return { text: replaceSpans(text, text.length, spans, replacement), redacted: spans.length / 2 };
  };
  return {
    active: true,
    ignored,
    holdBack,
    scrub: (text) => redact(text).text,
    redact,
    stream: () => new SecretStream(forms, matcher, replacement, holdBack),
  };
}

/** The stream for no secrets: everything passes as it is. Stateless, so one is shared. */
const IDENTITY_STREAM: StreamScrubber = Object.freeze({
  push: (chunk: string): string => (typeof chunk === 'string' ? chunk : ''),
  flush: (): string => '',
  redacted: 0,
});

/** The scrubber for no secrets. */
const IDENTITY: ReplyScrubber = Object.freeze({
  active: false,
  ignored: 0,
  holdBack: 0,
  scrub: (text: string): string => (typeof text === 'string' ? text : ''),
  redact: (text: string): RedactResult => ({ text: typeof text === 'string' ? text : '', redacted: 0 }),
  stream: (): StreamScrubber => IDENTITY_STREAM,
});

/**
 * One reply's stream. Invariant: everything before `pending` has been emitted, and no secret
 * occurrence (of the whole reply, as far as it will go) crosses the start of `pending`, so the
 * emitted text is a prefix of what `scrub` gives for the whole reply.
 */
class SecretStream implements StreamScrubber {
  readonly #forms: readonly string[];
  readonly #matcher: ObfuscationMatcher;
  readonly #replacement: string;
  readonly #holdBack: number;
  #pending = '';
  #redacted = 0;

  constructor(forms: readonly string[], matcher: ObfuscationMatcher, replacement: string, holdBack: number) {
    this.#forms = forms;
    this.#matcher = matcher;
    this.#replacement = replacement;
    this.#holdBack = holdBack;
  }

  get redacted(): number {
    return this.#redacted;
  }

  push(chunk: string): string {
    if (typeof chunk !== 'string' || chunk.length === 0) return '';
    const text = this.#pending + chunk;
    // An occurrence that is not complete yet starts at or after `cut`: only the last
    // (longest form − 1) characters can still grow into a secret.
    let cut = text.length - this.#holdBack;
    if (cut <= 0) {
      this.#pending = text;
      return '';
    }
    // Keep a surrogate pair together, so no chunk ends in half a character we split ourselves.
    if (isHighSurrogate(text.charCodeAt(cut - 1)) && isLowSurrogate(text.charCodeAt(cut))) cut--;
    const spans = findSpans(text, this.#forms, this.#matcher);
    if (spans !== undefined) {
      // An occurrence in view that crosses the cut may still merge with one that is not complete
      // yet; hold it back whole (it is replaced, never emitted raw, either way).
      for (let i = 0; i < spans.length; i += 2) {
        const start = spans[i] as number;
        if (start < cut && (spans[i + 1] as number) > cut) cut = start;
      }
    }
    this.#pending = text.slice(cut);
    if (cut === 0) return '';
    if (spans === undefined) return text.slice(0, cut);
    return this.#emit(text, cut, spans);
  }

  flush(): string {
    const text = this.#pending;
    this.#pending = '';
    if (text.length === 0) return '';
    const spans = findSpans(text, this.#forms, this.#matcher);
    return spans === undefined ? text : this.#emit(text, text.length, spans);
  }

  /** `text[0, end)` scrubbed; no span crosses `end`. */
  #emit(text: string, end: number, spans: readonly number[]): string {
    for (let i = 0; i < spans.length && (spans[i] as number) < end; i += 2) this.#redacted++;
    return replaceSpans(text, end, spans, this.#replacement);
  }
}

// ---------------------------------------------------------------------------------------------
// Finding and replacing.

/**
 * The merged occurrences of all forms in `text`, as flat `[start, end, start, end, …]` in order;
 * `undefined` when there is none. Occurrences that overlap (one starts before the other ends) are
 * merged into one span, as `redactSecrets` does; occurrences that merely touch are not.
 */
function findSpans(text: string, forms: readonly string[], matcher: ObfuscationMatcher): number[] | undefined {
  // coverEnd[i]: the furthest end of an occurrence starting at i (0 when none starts there).
  // Allocated only once something is found: the common reply holds no secret.
  let coverEnd: Int32Array | undefined;
  for (const form of forms) {
    for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) {
      coverEnd ??= new Int32Array(text.length);
      const end = at + form.length;
      if (end > (coverEnd[at] as number)) coverEnd[at] = end;
    }
  }
  // Disguised occurrences (case, separators, encodings; src/content/obfuscated.ts).
  const disguised = matcher.spans(text);
  if (disguised !== undefined) {
    coverEnd ??= new Int32Array(text.length);
    for (let i = 0; i < disguised.length; i += 2) {
      const at = disguised[i] as number;
      const end = disguised[i + 1] as number;
      if (end > (coverEnd[at] as number)) coverEnd[at] = end;
    }
  }
  if (coverEnd === undefined) return undefined;
  const spans: number[] = [];
  for (let i = 0; i < text.length;) {
    let end = coverEnd[i] as number;
    if (end <= i) {
      i++;
      continue;
    }
    for (let j = i + 1; j < end; j++) end = Math.max(end, coverEnd[j] as number);
    spans.push(i, end);
    i = end;
  }
  return spans;
}

/** `text[0, to)` with every span that starts before `to` replaced (none may cross `to`). */
function replaceSpans(text: string, to: number, spans: readonly number[], replacement: string): string {
  let out = '';
  let copied = 0;
  for (let i = 0; i < spans.length; i += 2) {
    const start = spans[i] as number;
    if (start >= to) break;
    out += text.slice(copied, start) + replacement;
    copied = spans[i + 1] as number;
  }
  return out + text.slice(copied, to);
}

/**
 * True when `form` could overlap `replacement` in a scrubbed text: at some alignment the two
 * agree on every character they share. If no form can, no replacement can take part in a form,
 * and text between replacements holds no form (every occurrence was replaced), so the output
 * holds none.
 */
function canOverlap(form: string, replacement: string): boolean {
  // `shift` is where the replacement starts, relative to the start of the form.
  for (let shift = 1 - replacement.length; shift < form.length; shift++) {
    const from = Math.max(0, shift);
    const to = Math.min(form.length, shift + replacement.length);
    let agree = true;
    for (let i = from; i < to && agree; i++) agree = form.charCodeAt(i) === replacement.charCodeAt(i - shift);
    if (agree) return true;
  }
  return false;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
