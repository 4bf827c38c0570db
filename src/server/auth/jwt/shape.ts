/**
 * The shapes a token and its claims must have before anything in them is trusted: the JWT
 * shape test that picks a verifier, own-property reads of decoded JSON, and the bounds of an
 * identifier that may become part of a principal.
 *
 * @example
 * ```ts
 * if (looksLikeJwt(token)) verified = await jwt.verify(token);
 * const subject = own(claims, 'sub');
 * if (!isIdentifier(subject)) return { ok: false, failure: 'invalid_subject' };
 * ```
 */

/** Longest identifier (sub, act.sub, azp, client_id) put into a principal. */
export const MAX_ID_LENGTH = 256;
/** Longest protected header considered when telling a JWT from a client token. */
const MAX_HEADER_SEGMENT = 2048;

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** A lone surrogate: such a string has no UTF-8 form and no business in an identifier. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A plain JSON object (not null, not an array).
 *
 * @example
 * ```ts
 * isRecord({ sub: 'svc' }); // true
 * isRecord(['svc']); // false
 * ```
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An own property only: a claim named `constructor` or `__proto__` must not reach Object.prototype.
 *
 * @example
 * ```ts
 * own({ sub: 'svc' }, 'sub'); // 'svc'
 * own({}, 'constructor'); // undefined
 * ```
 */
export function own(record: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/**
 * A string fit to be part of a principal: non-empty, bounded, well-formed Unicode.
 *
 * @example
 * ```ts
 * isIdentifier('svc-a'); // true
 * isIdentifier('\uD800'); // false (a lone surrogate)
 * ```
 */
export function isIdentifier(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH && !LONE_SURROGATE.test(value);
}

/**
 * Whether a bearer value is shaped like a JWT: exactly two dots, and a first segment that
 * base64url-decodes to a JSON object with an `alg` member. Cheap and never throws; it decides
 * only which verifier to try, never whether to admit.
 *
 * @example
 * ```ts
 * looksLikeJwt('eyJhbGciOiJFUzI1NiJ9.e30.sig'); // true
 * looksLikeJwt('a-random-client-token'); // false
 * ```
 */
export function looksLikeJwt(token: string): boolean {
  const first = token.indexOf('.');
  if (first <= 0 || first > MAX_HEADER_SEGMENT) return false;
  const second = token.indexOf('.', first + 1);
  if (second < 0 || token.includes('.', second + 1)) return false;
  const header = token.slice(0, first);
  if (!BASE64URL.test(header)) return false;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    return isRecord(parsed) && Object.hasOwn(parsed, 'alg');
  } catch {
    return false;
  }
}
