/**
 * Who is calling which agent: what the server hands the task service with every call once
 * admission is done. The task service derives each task's owner from it.
 *
 * @example
 * ```ts
 * const ctx: CallContext = { principalKey: 'client:ci::ci', agentSlug: 'echo', backend };
 * await service.send(ctx, params);
 * ```
 */
import type { AgentBackend } from '../agents/backend.js';
import type { DelegatedToken } from '../identity/delegation.js';

/** Who is calling which agent. The owner of every task is derived from both. */
export interface CallContext {
  /** The caller's principal key (`kind:client:actingAgent:subject`). */
  principalKey: string;
  /** The published agent the call was addressed to. */
  agentSlug: string;
  backend: AgentBackend;
  /**
   * Who is calling, for audit rows and approvals (absent in library use without audit). The
   * subject names the delegating user of a delegated principal (who approves its actions).
   */
  caller?: { clientId: string; kind: 'client' | 'service' | 'delegated'; subject?: string };
  /**
   * The Airlock gateways the request passed, this one last (its hop chain): what a relay of
   * this turn sends on. Absent in library use.
   */
  via?: readonly string[];
  /**
   * The verified bearer JWT of a delegated caller (a token with `act`), wrapped: what a relay
   * backend exchanges for a token to its upstream with the user as subject. Absent for every
   * other caller. Never sent on, logged or shown.
   */
  delegation?: DelegatedToken;
}
