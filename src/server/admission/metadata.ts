/**
 * The metadata step of a turn: what a caller makes Airlock keep with a message besides its text
 * (message and part `metadata`, `extensions`, `referenceTaskIds`, part `filename`/`mediaType`)
 * is held to `limits.maxMetadataBytes`, `maxMetadataKeys` and `maxMetadataDepth`. A refusal is
 * -32602 naming the setting, audited (`a2a.task.rejected`, `metadata_too_*`) before it is sent.
 * Both dialects decode to the same canonical message, so one check covers v1.0 and v0.3.
 *
 * @example
 * ```ts
 * const admitTurn = compose(createTurnContentStep({ config, audit }), createMetadataStep({ config, audit }), slot);
 * ```
 */
import type { AirlockConfig } from '../../config/load.js';
import type { InboundAudit } from '../inbound-audit.js';
import { checkMetadataLimits, type MetadataLimits } from '../limits/metadata.js';
import { REFUSED, type Step } from './compose.js';
import type { TurnCandidate } from './turn.js';

/**
 * The metadata step, with the configured limits.
 *
 * @example
 * ```ts
 * const metadata = createMetadataStep({ config: { limits }, audit });
 * ```
 */
export function createMetadataStep<T extends TurnCandidate>(options: {
  config: { limits: Pick<AirlockConfig['limits'], keyof MetadataLimits> };
  audit: Pick<InboundAudit, 'rejected'>;
}): Step<T, T> {
  const { audit } = options;
  const limits: MetadataLimits = {
    maxMetadataBytes: options.config.limits.maxMetadataBytes,
    maxMetadataKeys: options.config.limits.maxMetadataKeys,
    maxMetadataDepth: options.config.limits.maxMetadataDepth,
  };
  return (turn) => {
    const message = turn.message;
    // Nothing to count: a text-only message (the common case) costs three field reads.
    if (message === undefined) return turn;
    if (
      message.metadata === undefined &&
      message.extensions === undefined &&
      message.referenceTaskIds === undefined &&
      !partsCarryExtras(message.parts)
    ) {
      return turn;
    }
    const error = checkMetadataLimits(message, limits);
    if (error === undefined) return turn;
    audit.rejected(turn.ctx, error.reason);
    turn.refuseTurn(error);
    return REFUSED;
  };
}

function partsCarryExtras(parts: NonNullable<TurnCandidate['message']>['parts']): boolean {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as (typeof parts)[number];
    if (part.metadata !== undefined || part.filename !== undefined || part.mediaType !== undefined) return true;
  }
  return false;
}
