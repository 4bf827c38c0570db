/**
 * Verifying agent card signatures (A2A v1.0 §8.4.3) against the operator's keys only.
 *
 * - The exact bytes received are decoded (strict UTF-8) and parsed once; the canonical payload
 *   is computed from that parse, and the same parse is handed back for decoding, so what was
 *   verified is what is used.
 * - At least one signature must verify. Each is checked on its own; one that fails (an
 *   old key, another signer) does not spoil the others, which is what makes rotation work.
 * - The key comes from the operator's set, by the protected header's `kid`, and nowhere else:
 *   `jku`, `jwk`, `x5u` and `x5c` in a header are ignored (A2A#2096), so a signer cannot
 *   bring its own key or name its own trust root.
 * - Algorithms: `alg` must be in the protected header and be one the named key fits
 *   (`keys.ts`); `none`, HMAC and unknown algorithms are refused before any key is used, and
 *   jose's `algorithms` option is pinned to the key's list as a second lock.
 * - `crit` is refused (no extension is understood), as are `b64` other than true and a `typ`
 *   other than `JOSE`.
 * - A verified signature must also cover what Airlock trusts (`coverage.ts`): a v0.3 card
 *   whose endpoint is only in `url` carries a signature that does not vouch for it.
 * - A signature that matches only the card without `securitySchemes` (how `@a2a-js/sdk` ≤ 1.3
 *   signs an `AgentCard` instance, a2a-js#663; `sdk-instance.ts`) is reported as such:
 *   `signature_incomplete` naming what it omits under full coverage, accepted with `omits`
 *   under `interfaces` coverage.
 *
 * @example
 * ```ts
 * const verdict = await verifyCardSignatures(response.body, keySet, { requireSigned: true });
 * const card = decodeAnyCard(verdict.card); // the same parse the signature was checked on
 * ```
 */
import { flattenedVerify, type FlattenedJWSInput } from 'jose';
import { MAX_SIGNED_CARD_DEPTH, cardSigningPayload } from './canonical.js';
import { uncoveredTrustFields, type SignatureCoverage } from './coverage.js';
import { CardSignatureError, showKid, type SignatureFailure, type SignatureFailureCode } from './errors.js';
import { SIGNING_ALGORITHMS, type OperatorKeySet, type SigningAlgorithm } from './keys.js';
import { SDK_INSTANCE_DEFECT, SDK_INSTANCE_OMITTED, withoutSdkInstanceOmissions } from './sdk-instance.js';
import { assertDepth } from '../digest.js';

/**
 * Options of `verifyCardSignatures`.
 *
 * @example
 * ```ts
 * const options: VerifyCardOptions = { requireSigned: true, coverage: 'trust-fields' };
 * ```
 */
export interface VerifyCardOptions {
  /** Refuse a card without signatures (`card_unsigned`). Otherwise such a card comes back `unsigned`. */
  requireSigned: boolean;
  /** What a verified signature must cover; default `trust-fields` (see `SignatureCoverage`). */
  coverage?: SignatureCoverage;
}

/**
 * The outcome when the card is accepted. `card` is the parse of the bytes given: decode it
 * (`decodeAnyCard`) rather than parsing the bytes again.
 *
 * @example
 * ```ts
 * if (verdict.status === 'verified') log('card_signature_verified', { kid: verdict.kid, alg: verdict.alg });
 * ```
 */
export type CardSignatureVerdict =
  | {
      status: 'verified';
      kid: string;
      alg: SigningAlgorithm;
      card: Record<string, unknown>;
      /**
       * Members of the card the signature does not cover, when it was made the way
       * `@a2a-js/sdk` ≤ 1.3 signs an `AgentCard` instance (`['securitySchemes']`, a2a-js#663):
       * accepted only under `interfaces` coverage. Absent for a signature over the whole card.
       */
      omits?: readonly string[];
    }
  | { status: 'unsigned'; card: Record<string, unknown> };

/**
 * The most signatures a card may carry. Rotation needs two or three; more is a way to make a
 * verifier work, so such a card is refused before any signature is checked.
 *
 * @example
 * ```ts
 * signers.length <= MAX_CARD_SIGNATURES; // 16
 * ```
 */
export const MAX_CARD_SIGNATURES = 16;
/** A protected header of a few members is under 1 KiB; a large one is not ours. */
const MAX_PROTECTED_LENGTH = 4096;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** Empty is allowed here so that an `alg: none` entry is reported as such, not as malformed. */
const SIGNATURE = /^[A-Za-z0-9_-]*$/;
const ALGORITHMS: ReadonlySet<string> = new Set(SIGNING_ALGORITHMS);

/**
 * Verifies the card in `raw` (the bytes as received, or text) with the operator's keys.
 * Resolves to `verified` with the first signature that verifies and covers the trust fields,
 * or `unsigned` for a card without signatures when none is required. Throws
 * `CardSignatureError`: `card_malformed`, `card_too_deep`, `card_unsigned`,
 * `signatures_malformed`, `signature_unverified` (with `failures`, one per signature) or
 * `signature_incomplete`.
 *
 * @example
 * ```ts
 * const keySet = await readKeySetFile('trusted-jwks.json');
 * const { kid } = await verifyCardSignatures(bytes, keySet, { requireSigned: true });
 * ```
 */
