/**
 * The principal an owner key belongs to. Owner keys are `principalKey@agentSlug`
 * (`tasks/owners.ts`); a principal key may hold `@` but an agent slug never does, so the
 * last `@` separates the two. An owner key without one (tests, embedders) is its own principal.
 * Per-principal quotas (stored and parked tasks, pending approvals) are counted by this key,
 * over all agents: a client allowed on ten agents does not get ten times its share.
 *
 * @example
 * ```ts
 * principalOfOwner('client:a::a@echo'); // 'client:a::a'
 * principalOfOwner('alice');            // 'alice'
 * ```
 */
export function principalOfOwner(owner: string): string {
  const at = owner.lastIndexOf('@');
  return at < 0 ? owner : owner.slice(0, at);
}
