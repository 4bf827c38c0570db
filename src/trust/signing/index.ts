/**
 * Signed agent cards (A2A v1.0 §8.4): detached flattened JWS over the RFC 8785 form of the
 * card, byte-compatible with the official SDKs' `generateAgentCardSignature` and
 * `verifyAgentCardSignature`. Organised by operation, one per file:
 *
 * - `canonical.ts`: the signing payload, shared by signing and verifying;
 * - `keys.ts`, `thumbprint.ts`, `fetch-keys.ts`: operator keys (private JWK, JWK Sets);
 * - `generate.ts`: new keys; `sign.ts`: signing; `verify.ts`: verifying;
 * - `coverage.ts`: whether a signature vouches for the fields Airlock trusts;
 * - `sdk-instance.ts`: signatures `@a2a-js/sdk` ≤ 1.3 makes over an `AgentCard` instance;
 * - `errors.ts`: `SigningKeyError` and `CardSignatureError`, with stable codes.
 *
 * @example
 * ```ts
 * import { generateSigningKey, importSigningKey, importKeySet, signCard, verifyCardSignatures } from './signing/index.js';
 *
 * const { privateJwk, publicJwk } = await generateSigningKey('ES256');
 * const signed = signCard(encodeCardV10(card), [importSigningKey(privateJwk)]);
 * const verdict = await verifyCardSignatures(JSON.stringify(signed), importKeySet({ keys: [publicJwk] }), {
 *   requireSigned: true,
 * }); // { status: 'verified', kid, alg: 'ES256', card }
 * ```
 */
export { MAX_SIGNED_CARD_DEPTH, cardSigningPayload, cardV10Projection, removeEmptyValues } from './canonical.js';
export { uncoveredTrustFields } from './coverage.js';
export type { SignatureCoverage, TrustFieldGroup } from './coverage.js';
export { CardSignatureError, SigningKeyError, showKid } from './errors.js';
export type { CardSignatureErrorCode, SignatureFailure, SignatureFailureCode, SigningKeyErrorCode } from './errors.js';
export { fetchKeySet } from './fetch-keys.js';
export type { KeySetRequest } from './fetch-keys.js';
export { GENERATED_ALGORITHMS, generateSigningKey } from './generate.js';
export type { GeneratedAlgorithm, GeneratedSigningKey } from './generate.js';
export {
  OperatorKeySet,
  SIGNING_ALGORITHMS,
  algorithmsForJwk,
  combineKeySets,
  importKeySet,
  importSigningKey,
  importVerificationKey,
  parseKeyDocument,
  readKeySetFile,
  readSigningKeyFile,
} from './keys.js';
export type { PublicJwk, SigningAlgorithm, SigningKey, VerificationKey } from './keys.js';
export { SDK_INSTANCE_DEFECT, SDK_INSTANCE_OMITTED, withoutSdkInstanceOmissions } from './sdk-instance.js';
export { signCard } from './sign.js';
export type { AgentCardSignature, SignCardOptions } from './sign.js';
export { jwkThumbprint } from './thumbprint.js';
export { MAX_CARD_SIGNATURES, verifyCardSignatures } from './verify.js';
export type { CardSignatureVerdict, VerifyCardOptions } from './verify.js';