export async function verifyCardSignatures(
  raw: Uint8Array | string,
  keySet: OperatorKeySet,
  options: VerifyCardOptions,
): Promise<CardSignatureVerdict> {
  const card = parseCard(raw);
  const entries = card.signatures;
  if (entries === undefined || entries === null || (Array.isArray(entries) && entries.length === 0)) {
    if (options.requireSigned) throw new CardSignatureError('card_unsigned', 'the card is not signed');
    return { status: 'unsigned', card };
  }
  if (!Array.isArray(entries)) throw new CardSignatureError('signatures_malformed', '"signatures" is not an array');
  if (entries.length > MAX_CARD_SIGNATURES) {
    throw new CardSignatureError(
      'signatures_malformed',
      `the card has ${entries.length} signatures; at most ${MAX_CARD_SIGNATURES} are checked`,
    );
  }
  const coverage = options.coverage ?? 'trust-fields';
  const canonical = cardSigningPayload(card);
  const payload = Buffer.from(canonical, 'utf8').toString('base64url');
  const failures: SignatureFailure[] = [];
  for (let index = 0; index < entries.length; index++) {
    const outcome = await checkSignature(entries[index], index, payload, keySet);
    if ('failure' in outcome) {
      failures.push(outcome.failure);
      continue;
    }
    const uncovered = uncoveredTrustFields(card).filter(
      (group) => coverage === 'trust-fields' || group === 'interfaces',
    );
    if (uncovered.length > 0) {
      throw new CardSignatureError(
        'signature_incomplete',
        `the signature by ${showKid(outcome.kid)} verifies but does not cover the card's ${uncovered.join(', ')} (members outside the A2A v1.0 card, such as v0.3's own, are not signed)`,
      );
    }
    return { status: 'verified', kid: outcome.kid, alg: outcome.alg, card };
  }
  const partial = await verifyWithoutSdkInstanceOmissions(card, canonical, entries, failures, keySet, coverage);
  if (partial !== undefined) return partial;
  throw new CardSignatureError('signature_unverified', `no signature verifies: ${failures.map(describe).join('; ')}`, {
    failures,
  });
}

/**
 * When signatures did not match the card, whether one matches the card without the members an
 * `@a2a-js/sdk` ≤ 1.3 instance signature drops (`sdk-instance.ts`). Only signatures that
 * failed as `signature_mismatch` are tried again, and only when leaving those members out
 * changes the payload. Such a signature is `signature_incomplete` under `trust-fields`
 * coverage, naming what it omits and why; under `interfaces` coverage it is accepted when it
 * covers the interfaces, with `omits` saying what it leaves out. Undefined when none matches.
 */
async function verifyWithoutSdkInstanceOmissions(
  card: Record<string, unknown>,
  canonical: string,
  entries: readonly unknown[],
  failures: readonly SignatureFailure[],
  keySet: OperatorKeySet,
  coverage: SignatureCoverage,
): Promise<CardSignatureVerdict | undefined> {
  const mismatched = failures.filter((failure) => failure.code === 'signature_mismatch');
  if (mismatched.length === 0) return undefined;
  const signed = withoutSdkInstanceOmissions(card);
  const partial = cardSigningPayload(signed);
  if (partial === canonical) return undefined;
  const payload = Buffer.from(partial, 'utf8').toString('base64url');
  for (const { index } of mismatched) {
    const outcome = await checkSignature(entries[index], index, payload, keySet);
    if ('failure' in outcome) continue;
    const omits = [...SDK_INSTANCE_OMITTED];
    const what = `the signature by ${showKid(outcome.kid)} covers the card without ${omits.join(', ')} (${SDK_INSTANCE_DEFECT}: it signed an AgentCard instance, not the card's JSON form)`;
    if (coverage === 'trust-fields') {
      throw new CardSignatureError(
        'signature_incomplete',
        `${what}; full trust-field coverage needs the security schemes signed: have the signer sign the card's JSON form, or accept interfaces-only coverage`,
        { omits },
      );
    }
    if (uncoveredTrustFields(card, signed).includes('interfaces')) {
      throw new CardSignatureError('signature_incomplete', `${what}, and it does not cover the card's interfaces`, {
        omits,
      });
    }
    return { status: 'verified', kid: outcome.kid, alg: outcome.alg, card, omits };
  }
  return undefined;
}

