/**
 * Redaction of a proposed action's arguments before they leave the gateway (in the task's data
 * part, the approval screen, logs). Arguments are the backend's text, so they get the same
 * treatment as any tool result: configured secrets (in every encoded form) and email addresses
 * are replaced, values under secret-like keys are dropped whole, and the shape is bounded so a
 * hostile backend cannot make the approval screen huge or deeply nested.
 *
 * @example
 * ```ts
 * const { value } = redactActionArgs({ to: 'jane@corp.io', api_key: 'sk-123', body: 'hi' }, { secrets: [] });
 * // value: { to: '[email redacted]', api_key: '[redacted]', body: 'hi' }
 * ```
 */
import { redactContactDetails, redactSecrets } from '../content/redact.js';

/**
 * A JSON value, as the redacted arguments are.
 *
 * @example
 * ```ts
 * const args: JsonValue = { path: '/tmp/a', force: true, retries: 3, tags: ['x'] };
 * ```
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * What a value under a secret-like key becomes (the whole value, whatever its type).
 *
 * @example
 * ```ts
 * redactActionArgs({ password: 'x' }, { secrets: [] }).value; // { password: '[redacted]' }
 * ```
 */
export const REDACTED_VALUE = '[redacted]';

/**
 * What a subtree deeper than the depth cap, or past the size cap, becomes.
 *
 * @example
 * ```ts
 * redactActionArgs({ a: { b: 1 } }, { secrets: [], maxDepth: 1 }).value; // { a: '[truncated]' }
 * ```
 */
export const TRUNCATED_VALUE = '[truncated]';

/**
 * Default caps: deep enough for real tool arguments, small enough for one approval screen.
 *
 * @example
 * ```ts
 * redactActionArgs(args, { secrets, ...ARGS_REDACTION_DEFAULTS, maxNodes: 200 });
 * ```
 */
export const ARGS_REDACTION_DEFAULTS = Object.freeze({
  /** Containers nested deeper than this become `[truncated]` (also stops cycles). */
  maxDepth: 8,
  /** Values (leaves and containers) kept in all; the rest are dropped, arrays/objects marked. */
  maxNodes: 500,
  /** Characters kept of each string (cut after redaction, so a cut never leaves part of a secret behind). */
  maxStringLength: 2000,
});

/**
 * Options of {@link redactActionArgs}.
 *
 * @example
 * ```ts
 * const options: RedactArgsOptions = { secrets: [config.upstreamToken], maxDepth: 4 };
 * ```
 */
export interface RedactArgsOptions {
  /** Secrets the gateway holds; none may appear in the output in any form redactSecrets knows. */
  readonly secrets: readonly string[];
  readonly maxDepth?: number;
  readonly maxNodes?: number;
  readonly maxStringLength?: number;
}

/**
 * The result of {@link redactActionArgs}.
 *
 * @example
 * ```ts
 * const { value, redacted, truncated } = redactActionArgs(args, { secrets });
 * ```
 */
export interface RedactedArgs {
  readonly value: JsonValue;
  /** How many replacements were made (secret-like keys, secrets, emails). */
  readonly redacted: number;
  /** Whether any cap cut something off. */
  readonly truncated: boolean;
}

/**
 * Key names whose values are credentials. Matched on the key with `-`, `_`, `.` and spaces
 * removed and lower-cased, so `api_key`, `API-Key` and `apiKey` all match. Word-ish on purpose:
 * `author` and `compass` must stay readable, so bare `auth` and `pass` only match whole.
 */
const SECRET_KEY_PATTERN =
  /secret|token|passw(?:or)?d|passphrase|authori[sz]ation|apikey|accesskey|privatekey|credential|cookie|bearer|sessionid|signature|^(?:auth|pass|pwd|pin|otp|cvv|jwt)$/;

/**
 * Whether a key names a credential (its value is dropped whole).
 *
 * @example
 * ```ts
 * isSecretKey('Authorization'); // true
 * isSecretKey('access_token'); // true
 * isSecretKey('author'); // false
 * ```
 */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY_PATTERN.test(key.replace(/[-_.\s]/g, '').toLowerCase());
}

/**
 * Redacts a proposed action's arguments (any value; normally parsed JSON). Pure; never throws.
 *
 * - Values under secret-like keys ({@link isSecretKey}) become `[redacted]`.
 * - Every string — values and keys — goes through `redactSecrets` (the configured secrets) and
 *   `redactContactDetails` (emails); numbers whose digits hold a secret become the redacted text.
 * - Containers deeper than `maxDepth` become `[truncated]`, values past `maxNodes` are dropped
 *   (an array gets a final `[truncated]`, an object a `"…": "[truncated]"` entry), strings are
 *   cut to `maxStringLength` after redaction.
 * - Non-JSON values: `undefined`, functions and symbols are dropped from objects and become
 *   `null` in arrays; non-finite numbers become `null`; bigints become strings.
 *
 * Guarantee (property-tested): no configured secret of at least `MIN_SECRET_LENGTH` code points
 * appears in any key, string or number of the output.
 *
 * @example
 * ```ts
 * redactActionArgs({ url: 'https://x.io/?k=tok_0123456789' }, { secrets: ['tok_0123456789'] }).value;
 * // { url: 'https://x.io/?k=[secret redacted]' }
 * ```
 */
