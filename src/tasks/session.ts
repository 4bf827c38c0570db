/**
 * Session ids that a backend sees. A client may name any contextId; the session is derived
 * from who is asking, which agent, and that contextId, so it only ever reaches its own
 * conversation, and no table of bindings is needed on any replica.
 *
 * @example
 * ```ts
 * deriveSessionId('client:acme::acme', 'writer', 'ctx-1'); // 'a2a-3f1c…' (64 hex digits)
 * ```
 */
import { createHash } from 'node:crypto';

export function deriveSessionId(principalKey: string, agentSlug: string, contextId: string): string {
  // Newline separators: none of the three parts may contain one (validated at the edge).
  const digest = createHash('sha256').update(`${principalKey}\n${agentSlug}\n${contextId}`).digest('hex');
  return `a2a-${digest}`;
}

/** Prefix of outbound bookkeeping ids; inbound task methods never serve them. */
export const OUTBOUND_ID_PREFIX = 'a2a-out-';