function parseCard(raw: Uint8Array | string): Record<string, unknown> {
  let value: unknown;
  try {
    // Fatal decoding: invalid UTF-8 is refused, not replaced (a replaced byte would be signed over).
    const text = typeof raw === 'string' ? raw : new TextDecoder('utf-8', { fatal: true }).decode(raw);
    value = JSON.parse(text);
  } catch (error) {
    throw new CardSignatureError('card_malformed', 'the card is not UTF-8 JSON', { cause: error });
  }
  try {
    assertDepth(value, MAX_SIGNED_CARD_DEPTH);
  } catch (error) {
    throw new CardSignatureError('card_too_deep', `the card nests deeper than ${MAX_SIGNED_CARD_DEPTH} levels`, {
      cause: error,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CardSignatureError('card_malformed', 'the card is not a JSON object');
  }
  return value as Record<string, unknown>;
}

type Outcome = { kid: string; alg: SigningAlgorithm } | { failure: SignatureFailure };

async function checkSignature(
  entry: unknown,
  index: number,
  payload: string,
  keySet: OperatorKeySet,
): Promise<Outcome> {
  const fail = (code: SignatureFailureCode, named: { kid?: string; alg?: string } = {}): Outcome => ({
    failure: { index, code, ...named },
  });
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail('entry_malformed');
  const { protected: protectedPart, signature, header } = entry as Record<string, unknown>;
  if (typeof protectedPart !== 'string' || protectedPart.length > MAX_PROTECTED_LENGTH) return fail('entry_malformed');
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) return fail('entry_malformed');
  if (header !== undefined && (typeof header !== 'object' || header === null || Array.isArray(header))) {
    return fail('entry_malformed');
  }
  const parsed = decodeProtectedHeader(protectedPart);
  if (parsed === undefined) return fail('header_malformed');

  const alg = typeof parsed.alg === 'string' ? parsed.alg : undefined;
  const kid = typeof parsed.kid === 'string' && parsed.kid.length > 0 ? parsed.kid : undefined;
  const named = { ...(kid !== undefined && { kid }), ...(alg !== undefined && { alg: alg.slice(0, 32) }) };
  // Refused before any key is looked up: no key of ours is ever used with these.
  if (alg === undefined || !ALGORITHMS.has(alg))
    return fail(parsed.alg === undefined ? 'header_malformed' : 'alg_refused', named);
  if (kid === undefined) return fail('kid_missing', named);
  const unprotected = (header ?? {}) as Record<string, unknown>;
  if (parsed.crit !== undefined || unprotected.crit !== undefined) return fail('crit_unsupported', named);
  if ((parsed.b64 !== undefined && parsed.b64 !== true) || unprotected.b64 !== undefined) {
    return fail('b64_unsupported', named);
  }
  if (parsed.typ !== undefined && !isJoseType(parsed.typ)) return fail('typ_unsupported', named);

  const key = keySet.get(kid);
  if (key === undefined) return fail('kid_unknown', named);
  if (!(key.algorithms as readonly string[]).includes(alg)) return fail('alg_not_allowed_for_key', named);

  const jws: FlattenedJWSInput = { protected: protectedPart, payload, signature };
  if (header !== undefined) jws.header = unprotected;
  try {
    await flattenedVerify(jws, key.publicKey, { algorithms: [...key.algorithms] });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') return fail('signature_mismatch', named);
    if (code === 'ERR_JOSE_ALG_NOT_ALLOWED') return fail('alg_not_allowed_for_key', named);
    // JWSInvalid and the like: header members overlapping, a signature of the wrong length…
    return fail(code === 'ERR_JWS_INVALID' ? 'header_malformed' : 'signature_mismatch', named);
  }
  return { kid, alg: alg as SigningAlgorithm };
}

/** The protected header as a JSON object, or undefined when it is not base64url UTF-8 JSON of an object. */
function decodeProtectedHeader(encoded: string): Record<string, unknown> | undefined {
  if (!BASE64URL.test(encoded)) return undefined;
  try {
    const value: unknown = JSON.parse(
      new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64url')),
    );
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** RFC 7515 §4.1.9: `JOSE` or `application/jose`, compared without regard to case. */
function isJoseType(typ: unknown): boolean {
  return typeof typ === 'string' && /^(application\/)?jose$/i.test(typ);
}

function describe(failure: SignatureFailure): string {
  const who = failure.kid === undefined ? '' : ` (kid ${showKid(failure.kid)})`;
  const reasons: Record<SignatureFailureCode, string> = {
    entry_malformed: 'is not a {protected, signature} entry',
    header_malformed: 'has an unreadable protected header',
    alg_refused: `uses a refused algorithm${failure.alg !== undefined && /^[A-Za-z0-9+_-]{1,32}$/.test(failure.alg) ? ` (${failure.alg})` : ''}`,
    alg_not_allowed_for_key: "uses an algorithm the operator's key does not allow",
    kid_missing: 'names no kid in its protected header',
    kid_unknown: "names a kid not in the operator's key set",
    crit_unsupported: 'marks header extensions critical',
    typ_unsupported: 'has a typ other than JOSE',
    b64_unsupported: 'uses an unencoded payload (b64)',
    signature_mismatch: 'does not match the card',
  };
  return `#${failure.index + 1}${who} ${reasons[failure.code]}`;
}