export function redactActionArgs(args: unknown, options: RedactArgsOptions): RedactedArgs {
  const maxDepth = positive(options?.maxDepth, ARGS_REDACTION_DEFAULTS.maxDepth);
  const maxNodes = positive(options?.maxNodes, ARGS_REDACTION_DEFAULTS.maxNodes);
  const maxStringLength = positive(options?.maxStringLength, ARGS_REDACTION_DEFAULTS.maxStringLength);
  const secrets = Array.isArray(options?.secrets) ? options.secrets : [];
  let redacted = 0;
  let truncated = false;
  let nodes = 0;

  const text = (input: string): string => {
    let out = redactSecrets(input, secrets);
    const contacts = redactContactDetails(out.text);
    redacted += out.redacted + contacts.redacted;
    // An email replacement could (contrivedly) join its neighbours into a secret: scan again.
    if (contacts.redacted > 0) {
      out = redactSecrets(contacts.text, secrets);
      redacted += out.redacted;
    } else out = contacts;
    if (out.text.length > maxStringLength) {
      truncated = true;
      // Do not split a surrogate pair: a lone half is not valid text for JSON consumers.
      let end = maxStringLength;
      const last = out.text.charCodeAt(end - 1);
      if (last >= 0xd800 && last <= 0xdbff) end--;
      // The cut text plus '…' is checked again: the ellipsis could complete a secret ending in one.
      const cut = redactSecrets(out.text.slice(0, end) + '…', secrets);
      redacted += cut.redacted;
      return cut.text;
    }
    return out.text;
  };

  const walk = (value: unknown, depth: number): JsonValue | undefined => {
    nodes++;
    switch (typeof value) {
      case 'string':
        return text(value);
      case 'number': {
        if (!Number.isFinite(value)) return null;
        const digits = String(value);
        const scrubbed = text(digits);
        return scrubbed === digits ? value : scrubbed;
      }
      case 'bigint': {
        return text(value.toString());
      }
      case 'boolean':
        return value;
      case 'object':
        break;
      default:
        return undefined; // undefined, function, symbol
    }
    if (value === null) return null;
    if (depth >= maxDepth) {
      truncated = true;
      return TRUNCATED_VALUE;
    }
    if (Array.isArray(value)) {
      const out: JsonValue[] = [];
      for (const item of value as unknown[]) {
        if (nodes >= maxNodes) {
          truncated = true;
          out.push(TRUNCATED_VALUE);
          break;
        }
        out.push(walk(item, depth + 1) ?? null);
      }
      return out;
    }
    const out: { [key: string]: JsonValue } = {};
    let entries: [string, unknown][];
    try {
      entries = Object.entries(value);
    } catch {
      // A proxy or getter that throws: nothing of it is shown.
      truncated = true;
      return TRUNCATED_VALUE;
    }
    for (const [rawKey, item] of entries) {
      if (nodes >= maxNodes) {
        truncated = true;
        setOwn(out, uniqueKey(out, '…', secrets), TRUNCATED_VALUE);
        break;
      }
      const key = uniqueKey(out, text(rawKey), secrets);
      if (isSecretKey(rawKey)) {
        nodes++;
        redacted++;
        setOwn(out, key, REDACTED_VALUE);
        continue;
      }
      const result = walk(item, depth + 1);
      if (result !== undefined) setOwn(out, key, result);
    }
    return out;
  };

  let value: JsonValue;
  try {
    value = walk(args, 0) ?? null;
  } catch {
    // Never throws: anything unexpected (a hostile getter deep inside) shows nothing at all.
    value = TRUNCATED_VALUE;
    truncated = true;
  }
  return { value, redacted, truncated };
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}

/**
 * Two keys can redact to the same text (two emails); keep both values under distinct keys. A
 * suffix that would complete a secret is skipped.
 */
function uniqueKey(target: Record<string, unknown>, key: string, secrets: readonly string[]): string {
  if (!Object.hasOwn(target, key)) return key;
  for (let n = 2; ; n++) {
    const candidate = `${key} #${n}`;
    if (!Object.hasOwn(target, candidate) && redactSecrets(candidate, secrets).redacted === 0) return candidate;
  }
}

/**
 * Whether a proposed tool name holds a configured secret in any form `redactSecrets` finds (the
 * name is shown on the approval screen, in the task's parts and in the audit row, so such a
 * proposal is refused as invalid and its name never written anywhere).
 *
 * @example
 * ```ts
 * toolNameHoldsSecret('deploy', ['tok_0123456789']); // false
 * toolNameHoldsSecret('TOK-0123456789', ['tok_0123456789']); // true
 * ```
 */
export function toolNameHoldsSecret(tool: string, secrets: readonly string[]): boolean {
  return Array.isArray(secrets) && secrets.length > 0 && redactSecrets(tool, secrets).redacted > 0;
}

/** Defines an own property, so a key named `__proto__` stays an ordinary key, not a prototype. */
function setOwn(target: Record<string, JsonValue>, key: string, value: JsonValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
