/**
 * What the parts of the approvals service share: its settings, the two in-memory stores, the
 * origin book, the audit trail, and who decides for a call.
 *
 * @example
 * ```ts
 * const decider = deciderOfCall(ctx, state.clientOwners);
 * if (decider.kind === 'user') state.origins.prune(state.now(), state.questions);
 * ```
 */
import type { CallContext } from '../tasks/call-context.js';
import type { ApprovalAuditTrail } from './audit-trail.js';
import { deciderFor, jwtPersonId, type ClientOwners, type Decider } from './decider.js';
import type { AutonomyLevel } from './ladder.js';
import type { OriginBook } from './origins.js';
import type { DecidedTask } from './desk.js';
import type { MemoryQuestionStore } from './questions.js';
import type { ApprovalStore } from './store.js';

/**
 * The approvals service's state, as its proposal, decision and question parts use it.
 *
 * @example
 * ```ts
 * const outcome = proposeAction(state, ctx, owner, task, proposal);
 * ```
 */
export interface GateState {
  /** Whether approvals are configured (otherwise acting proposals are refused). */
  readonly enabled: boolean;
  readonly ttlMs: number;
  readonly serviceMaxLevel: 'L1' | 'L2';
  readonly agentMaxLevels: ReadonlyMap<string, AutonomyLevel>;
  /** Agents whose denied or expired actions go back to the backend (`actions.onDenied: continue`). */
  readonly continueOnDenied: ReadonlySet<string>;
  readonly clientOwners: ClientOwners;
  /** `auth.jwt.issuer` ('' without JWT auth): the namespace of delegating users' ids. */
  readonly jwtIssuer: string;
  readonly secrets: readonly string[];
  readonly baseUrl: () => string;
  /** `approve_url` opens the console (`/console#action-<id>`) rather than the JSON endpoint. */
  readonly consoleLinks: boolean;
  readonly now: () => number;
  readonly actions: ApprovalStore;
  readonly questions: MemoryQuestionStore;
  readonly origins: OriginBook;
  readonly trail: ApprovalAuditTrail;
  /** Told of the task behind each decision and answer once it is recorded (the gateway resumes it). */
  readonly decided?: (task: DecidedTask) => void;
}

/**
 * Who decides for a call: nobody for a service principal, otherwise the person its principal
 * maps to. Configured people and JWT subjects are separate namespaces (see personUserId), so a
 * delegating user's id is `jwt:<issuer>#<sub>` (jwtPersonId: a subject names a person only
 * within its issuer).
 *
 * @example
 * ```ts
 * deciderOfCall(ctx, new Map([['bot', 'person:alice']])); // { kind: 'user', userId: 'person:alice', … }
 * ```
 */
export function deciderOfCall(ctx: CallContext, clientOwners: ClientOwners, jwtIssuer = ''): Decider {
  const caller = ctx.caller;
  if (caller === undefined) return { kind: 'none', reason: 'service_principal' };
  const decider = deciderFor(
    { kind: caller.kind, clientId: caller.clientId, subject: caller.subject ?? '', key: ctx.principalKey },
    clientOwners,
  );
  if (decider.kind === 'user' && decider.via === 'delegating_user') {
    return { ...decider, userId: jwtPersonId(jwtIssuer, decider.userId) };
  }
  return decider;
}
