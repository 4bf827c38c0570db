/**
 * How a proposed action's arguments are shown to the person who decides: as JSON text in which
 * every invisible, bidirectional-control or look-alike-space character — in keys and values, at
 * any depth — is written as a `\uXXXX` escape, so the screen cannot show other arguments than
 * those that run (a `U+202E RIGHT-TO-LEFT OVERRIDE` would otherwise draw `"0123456789"` for the
 * text `"9876543210"`). The escaping is lossless, never a stripping: `JSON.parse` of the shown
 * text is the arguments exactly, so what the person reads decodes to what the backend receives.
 *
 * Escaped (and flagged): `\p{Cc}` (control characters; `\n` and `\t` are escaped by JSON as
 * usual but not flagged), `\p{Cf}` (format: U+00AD, U+061C, U+180E, U+200B–U+200F,
 * U+202A–U+202E, U+2060–U+2064, U+2066–U+2069, U+FEFF, the tag characters …), `\p{Zl}`,
 * `\p{Zp}`, `\p{Zs}` other than U+0020 (no-break and other look-alike spaces), lone surrogates,
 * and every other default-ignorable code point (variation selectors, the combining grapheme
 * joiner, the Hangul fillers …: Unicode's list of characters drawn as nothing).
 *
 * @example
 * ```ts
 * const shown = displayArgs({ amount: '\u2066\u202E9876543210\u202C\u2069' });
 * shown.text; // '{"amount":"\\u2066\\u202E9876543210\\u202C\\u2069"}'
 * shown.hidden; // ['U+2066', 'U+202E', 'U+202C', 'U+2069']
 * JSON.parse(shown.text); // the arguments, exactly
 * ```
 */
import type { JsonValue } from './redact.js';

/**
 * Characters that must never reach a screen raw. C0 controls are in it too: JSON writes them
 * as escapes by itself, so {@link displayArgs} only needs to add the rest.
 */
const HIDDEN_SOURCE =
  '[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Cs}\\p{Default_Ignorable_Code_Point}\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]';
const HIDDEN = new RegExp(HIDDEN_SOURCE, 'u');
const HIDDEN_ALL = new RegExp(HIDDEN_SOURCE, 'gu');
/** What is still raw in `JSON.stringify`'s output: the hidden set without C0 (already escaped). */
const RAW_AFTER_JSON =
  /[\u007F-\u009F\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/gu;
/** Hidden characters a person would not be misled by: JSON shows them as `\n` and `\t`. */
const LAYOUT = new Set(['\n', '\t']);
/** Most distinct code points named in a warning. */
const MAX_NAMED = 8;

/**
 * Whether a text holds a character {@link displayArgs} escapes (layout `\n`/`\t` included).
 *
 * @example
 * ```ts
 * hasHiddenCharacters('a\u200Bb'); // true
 * hasHiddenCharacters('plain text'); // false
 * ```
 */
export function hasHiddenCharacters(text: string): boolean {
  return HIDDEN.test(text);
}

/**
 * A text with every hidden character written as `\uXXXX` (a lone surrogate as itself escaped,
 * an astral character as its surrogate pair), and every backslash doubled so the escaping is
 * lossless ({@link unescapeText} undoes it). For one-line fields such as a CLI line.
 *
 * @example
 * ```ts
 * escapeText('a\u202Eb\\c'); // 'a\\u202Eb\\\\c'
 * ```
 */
export function escapeText(text: string): string {
  if (!HIDDEN.test(text) && !text.includes('\\')) return text;
  return text.replace(/\\/g, '\\\\').replace(HIDDEN_ALL, escapeChar);
}

/**
 * Undoes {@link escapeText}.
 *
 * @example
 * ```ts
 * unescapeText('a\\u202Eb\\\\c'); // 'a\u202Eb\\c'
 * ```
 */
export function unescapeText(text: string): string {
  return text.replace(/\\(\\|u[0-9A-Fa-f]{4})/g, (_, escape: string) =>
    escape === '\\' ? '\\' : String.fromCharCode(Number.parseInt(escape.slice(1), 16)),
  );
}

/**
 * What {@link displayArgs} returns: the text to show, and what it had to escape.
 *
 * @example
 * ```ts
 * const { text, hidden } = displayArgs(args);
 * if (hidden.length > 0) warn(hidden.join(', '));
 * ```
 */
export interface ArgsDisplay {
  /** JSON text of the arguments with every hidden character escaped; `JSON.parse(text)` is the arguments. */
  readonly text: string;
  /** Distinct hidden code points found (`U+202E` …; at most 8 named), layout `\n`/`\t` not counted. */
  readonly hidden: readonly string[];
  /** How many hidden characters there are in all (keys and values). */
  readonly hiddenCount: number;
}

/**
 * The arguments as the person sees them (see the module comment). Pure; `indent` as for
 * `JSON.stringify` (its layout newlines are the only raw control characters in the text).
 *
 * @example
 * ```ts
 * displayArgs({ 'k\u200B': 1 }).text; // '{"k\\u200B":1}'
 * ```
 */
export function displayArgs(args: JsonValue, indent?: number): ArgsDisplay {
  const named = new Set<string>();
  let count = 0;
  const scan = (text: string): void => {
    if (!HIDDEN.test(text)) return;
    for (const match of text.matchAll(HIDDEN_ALL)) {
      if (LAYOUT.has(match[0])) continue;
      count++;
      if (named.size < MAX_NAMED) named.add(codePointName(match[0]));
    }
  };
  const walk = (value: JsonValue): void => {
    if (typeof value === 'string') scan(value);
    else if (Array.isArray(value)) for (const item of value) walk(item);
    else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        scan(key);
        walk(item);
      }
    }
  };
  walk(args);
  const json = JSON.stringify(args, null, indent) ?? 'null';
  return { text: json.replace(RAW_AFTER_JSON, escapeChar), hidden: [...named], hiddenCount: count };
}

/**
 * The one line a person reads when the arguments hold hidden characters, or undefined.
 *
 * @example
 * ```ts
 * hiddenWarning(displayArgs({ a: '\u202E' })); // 'The arguments contain 1 invisible or direction-changing character (U+202E) …'
 * ```
 */
export function hiddenWarning(display: ArgsDisplay): string | undefined {
  if (display.hiddenCount === 0) return undefined;
  const many = display.hiddenCount === 1 ? 'character' : 'characters';
  return (
    `The arguments contain ${display.hiddenCount} invisible or direction-changing ${many} ` +
    `(${display.hidden.join(', ')}), shown as \\u escapes; they run exactly as escaped. ` +
    'Deny unless you expected them.'
  );
}

function escapeChar(char: string): string {
  let out = '';
  for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`;
  return out;
}

function codePointName(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The fields of an approval view that show its arguments: the escaped text (indented), whether
 * it had to escape, and the warning line then.
 *
 * @example
 * ```ts
 * argsView({ a: 1 }); // { argsDisplay: '{\n  "a": 1\n}', hiddenCharacters: false, warnings: [] }
 * ```
 */
export function argsView(args: JsonValue): { argsDisplay: string; hiddenCharacters: boolean; warnings: string[] } {
  const shown = displayArgs(args, 2);
  const warning = hiddenWarning(shown);
  return {
    argsDisplay: shown.text,
    hiddenCharacters: warning !== undefined,
    warnings: warning === undefined ? [] : [warning],
  };
}
