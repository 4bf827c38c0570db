/**
 * After a person decides (approves or denies an action, answers a remote agent's question), the
 * gateway resumes the parked task itself, as the caller that started it: a concurrency slot and
 * a grant like any of that caller's turns (tools, reply scrubbing), then
 * `TaskService.resumeDecided`. The caller sees the task move on through GetTask, SubscribeToTask
 * or a stream; a caller that sends a message to the task first still resumes it as before (this
 * resume then finds it busy, or no longer parked, and does nothing). Without a free slot the task
 * stays parked for the caller's next message (logged).
 *
 * @example
 * ```ts
 * const resume = createDecidedResume({ service, grants, backendOf, logger });
 * new ApprovalService({ …, onDecided: resume });
 * ```
 */
import type { AgentBackend } from '../agents/backend.js';
import type { DecidedTask } from '../approvals/gate.js';
import { errorCode } from '../errors/index.js';
import type { CallContext } from '../tasks/call-context.js';
import type { TaskService } from '../tasks/service.js';
import { principalOfOwner } from '../tasks/stores/principal.js';
import type { TurnGrants } from './admission/in-flight.js';
import type { Logger } from './log.js';

/**
 * The decision hook of one gateway.
 *
 * @example
 * ```ts
 * const resume = createDecidedResume({ service, grants, backendOf: (slug) => agents.get(slug)?.backend, logger });
 * resume({ owner, taskId, agent: 'ops', caller });
 * ```
 */
export function createDecidedResume(options: {
  service: Pick<TaskService, 'resumeDecided'>;
  grants: TurnGrants;
  backendOf: (slug: string) => AgentBackend | undefined;
  logger: Logger;
}): (decided: DecidedTask) => void {
  const { service, grants, logger } = options;

  async function resume(ctx: CallContext, taskId: string): Promise<void> {
    const release = await grants.inFlight.tryAcquire(ctx.principalKey);
    if (release === null) {
      logger.warn({ event: 'resume_after_decision_deferred', taskId, reason: 'concurrency_limit' });
      return;
    }
    const task = await service.resumeDecided(ctx, taskId, grants.grant(ctx, '', release));
    logger.info({ event: 'resumed_after_decision', taskId, state: task.status.state });
  }

  return (decided) => {
    const backend = options.backendOf(decided.agent);
    if (backend === undefined) return;
    const ctx: CallContext = {
      principalKey: principalOfOwner(decided.owner),
      agentSlug: decided.agent,
      backend,
      ...(decided.caller !== undefined && { caller: decided.caller }),
    };
    resume(ctx, decided.taskId).catch((error: unknown) => {
      // Busy or no longer parked: the caller's own message resumed it first.
      logger.info({ event: 'resume_after_decision_skipped', taskId: decided.taskId, reason: errorCode(error) });
    });
  };
}
