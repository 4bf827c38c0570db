/**
 * The content step of a turn: message limits (parts, characters), then content rules (text
 * only, no tool-shaped input), then suspicious-pattern counting (audited, never refused). A
 * refusal is audited (`a2a.task.rejected`) before it is sent.
 *
 * @example
 * ```ts
 * const content = createTurnContentStep({ config, audit });
 * const admitTurn = compose(content, createInFlightStep({ config, audit }));
 * ```
 */
import { textOf } from '../../agents/backend.js';
import { inspectInboundContent } from '../../agents/inbound/index.js';
import type { AirlockConfig } from '../../config/load.js';
import { countSuspiciousPatterns } from '../../content/index.js';
import type { InboundAudit } from '../inbound-audit.js';
import { checkMessageLimits } from '../limits/message.js';
import { REFUSED, type Step } from './compose.js';
import type { TurnCandidate } from './turn.js';

/**
 * The content step, with the configured limits.
 *
 * @example
 * ```ts
 * const content = createTurnContentStep({ config: { limits }, audit });
 * ```
 */
export function createTurnContentStep<T extends TurnCandidate>(options: {
  config: Pick<AirlockConfig, 'limits'>;
  audit: Pick<InboundAudit, 'scansInput' | 'rejected' | 'suspicious'>;
}): Step<T, T> {
  const { audit } = options;
  const limits = { maxParts: options.config.limits.maxParts, maxInputChars: options.config.limits.maxInputChars };
  return (turn) => {
    const message = turn.message;
    if (message === undefined) return turn;
    const tooBig = checkMessageLimits(message, limits);
    if (tooBig !== undefined) {
      audit.rejected(turn.ctx, tooBig.reason);
      turn.refuseTurn(tooBig);
      return REFUSED;
    }
    const violation = inspectInboundContent(message);
    if (violation !== undefined) {
      audit.rejected(turn.ctx, 'unsupported_content');
      turn.refuseTurn(violation.error);
      return REFUSED;
    }
    const text = textOf(message);
    // Counted only to be recorded: with no audit trail the scan would be thrown away.
    if (audit.scansInput) {
      const suspicious = countSuspiciousPatterns(text);
      if (suspicious.total > 0) audit.suspicious(turn.ctx, suspicious.byCategory, text.length);
    }
    turn.text = text;
    return turn;
  };
}
