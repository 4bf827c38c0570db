/**
 * What a card signature vouches for, measured against what Airlock trusts. The signing payload
 * holds only what the v1.0 `AgentCard` type holds (`canonical.ts`), while Airlock reads cards
 * in both shapes. A v0.3 card's `url`, `additionalInterfaces`, type-tagged `securitySchemes`
 * and `security` are outside every signature (the official SDKs sign exactly the same way),
 * so a signature on such a card says nothing about where Airlock would send a request.
 *
 * The check decodes the card twice with Airlock's own decoder, once as served and once as the
 * payload's v1.0 projection sees it, and compares the trust fields (`digest.ts`) group by
 * group. A group that differs is not covered.
 *
 * @example
 * ```ts
 * uncoveredTrustFields(encodeCardV10(card)); // []
 * uncoveredTrustFields({ ...encodeCardV03(card), supportedInterfaces: undefined });
 * // ['interfaces', 'securitySchemes', 'securityRequirements']
 * ```
 */
import { decodeAnyCard } from '../../protocol/card.js';
import type { AgentCard } from '../../protocol/model.js';
import { canonicalJson, trustFieldsOf, type CardTrustFields } from '../digest.js';
import { cardV10Projection } from './canonical.js';
import { CardSignatureError } from './errors.js';

/**
 * The groups of trust fields, as `cardTrustDigest` pins them.
 *
 * @example
 * ```ts
 * const group: TrustFieldGroup = 'interfaces';
 * ```
 */
export type TrustFieldGroup = keyof CardTrustFields;

/**
 * How much of the trust fields a verified signature must cover:
 * - `trust-fields` (the default): all of them (interfaces, security schemes and
 *   requirements, skills), so the signature vouches for everything a pin would;
 * - `interfaces`: the interfaces only (every endpoint Airlock might call); security schemes
 *   and requirements in v0.3 form may then be outside the signature.
 *
 * @example
 * ```ts
 * const coverage: SignatureCoverage = 'interfaces';
 * ```
 */
export type SignatureCoverage = 'trust-fields' | 'interfaces';

const GROUPS: readonly TrustFieldGroup[] = ['interfaces', 'securitySchemes', 'securityRequirements', 'skills'];

/**
 * The trust field groups of `card` (parsed card JSON) that a signature over its payload
 * does not cover, in a fixed order; empty when it covers all. `signedCard` is the card as the
 * signature saw it when that differs from the card as served (a signature over the card
 * without some members, see `sdk-instance.ts`); default: the card itself. Throws
 * `CardSignatureError('card_malformed')` when the card is not one Airlock can read, and as
 * `cardV10Projection` does.
 *
 * @example
 * ```ts
 * uncoveredTrustFields(JSON.parse(body)).includes('interfaces'); // a v0.3 card without supportedInterfaces
 * ```
 */
export function uncoveredTrustFields(card: unknown, signedCard: unknown = card): TrustFieldGroup[] {
  const projection = cardV10Projection(signedCard);
  let served: AgentCard;
  try {
    served = decodeAnyCard(card);
  } catch (error) {
    throw new CardSignatureError('card_malformed', 'the document is not an agent card Airlock can read', {
      cause: error,
    });
  }
  const servedFields = trustFieldsOf(served);
  let signedFields: CardTrustFields;
  try {
    signedFields = trustFieldsOf(decodeAnyCard(projection));
  } catch {
    // The signed part is not a card by itself (typically: no supportedInterfaces, so the
    // interfaces came from v0.3's `url`). Nothing Airlock trusts can be taken as covered.
    return GROUPS.filter((group) => !isEmptyGroup(servedFields[group]));
  }
  try {
    return GROUPS.filter((group) => canonicalJson(servedFields[group]) !== canonicalJson(signedFields[group]));
  } catch (error) {
    // A trust field outside the payload held a value JCS refuses (a lone surrogate).
    throw new CardSignatureError('card_malformed', 'a trust field of the card has no RFC 8785 form', { cause: error });
  }
}

function isEmptyGroup(value: unknown): boolean {
  return Array.isArray(value) ? value.length === 0 : Object.keys(value as object).length === 0;
}
