/**
 * Task owner keys: tasks belong to a principal at one agent, so the same client sees separate
 * task lists per agent. The key is derived from the call context once and kept.
 *
 * @example
 * ```ts
 * const owners = new OwnerKeys();
 * owners.of(ctx); // 'client:a::a@echo'
 * ```
 */
import type { CallContext } from './call-context.js';

/** Most principals whose owner keys are kept. */
const OWNER_CACHE_LIMIT = 1024;

/**
 * One string per owner, kept and shared by all its tasks, rather than a new one per request
 * that every store lookup must flatten and hash again (bounded: a flood of principals only
 * empties the cache).
 *
 * @example
 * ```ts
 * const owner = new OwnerKeys().of({ principalKey: 'client:a::a', agentSlug: 'echo', backend });
 * ```
 */
export class OwnerKeys {
  /** Owner keys by principal key, then agent slug. */
  readonly #owners = new Map<string, Map<string, string>>();

  /** The owner key of the caller's tasks at the agent it addressed. */
  of(ctx: CallContext): string {
    let byAgent = this.#owners.get(ctx.principalKey);
    if (byAgent === undefined) {
      if (this.#owners.size >= OWNER_CACHE_LIMIT) this.#owners.clear();
      byAgent = new Map();
      this.#owners.set(ctx.principalKey, byAgent);
    }
    let owner = byAgent.get(ctx.agentSlug);
    if (owner === undefined) {
      owner = `${ctx.principalKey}@${ctx.agentSlug}`;
      byAgent.set(ctx.agentSlug, owner);
    }
    return owner;
  }
}
