/**
 * The `a2a` upstream backend: Airlock in front of an existing A2A agent (built with another
 * framework, with no guard of its own). Each inbound turn is relayed to the agent's entry in the
 * upstream registry through an {@link UpstreamConnector} (Airlock's own is
 * `createUpstreamConnector` in src/client/upstream.ts: the guarded transport, card trust and
 * pins), and the upstream's answer comes back as agent events, filtered as untrusted text.
 *
 * Airlock serves its own card for the agent (from its config); the upstream's card is only
 * read, to find and check its endpoint, and never shown.
 *
 * ```yaml
 * upstreams: { registry: upstreams.yaml }
 * agents:
 *   - slug: guarded
 *     backend: { type: a2a, agent: upstream }   # a name in upstreams.yaml
 * ```
 *
 * With approvals configured the gateway sets `askPerson` in the {@link BackendContext}: the
 * upstream's questions (input-required, auth-required) then end the turn with `ask-person` for
 * the person to answer, and only the person's answer (`turn.personAnswer`) is sent upstream.
 *
 * @example
 * ```ts
 * const connector = createUpstreamConnector({ registryPath: 'upstreams.yaml', registry: loadRegistryFile('upstreams.yaml'), pinsPath: '.airlock/pins.json' });
 * const backend = createUpstreamBackend({ type: 'a2a', agent: 'upstream' }, { agent: 'guarded', log }, connector);
 * for await (const event of backend.run(turn)) console.log(event);
 * ```
 */
import type { UpstreamBackendConfig } from './schema.js';
import { BackendConfigError, type AgentBackend, type BackendContext, type BackendLog } from '../backend.js';
import { DEFAULT_MAX_SESSIONS, UpstreamIds } from './ids.js';
import { UpstreamError, type UpstreamAgent, type UpstreamConnector } from './port.js';
import { relayTurn, type RelayContext } from './relay.js';

export {
  BoundedMap,
  DEFAULT_MAX_SESSIONS,
  MAX_REMEMBERED_QUESTION_CHARS,
  MAX_UPSTREAM_ID_CHARS,
  UpstreamIds,
  isUsableUpstreamId,
} from './ids.js';
export type { RememberedQuestion, WaitingTask } from './ids.js';
export { UpstreamError } from './port.js';
export type { UpstreamAgent, UpstreamChannel, UpstreamConnector, UpstreamLimits, UpstreamRequest } from './port.js';
export { ReplyFilter, truncationNote } from './reply.js';
export type { FilterCounts, FilteredText, ReplyFilterOptions } from './reply.js';
export { FORGOTTEN_TASK_REASON, QUESTION_CUT_NOTE, relayTurn } from './relay.js';
export type { RelayContext } from './relay.js';

/**
 * Tuning of {@link createUpstreamBackend} (the defaults suit a gateway).
 *
 * @example
 * ```ts
 * const options: UpstreamBackendOptions = { maxSessions: 1000 };
 * ```
 */
export interface UpstreamBackendOptions {
  /** Sessions (and, separately, waiting tasks) whose upstream ids are remembered; default 10 000. */
  readonly maxSessions?: number;
  /** Epoch milliseconds (tests). */
  readonly now?: () => number;
}

/**
 * The `a2a` backend, with what a gateway may need besides `run`.
 *
 * @example
 * ```ts
 * const backend: UpstreamBackend = createUpstreamBackend(config, context, connector);
 * backend.upstream; // 'upstream'
 * ```
 */
export interface UpstreamBackend extends AgentBackend {
  readonly kind: 'a2a';
  /** The registry name of the upstream agent. */
  readonly upstream: string;
  /**
   * Cancels, best effort, the upstream task that an interrupted (input-required) inbound task
   * waits on, and forgets it: for a gateway that cancels such a task between turns, when no
   * turn runs whose signal could say so. Never throws.
   */
  cancelWaiting(sessionId: string, taskId: string): Promise<void>;
  /** The task service's hook for the same thing (AgentBackend.cancelInterrupted). */
  cancelInterrupted(task: { readonly sessionId: string; readonly taskId: string }): Promise<void>;
}

/**
 * Creates the `a2a` backend for one inbound agent. The connector is shared by every such
 * backend and closed by whoever created it (the backend has nothing of its own to free).
 *
 * Throws {@link BackendConfigError} when the connector does not know `config.agent`, so a
 * configuration that names an agent missing from the registry fails at startup.
 *
 * @example
 * ```ts
 * const backend = createUpstreamBackend({ type: 'a2a', agent: 'upstream' }, { agent: 'guarded' }, connector);
 * backend.kind; // 'a2a'
 * ```
 */
export function createUpstreamBackend(
  config: UpstreamBackendConfig,
  context: BackendContext,
  connector: UpstreamConnector,
  options: UpstreamBackendOptions = {},
): UpstreamBackend {
  const slug = context.agent ?? '-';
  let agent: UpstreamAgent;
  try {
    agent = connector.open(config.agent);
  } catch (error) {
    if (error instanceof BackendConfigError) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new BackendConfigError(`agent "${slug}": backend a2a: ${why}`);
  }
  const ids = new UpstreamIds(options.maxSessions ?? DEFAULT_MAX_SESSIONS);
  const log: BackendLog = context.log ?? (() => undefined);
  const relayContext: RelayContext = {
    agent,
    ids,
    log,
    slug,
    ...(context.askPerson === true && { askPerson: true }),
    ...(options.now !== undefined && { now: options.now }),
  };
  const cancelWaiting = async (sessionId: string, taskId: string): Promise<void> => {
    const waiting = ids.waitingOf(sessionId, taskId);
    if (waiting === undefined) return;
    ids.forgetWaiting(sessionId, taskId);
    try {
      const channel = await agent.connect(AbortSignal.timeout(agent.limits.maxWaitMs));
      const state = await channel.cancel(waiting.taskId);
      log('info', 'upstream_task_canceled', {
        agent: slug,
        upstream: agent.name,
        why: 'waiting_task_canceled',
        state: state ?? 'unknown',
      });
    } catch (error) {
      const type = error instanceof UpstreamError ? error.type : 'unexpected';
      log('warn', 'upstream_cancel_failed', { agent: slug, upstream: agent.name, type });
    }
  };

  return {
    kind: 'a2a',
    upstream: agent.name,
    run: (turn) => relayTurn(turn, relayContext),
    cancelWaiting,
    cancelInterrupted: (task) => cancelWaiting(task.sessionId, task.taskId),
  };
}
