/**
 * Delegation (RFC 8693 `act`): the outermost `act` is the agent acting now, nested ones are
 * earlier actors in the chain. jose does not interpret `act`, so the whole chain is checked
 * here, to a bounded depth: one unfit link refuses the token.
 *
 * @example
 * ```ts
 * const actor = actingAgentOf(claims); // { ok: true, actingAgent: 'planner' } for act: { sub: 'planner' }
 * ```
 */
import type { JwtFailure } from './claims.js';
import { isIdentifier, isRecord, own } from './shape.js';

/** Deepest `act` chain accepted (act.act.act…): each level is one more agent in the delegation. */
export const MAX_ACTOR_DEPTH = 8;

/**
 * The current actor of a token's `act` chain (undefined without `act`), after checking every
 * link: an object whose `sub` is an identifier, at most {@link MAX_ACTOR_DEPTH} deep.
 *
 * @example
 * ```ts
 * const actor = actingAgentOf({ sub: 'alice', act: { sub: 'agent-b', act: { sub: 'agent-a' } } });
 * // { ok: true, actingAgent: 'agent-b' }
 * ```
 */
export function actingAgentOf(
  claims: Record<string, unknown>,
): { ok: true; actingAgent: string | undefined } | { ok: false; failure: JwtFailure } {
  let actingAgent: string | undefined;
  if (!Object.hasOwn(claims, 'act')) return { ok: true, actingAgent };
  let node: unknown = claims.act;
  for (let depth = 1; node !== undefined; depth++) {
    if (depth > MAX_ACTOR_DEPTH) return { ok: false, failure: 'actor_chain_too_deep' };
    if (!isRecord(node)) return { ok: false, failure: 'invalid_actor' };
    const actor = own(node, 'sub');
    if (!isIdentifier(actor)) return { ok: false, failure: 'invalid_actor' };
    actingAgent ??= actor;
    node = own(node, 'act');
  }
  return { ok: true, actingAgent };
}
