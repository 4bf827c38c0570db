/**
 * Signatures made the way `@a2a-js/sdk` ≤ 1.3 signs an `AgentCard` *instance* (a2a-js#663).
 * The SDK's `canonicalizeAgentCard` reads its input as ProtoJSON; handed the SDK's own
 * in-memory `AgentCard` (the `AgentCard.fromJSON()` form, or a literal typed as `AgentCard`),
 * it finds no ProtoJSON member in each security scheme (the instance holds the oneof as
 * `{ scheme: { $case, value } }`), so every scheme comes out empty and `securitySchemes`
 * drops out of the payload. Every other member reads the same in both forms (reproduced with
 * the SDK in `test/card-signing-interop.test.ts`). The card it serves is the JSON form, with
 * its `securitySchemes`, so the signature does not match the card as fetched.
 *
 * Such a signature is found by checking it again over the card without those members, and is
 * then reported for what it is: it vouches for everything but the security schemes.
 *
 * @example
 * ```ts
 * const payload = cardSigningPayload(withoutSdkInstanceOmissions(card)); // the payload the SDK signed
 * ```
 */

/**
 * The members an `@a2a-js/sdk` ≤ 1.3 instance signature leaves out (both spellings the payload
 * reads).
 *
 * @example
 * ```ts
 * SDK_INSTANCE_OMITTED; // ['securitySchemes']
 * ```
 */
export const SDK_INSTANCE_OMITTED = ['securitySchemes'] as const;
const SPELLINGS: readonly string[] = ['securitySchemes', 'security_schemes'];

/**
 * Why a signature covers less than the card, in words for a person.
 *
 * @example
 * ```ts
 * SDK_INSTANCE_DEFECT; // 'a known @a2a-js/sdk ≤ 1.3 defect, a2a-js#663'
 * ```
 */
export const SDK_INSTANCE_DEFECT = 'a known @a2a-js/sdk ≤ 1.3 defect, a2a-js#663';

/**
 * A shallow copy of the parsed card without the members an SDK instance signature omits.
 *
 * @example
 * ```ts
 * withoutSdkInstanceOmissions({ name: 'a', securitySchemes: {} }); // { name: 'a' }
 * ```
 */
export function withoutSdkInstanceOmissions(card: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(card)) {
    // defineProperty: a member named `__proto__` stays a member, as in the parse.
    if (!SPELLINGS.includes(name))
      Object.defineProperty(copy, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}
