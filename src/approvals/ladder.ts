/**
 * The autonomy ladder: how much a proposed action may do, and what the gateway does with a
 * proposal at each level. Pure and I/O-free, so the same rule holds in every code path that
 * parks a task.
 *
 * | Level | Name                  | Meaning                                                                   |
 * | ----- | --------------------- | ------------------------------------------------------------------------- |
 * | L1    | `read_only`           | Lookups in data the agent already holds; nothing leaves, nothing changes. |
 * | L2    | `read_only_external`  | Reads from other systems (search, fetch, query); still changes nothing.   |
 * | L3    | `reversible_acting`   | Changes state in a way that can be undone (draft, label, open a ticket).  |
 * | L4    | `irreversible_acting` | Changes that cannot be taken back (send, pay, delete, deploy).            |
 *
 * L1–L2 are read-only and run without asking; L3 and above are acting and need a human's
 * approval ({@link APPROVAL_THRESHOLD}). A service principal has no human behind it, so it can
 * never reach the approval state: it is capped at {@link SERVICE_LEVEL_CEILING} (L2) whatever
 * its configuration says, and a proposal above its cap is refused outright.
 *
 * @example
 * ```ts
 * decideProposal({ level: 'L4', agentMaxLevel: 'L4', principalKind: 'delegated' }); // { kind: 'needs_approval' }
 * decideProposal({ level: 'L3', agentMaxLevel: 'L4', principalKind: 'service' }).kind; // 'refuse'
 * ```
 */
import type { PrincipalKind } from '../identity/principal.js';

/**
 * Every autonomy level, lowest first. The order is the ladder: a higher index may do more.
 *
 * @example
 * ```ts
 * AUTONOMY_LEVELS.indexOf('L3'); // 2
 * ```
 */
export const AUTONOMY_LEVELS = ['L1', 'L2', 'L3', 'L4'] as const;

/**
 * One rung of the autonomy ladder.
 *
 * @example
 * ```ts
 * const level: AutonomyLevel = 'L2';
 * ```
 */
export type AutonomyLevel = (typeof AUTONOMY_LEVELS)[number];

/**
 * The stable name and a one-line meaning of each level, for config docs, CLI output and the
 * approval screen (a person deciding should read what the level means, not a bare `L3`).
 *
 * @example
 * ```ts
 * AUTONOMY_LEVEL_INFO.L4.name; // 'irreversible_acting'
 * ```
 */
export const AUTONOMY_LEVEL_INFO: Readonly<Record<AutonomyLevel, { readonly name: string; readonly meaning: string }>> =
  Object.freeze({
    L1: Object.freeze({
      name: 'read_only',
      meaning: 'Read-only lookups in data the agent already holds; nothing leaves and nothing changes.',
    }),
    L2: Object.freeze({
      name: 'read_only_external',
      meaning: 'Read-only calls to other systems (search, fetch, query); nothing changes anywhere.',
    }),
    L3: Object.freeze({
      name: 'reversible_acting',
      meaning: 'Acts on another system in a way that can be undone (create a draft, add a label, open a ticket).',
    }),
    L4: Object.freeze({
      name: 'irreversible_acting',
      meaning: 'Acts in a way that cannot be taken back (send a message, pay, delete, deploy).',
    }),
  });

/**
 * The lowest acting level: a proposal at or above it needs a human's approval.
 *
 * @example
 * ```ts
 * levelRank(APPROVAL_THRESHOLD); // 3
 * ```
 */
export const APPROVAL_THRESHOLD: AutonomyLevel = 'L3';

/**
 * The highest level a service principal can ever be configured to: the top read-only rung.
 * Why a ceiling rather than a default: a service principal has no human who could approve, so
 * letting it reach an acting level would either strand the task or let it approve itself.
 *
 * @example
 * ```ts
 * decideProposal({ level: 'L3', agentMaxLevel: 'L4', principalKind: 'service', serviceMaxLevel: 'L4' }).kind; // 'refuse'
 * ```
 */
export const SERVICE_LEVEL_CEILING: AutonomyLevel = 'L2';

/**
 * The position of a level on the ladder, 1 for L1 … 4 for L4.
 *
 * @example
 * ```ts
 * levelRank('L1') < levelRank('L4'); // true
 * ```
 */
export function levelRank(level: AutonomyLevel): number {
  return AUTONOMY_LEVELS.indexOf(level) + 1;
}

/**
 * The lower of two levels.
 *
 * @example
 * ```ts
 * minLevel('L4', 'L2'); // 'L2'
 * ```
 */
export function minLevel(a: AutonomyLevel, b: AutonomyLevel): AutonomyLevel {
  return levelRank(a) <= levelRank(b) ? a : b;
}

/**
 * Whether a value names an autonomy level exactly (`'L1'` … `'L4'`).
 *
 * @example
 * ```ts
 * isAutonomyLevel('L3'); // true
 * isAutonomyLevel('l3'); // false (use parseLevel for input from people)
 * ```
 */
