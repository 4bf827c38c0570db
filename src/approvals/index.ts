/**
 * Guarded actions (issue 8): the policy and the store behind "a backend proposes, the human
 * behind the principal decides". Everything here is pure or in-memory; the gateway wires it.
 *
 * How the gateway wires it (one turn that ends with a proposal `{tool, args, level}`):
 *
 * 1. Level. `parseLevel(proposal.level)`; `undefined` refuses the proposal. Then
 *    `decideProposal({ level, agentMaxLevel, principalKind, serviceMaxLevel })`:
 *    - `allow` → the turn goes on;
 *    - `refuse` → the task fails with `message` (service principals are capped at L2 and never
 *      reach input-required; a level above the agent's maximum is refused for everyone);
 *    - `needs_approval` → step 2.
 * 2. Decider. `deciderFor(principal, clientOwners)`; a `none` decider refuses the proposal
 *    (nobody could ever approve it — fail closed).
 * 3. Park. `redactActionArgs(args, { secrets })` (secrets, tokens, emails, size caps), then
 *    `store.create({ taskId, owner: principal.key, decider, tool, args, level, expiresAt }, now)`,
 *    and move the task to `input-required` with one data part,
 *    `actionDataPart(action, approveUrl)`:
 *    `{ action_id, tool, args, level, expires_at, approve_url }`.
 * 4. Decide (out of band). The approve endpoint / console authenticates the person as themself
 *    (never with the agent's token), builds a `DecisionActor`, and calls
 *    `store.decide(actionId, actor, 'approve' | 'deny', now)`. `ApprovalError` codes map to
 *    HTTP: `not_found` 404, `not_decider` 403, `already_decided` 409, `expired` 410.
 * 5. Resume rule. Any message on the parked task is only a request to go on — its text is never
 *    a decision. `resumeStep(await store.findByTask(owner, taskId), now, { parked: true })`:
 *    - `repark` → answer with the same input-required status and data part, run nothing;
 *    - `resume` → `store.consume(actionId, taskId, now)` and only if it succeeds run the turn
 *      (the approval is used exactly once; a lost race throws `already_consumed`);
 *    - `fail` → fail the task with the step's `message` (denied, or expired).
 * 6. Audit. Every decision (approve, deny, refused attempt) and every refusal of a proposal is
 *    one audit row. The event types are not in `AUDIT_EVENT_SPEC` yet (see the wiring notes).
 *
 * @example
 * ```ts
 * import { decideProposal, deciderFor, redactActionArgs, MemoryApprovalStore, actionDataPart, resumeStep } from './approvals/index.js';
 *
 * const verdict = decideProposal({ level: 'L4', agentMaxLevel: 'L4', principalKind: principal.kind });
 * if (verdict.kind === 'needs_approval') {
 *   const decider = deciderFor(principal, clientOwners);
 *   const { value: args } = redactActionArgs(proposal.args, { secrets });
 *   const action = await store.create({ taskId, owner: principal.key, decider, tool: proposal.tool, args, level: 'L4', expiresAt: now + ttl }, now);
 *   parkTask(taskId, actionDataPart(action, `${origin}/approvals/${action.actionId}`));
 * }
 * ```
 */

/**
 * The autonomy ladder (L1–L4) and the proposal decision.
 *
 * @example
 * ```ts
 * decideProposal({ level: parseLevel('L3')!, agentMaxLevel: 'L4', principalKind: 'client' }); // { kind: 'needs_approval' }
 * ```
 */
export {
  APPROVAL_THRESHOLD,
  AUTONOMY_LEVEL_INFO,
  AUTONOMY_LEVELS,
  decideProposal,
  isAutonomyLevel,
  levelRank,
  minLevel,
  parseLevel,
  SERVICE_LEVEL_CEILING,
  type AutonomyLevel,
  type ProposalDecision,
  type ProposalInput,
  type ProposalRefusalReason,
} from './ladder.js';

/**
 * Who may decide, and whether an actor is that person.
 *
 * @example
 * ```ts
 * mayDecide(deciderFor(principal, clientOwners), { kind: 'user', userId: session.userId });
 * ```
 */
export {
  deciderFor,
  mayDecide,
  type ClientOwners,
  type DecisionActor,
  type Decider,
  type NoDeciderReason,
} from './decider.js';

/**
 * Redaction of proposed arguments.
 *
 * @example
 * ```ts
 * redactActionArgs({ token: 'x', to: 'a@b.io' }, { secrets: [] }).value; // { token: '[redacted]', to: '[email redacted]' }
 * ```
 */
export {
  ARGS_REDACTION_DEFAULTS,
  isSecretKey,
  redactActionArgs,
  REDACTED_VALUE,
  TRUNCATED_VALUE,
  type JsonValue,
  type RedactArgsOptions,
  type RedactedArgs,
} from './redact.js';

/**
 * The approval store and its typed errors.
 *
 * @example
 * ```ts
 * const store: ApprovalStore = new MemoryApprovalStore();
 * await store.consume(actionId, taskId, Date.now()); // throws ApprovalError('already_consumed') the second time
 * ```
 */
export {
  ApprovalError,
  approvalStatus,
  isApprovalError,
  newActionId,
  type ApprovalDecision,
  type ApprovalErrorCode,
  type ApprovalStatus,
  type ApprovalStore,
  type ActionOrigin,
  type KeptForAction,
  type PendingAction,
  type PendingActionInput,
  type StoredApprovalState,
} from './store.js';
export { MemoryApprovalStore, type MemoryApprovalStoreOptions } from './memory-store.js';
export { RecordApprovalStore, type RecordApprovalStoreOptions } from './records-store.js';

/**
 * The input-required data part.
 *
 * @example
 * ```ts
 * actionDataPart(action, approveUrl); // { action_id, tool, args, level, expires_at, approve_url }
 * ```
 */
export { actionDataPart, type ActionDataPart } from './part.js';

/**
 * The resume rule for a message on a parked task.
 *
 * @example
 * ```ts
 * resumeStep(await store.findByTask(owner, taskId), Date.now(), { parked: true }).kind; // 'repark' | 'resume' | 'fail' | 'not_parked'
 * ```
 */
export { resumeStep, type ResumeFailure, type ResumeStep } from './resume.js';

/**
 * Remote agents' questions waiting for a person (a relay backend's `ask-person`): the same rules
 * as an approval — only the decider answers, once, before it expires, and the answer is used
 * exactly once, on the task it was asked on. Synchronous; errors are `ApprovalError`s.
 *
 * @example
 * ```ts
 * const questions = new MemoryQuestionStore();
 * const asked = questions.create({ taskId, owner: principal.key, decider, agent: slug, remoteAgent: remote.agent, remoteTaskId: remote.taskId, remoteContextId: remote.contextId, state: remote.state, question: remote.question, expiresAt: now + ttl }, now);
 * questions.answer(asked.questionId, 'alice', 'Tuesday', Date.now());
 * questions.consume(asked.questionId, taskId, Date.now()).answer; // 'Tuesday', once
 * ```
 */
export {
  MAX_ANSWER_CHARS,
  MAX_QUESTION_CHARS,
  MemoryQuestionStore,
  QUESTION_CUT_NOTE,
  questionStatus,
  questionView,
  type MemoryQuestionStoreOptions,
  type PendingQuestion,
  type PendingQuestionInput,
  type QuestionStatus,
  type QuestionStore,
  type StoredQuestionState,
} from './questions.js';
