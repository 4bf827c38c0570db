/**
 * Who a caller is, and the one string (`key`) that owns every task it creates. Two callers
 * share tasks exactly when their keys are equal, so the key must be injective: the parts are
 * escaped so that a `:` inside a subject can never imitate the separator between parts.
 *
 * @example
 * ```ts
 * const principal = makePrincipal({ kind: 'service', clientId: 'ci', subject: 'build:7' });
 * principal.key; // 'service:ci::build%3A7'
 * ```
 */

/** `client`: a configured client token; `service`/`delegated`: a verified JWT (never a human end user). */
export type PrincipalKind = 'client' | 'service' | 'delegated';

/** Everything that decides what a caller may see. */
export interface Principal {
  kind: PrincipalKind;
  /** The configured client (token clients) or the token's issuer-side client id. */
  clientId: string;
  subject: string;
  actingAgent?: string;
  /** `kind:client:actingAgent:subject`, each part escaped: the owner of every task this caller creates. */
  key: string;
}

/**
 * Characters escaped inside a key part: `%` (so every `%` in a key starts an escape), `:` (the
 * separator), and invisible or line-breaking characters (controls, format characters such as
 * bidi overrides, line/paragraph separators) so that a key read in a log is what it looks like.
 * `\p{Cs}` matches lone surrogates only (a well-formed pair is one astral code point under `u`).
 */
const MUST_ESCAPE = /[%:\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const MUST_ESCAPE_ALL = new RegExp(MUST_ESCAPE.source, 'gu');

function escapeChar(char: string): string {
  // A lone surrogate has no UTF-8 form (encodeURIComponent throws on it); `%u` cannot be read as
  // a `%HH` escape, so this form stays unambiguous.
  if (char.length === 1) {
    const code = char.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdfff) return `%u${code.toString(16).toUpperCase()}`;
  }
  return encodeURIComponent(char);
}

/**
 * Escapes one key part. Injective: `%` is always escaped, so decoding the escapes gives back the
 * input, and the result never contains `:`. Parts with nothing to escape (every configured
 * client id) come back unchanged, so keys of token clients stay `client:<id>::<id>`.
 *
 * @example
 * ```ts
 * escapePrincipalPart('a:b%c'); // 'a%3Ab%25c'
 * ```
 */
export function escapePrincipalPart(part: string): string {
  return MUST_ESCAPE.test(part) ? part.replace(MUST_ESCAPE_ALL, escapeChar) : part;
}

/**
 * The owner key of a principal: `kind:client:actingAgent:subject` with every part escaped, so
 * two different principals can never share a key (a subject containing `:` stays inside its part).
 *
 * @example
 * ```ts
 * principalKey('client', 'a', '', 'a'); // 'client:a::a'
 * principalKey('service', 'x', '', 'y:z'); // 'service:x::y%3Az'
 * ```
 */
export function principalKey(kind: PrincipalKind, clientId: string, actingAgent: string, subject: string): string {
  return `${kind}:${escapePrincipalPart(clientId)}:${escapePrincipalPart(actingAgent)}:${escapePrincipalPart(subject)}`;
}

/**
 * Builds a frozen principal with its key. Frozen because one principal object is shared by every
 * request of the same caller: no request's code may change who the next one is.
 *
 * @example
 * ```ts
 * const principal = makePrincipal({ kind: 'delegated', clientId: 'app', subject: 'alice', actingAgent: 'bot' });
 * principal.key; // 'delegated:app:bot:alice'
 * ```
 */
export function makePrincipal(parts: Omit<Principal, 'key'>): Principal {
  const principal: Principal = {
    kind: parts.kind,
    clientId: parts.clientId,
    subject: parts.subject,
    ...(parts.actingAgent !== undefined && { actingAgent: parts.actingAgent }),
    key: principalKey(parts.kind, parts.clientId, parts.actingAgent ?? '', parts.subject),
  };
  return Object.freeze(principal);
}