export function isAutonomyLevel(value: unknown): value is AutonomyLevel {
  return typeof value === 'string' && (AUTONOMY_LEVELS as readonly string[]).includes(value);
}

/**
 * Reads a level from config or a backend's proposal: `'L1'`…`'L4'` in either case with
 * surrounding spaces, a level's name (`'reversible_acting'`), or the integer 1…4. Anything else
 * gives `undefined`, never a guess: a misread level could skip an approval, so callers must
 * treat `undefined` as an error (a config error, or a refused proposal).
 *
 * @example
 * ```ts
 * parseLevel(' l3 '); // 'L3'
 * parseLevel(4); // 'L4'
 * parseLevel('irreversible_acting'); // 'L4'
 * parseLevel('L5'); // undefined
 * ```
 */
export function parseLevel(value: unknown): AutonomyLevel | undefined {
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= 1 && value <= AUTONOMY_LEVELS.length
      ? AUTONOMY_LEVELS[value - 1]
      : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  const upper = text.toUpperCase();
  if (isAutonomyLevel(upper)) return upper;
  for (const level of AUTONOMY_LEVELS) if (AUTONOMY_LEVEL_INFO[level].name === text.toLowerCase()) return level;
  return undefined;
}

/**
 * Why a proposal is refused (stable codes for audit rows and status messages):
 * - `level_above_agent_max`: the agent is not configured to act at this level for anyone.
 * - `service_principal_capped`: the caller is a service principal and the level is above its
 *   cap; no human stands behind it who could approve.
 *
 * @example
 * ```ts
 * const reason: ProposalRefusalReason = 'service_principal_capped';
 * ```
 */
export type ProposalRefusalReason = 'level_above_agent_max' | 'service_principal_capped';

/**
 * What the gateway does with a proposed action:
 * - `allow`: below the approval threshold; the turn goes on without a person.
 * - `needs_approval`: park the task in input-required until the principal's human decides.
 * - `refuse`: fail the proposal with `reason` (a stable code) and `message` (for the status text).
 *
 * @example
 * ```ts
 * const decision: ProposalDecision = { kind: 'needs_approval' };
 * ```
 */
export type ProposalDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'needs_approval' }
  | { readonly kind: 'refuse'; readonly reason: ProposalRefusalReason; readonly message: string };

/**
 * The inputs of {@link decideProposal}.
 *
 * @example
 * ```ts
 * const input: ProposalInput = { level: 'L3', agentMaxLevel: 'L4', principalKind: 'client' };
 * ```
 */
export interface ProposalInput {
  /** The level the backend declared for the action. */
  readonly level: AutonomyLevel;
  /** The highest level this agent may act at, from its config. */
  readonly agentMaxLevel: AutonomyLevel;
  /** Who is calling. */
  readonly principalKind: PrincipalKind;
  /**
   * The configured cap for service principals. Clamped to {@link SERVICE_LEVEL_CEILING}:
   * configuring it higher has no effect. Defaults to the ceiling.
   */
  readonly serviceMaxLevel?: AutonomyLevel;
}

/**
 * Decides what happens to a proposed action. Pure. Guarantees (checked by property tests):
 * a service principal never gets `needs_approval`; and for fixed other inputs the outcome never
 * gets more permissive as the level rises (`allow` → `needs_approval` → `refuse`).
 *
 * The agent's cap is checked first, so a refused level reads the same for every principal.
 *
 * @example
 * ```ts
 * decideProposal({ level: 'L2', agentMaxLevel: 'L4', principalKind: 'client' }); // { kind: 'allow' }
 * decideProposal({ level: 'L3', agentMaxLevel: 'L4', principalKind: 'client' }); // { kind: 'needs_approval' }
 * decideProposal({ level: 'L4', agentMaxLevel: 'L3', principalKind: 'delegated' }).reason; // 'level_above_agent_max'
 * ```
 */
export function decideProposal(input: ProposalInput): ProposalDecision {
  const { level, agentMaxLevel, principalKind } = input;
  const rank = levelRank(level);
  if (rank > levelRank(agentMaxLevel)) {
    return {
      kind: 'refuse',
      reason: 'level_above_agent_max',
      message: `The action needs autonomy level ${level}, above this agent's maximum of ${agentMaxLevel}.`,
    };
  }
  if (principalKind === 'service') {
    const cap = minLevel(input.serviceMaxLevel ?? SERVICE_LEVEL_CEILING, SERVICE_LEVEL_CEILING);
    if (rank > levelRank(cap)) {
      return {
        kind: 'refuse',
        reason: 'service_principal_capped',
        message: `The action needs autonomy level ${level}; service principals are capped at ${cap} and cannot request approval.`,
      };
    }
    return { kind: 'allow' };
  }
  return rank >= levelRank(APPROVAL_THRESHOLD) ? { kind: 'needs_approval' } : { kind: 'allow' };
}
