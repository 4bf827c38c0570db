/**
 * The turn bridge: hands a turn to its backend and turns the backend's events into task state
 * and stream events, from the first event to the outcome. A turn that needs a person goes to
 * the parking gate; an action the gate allows at once starts the backend's next turn. The
 * bridge never throws at a turn's caller: a failing backend becomes a failed task.
 *
 * @example
 * ```ts
 * const source = bridge.open(live, false);
 * const pulled = bridge.first(live, source);
 * const first = pulled instanceof Promise ? await pulled : pulled;
 * await bridge.acknowledge(live);
 * bridge.drive(live, first);
 * ```
 */
import { trace, type Attributes, type Span } from '@opentelemetry/api';
import type { AgentEvent } from '../../agents/backend.js';
import type { Artifact, Message, Task, TaskState } from '../../protocol/model.js';
import { newId } from '../ids.js';
import type { ParkOutcome, TaskOutcomeReason } from '../policy.js';
import { outcomeOf, statusEvent, storeRefusal, textChars, withStatus } from './lifecycle.js';
import { abortTurn, emitOutcome, pause, type LiveTask, type TurnSource } from './live.js';
import { describe } from './log.js';
import type { ServiceParts } from './parts.js';
import { appendReplyText, flushHeldText, scrubArtifact, scrubParts, scrubText } from './reply.js';
import { artifactBytes, outputCapMessage, partsBytes, withCappedHistory } from './caps.js';
import { closeSource, openSource } from './turn.js';
import { endHeldSpan, holdSpan, iteratorInSpan } from '../../telemetry/held.js';
import { ATTR, SPAN } from '../../telemetry/tracer.js';

/** Actions one turn may take without asking (L1, L2) before it is stopped: no endless loop. */
const MAX_ALLOWED_ACTIONS = 8;

const BACKEND_FAILURE = 'The agent failed to process the message.';
const NO_OUTCOME = 'The agent ended its turn without a result.';
/** What a backend that throws before its first event amounts to. Shared: it is only read. */
const BACKEND_FAILED: IteratorResult<AgentEvent> = Object.freeze({
  done: false,
  value: Object.freeze({ type: 'failed', reason: BACKEND_FAILURE }),
});

/** A direct reply's turn span: the reply is the outcome, as completed. */
const DIRECT_REPLY = (): Attributes => ({ [ATTR.state]: 'completed' });

/**
 * A first event that is a direct Message reply (no task).
 *
 * @example
 * ```ts
 * if (!resuming && isDirectReply(first)) return { kind: 'message', message: bridge.directReply(live, source, first) };
 * ```
 */
export function isDirectReply(
  first: IteratorResult<AgentEvent>,
): first is IteratorYieldResult<Extract<AgentEvent, { type: 'message' }>> {
  return first.done !== true && first.value.type === 'message';
}

/**
 * Runs turns between their backend and their task.
 *
 * @example
 * ```ts
 * const bridge = new TurnBridge(parts);
 * bridge.stop(live, new Error('task canceled'), 'canceled', undefined, 'canceled_by_client');
 * ```
 */
export class TurnBridge {
  readonly #parts: ServiceParts;

  constructor(parts: ServiceParts) {
    this.#parts = parts;
  }

  /**
   * Hands the turn to the backend: builds the turn and asks for its events. The first event is
   * pulled by the caller (see first), so that a direct Message reply can be returned without
   * ever creating a task. A backend that throws here releases the turn (unless told not to).
   */
  open(live: LiveTask, resuming: boolean, releaseOnThrow = true): TurnSource {
    let source: TurnSource;
    try {
      source = openSource(live.ctx, live, resuming, this.#parts.store);
    } catch (error) {
      // A backend that throws before its first event: the task must not stay live.
      if (releaseOnThrow) this.#parts.live.release(live);
      throw error;
    }
    const span = holdSpan(live, SPAN.turn);
    if (span !== undefined) source = tracedTurn(live, source, span);
    live.source = source;
    return source;
  }

  /**
   * The turn's first event: at once from a synchronous source, else a promise. A backend that
   * throws fails the turn (the detail is logged).
   */
  first(live: LiveTask, source: TurnSource): IteratorResult<AgentEvent> | Promise<IteratorResult<AgentEvent>> {
    try {
      if (source.sync) return source.iterator.next();
      return Promise.resolve(source.iterator.next()).catch((error: unknown) => this.#backendFailed(live, error));
    } catch (error) {
      return this.#backendFailed(live, error);
    }
  }

  /** A direct reply: the task is dropped before anyone heard of it, and the turn ends. */
  directReply(live: LiveTask, source: TurnSource, first: { value: { parts: Message['parts'] } }): Message {
    const parts = scrubParts(live, first.value.parts);
    this.#parts.live.release(live);
    live.source = undefined;
    closeSource(source);
    endHeldSpan(live, DIRECT_REPLY);
    if (live.observed) {
      live.observed = false;
      this.#parts.observe?.({
        type: 'completed',
        ctx: live.ctx,
        taskId: live.task.id,
        contextId: live.task.contextId,
        inputChars: live.inputChars,
        outputChars: textChars(parts),
      });
    }
    return { messageId: newId(), role: 'agent', parts, contextId: live.task.contextId };
  }

  /**
   * Stores the task before anyone hears of it. If the store refuses (full, or down), the
   * turn is abandoned and the caller gets the store's error instead of a task id that
   * leads nowhere.
   */
  async acknowledge(live: LiveTask): Promise<void> {
    this.#parts.writes.commit(live, live.task);
    await live.writes;
    if (!live.writeFailed) return;
    const error = live.writeError;
    abortTurn(live, new Error('task could not be stored'));
    this.#outcome(live, 'failed', 'internal_error');
    this.#parts.live.release(live);
    const source = live.source;
    live.source = undefined;
    if (source !== undefined) closeSource(source);
    endHeldSpan(live, turnEnd);
    throw storeRefusal(error);
  }

  /**
   * Runs the turn to its outcome. Never throws: failures become a failed task. A synchronous
   * source is pulled without awaiting, so such a turn is over when this returns, unless it
   * proposed an action a durable store records: then the promise returned settles when the turn
   * is over.
   */
  drive(live: LiveTask, first: IteratorResult<AgentEvent> | undefined): Promise<void> | undefined {
    const source = live.source;
    // No source: the turn was refused, or canceled before it could start.
    if (source === undefined || live.aborted) return undefined;
    if (source.sync) return this.#driveSync(live, source.iterator, first);
    void this.#driveAsync(live, source.iterator, first);
    return undefined;
  }

  /**
   * Ends a running turn here with `state` (a cancel, a shutdown): aborts it, publishes the
   * final status, reports the outcome and releases it. Its writes are still to be awaited.
   */
  stop(
    live: LiveTask,
    abortReason: Error,
    state: TaskState,
    text: string | undefined,
    reason: TaskOutcomeReason,
  ): void {
    abortTurn(live, abortReason);
    this.#parts.writes.commit(live, this.#withStatus(live, state, text));
    this.#parts.bus.publish(live.task.id, statusEvent(live.task, true));
    this.#outcome(live, outcomeOf(state), reason);
    pause(live);
    this.#parts.live.release(live);
  }

  /**
   * Kept apart from #driveAsync, which could pull a synchronous source too (without awaiting
   * it): the bench's runSync send path is 7–10 % faster this way (CPU per in-process blocking
   * send to the echo backend, 200k sends: 5.3–6.2 µs against 5.6–6.8 µs as one async loop;
   * the async function's promise and frame cost more than the loop). A turn pulled here is
   * over when drive returns: TaskService#sendReady stores it once, right after.
   */
  #driveSync(
    live: LiveTask,
    iterator: Iterator<AgentEvent>,
    first: IteratorResult<AgentEvent> | undefined,
  ): Promise<void> | undefined {
    let recording: Promise<void> | undefined;
    try {
      if (live.task.status.state !== 'working') this.#transition(live, 'working');
      let next = first ?? iterator.next();
      while (!live.aborted) {
        if (next.done === true) {
          this.#finish(live, 'failed', NO_OUTCOME);
          break;
        }
        const applied = this.#apply(live, next.value);
        if (typeof applied !== 'boolean') {
          // The action is being recorded: the rest of the turn goes on when it is.
          recording = this.#afterRecorded(live, applied);
          return recording;
        }
        if (applied) {
          // An action the ladder allows without asking: the backend's next turn takes it.
          const source = this.#continueTurn(live);
          if (source === undefined || !source.sync) break;
          iterator = source.iterator;
        }
        next = iterator.next();
      }
    } catch (error) {
      this.#turnFailed(live, error);
    } finally {
      if (recording === undefined) this.#endTurn(live);
    }
    return undefined;
  }

  /** A synchronous turn whose proposed action a durable store records: ends it once recorded. */
  async #afterRecorded(live: LiveTask, applied: Promise<boolean>): Promise<void> {
    try {
      if (await applied) {
        const source = this.#continueTurn(live);
        // The turn goes on synchronously (and ends itself there).
        if (source?.sync === true) return await this.#driveSync(live, source.iterator, undefined);
      }
    } catch (error) {
      this.#turnFailed(live, error);
    }
    this.#endTurn(live);
  }

  async #driveAsync(
    live: LiveTask,
    iterator: AsyncIterator<AgentEvent>,
    first: IteratorResult<AgentEvent> | undefined,
  ): Promise<void> {
    try {
      if (live.task.status.state !== 'working') this.#transition(live, 'working');
      let next = first ?? (await iterator.next());
      while (!live.aborted) {
        if (next.done === true) {
          this.#finish(live, 'failed', NO_OUTCOME);
          break;
        }
        const applied = this.#apply(live, next.value);
        if (typeof applied === 'boolean' ? applied : await applied) {
          const source = this.#continueTurn(live);
          if (source === undefined || source.sync) break;
          iterator = source.iterator;
        }
        next = await iterator.next();
      }
    } catch (error) {
      this.#turnFailed(live, error);
    } finally {
      this.#endTurn(live);
    }
  }

  /** A backend that threw before its first event: the turn fails (the detail is logged). */
  #backendFailed(live: LiveTask, error: unknown): IteratorResult<AgentEvent> {
    this.#logBackendError(live, error);
    return BACKEND_FAILED;
  }

  /** A backend that threw: the turn fails with a generic reason, the detail goes to the log. */
  #turnFailed(live: LiveTask, error: unknown): void {
    if (live.aborted) return;
    this.#logBackendError(live, error);
    this.#finish(live, 'failed', BACKEND_FAILURE, undefined, 'agent_failed');
  }

  /** The turn is over: the task leaves the live set and the backend may clean up. */
  #endTurn(live: LiveTask): void {
    this.#parts.live.release(live);
    const source = live.source;
    live.source = undefined;
    // #sendReady makes its own write and reports it: settle has nothing to watch then.
    this.#parts.writes.settle(live);
    if (source !== undefined) closeSource(source);
    endHeldSpan(live, turnEnd);
  }

  /**
   * Applies one backend event. Returns true when the turn reached its outcome; a promise of it
   * for an action a durable store records first.
   */
  #apply(live: LiveTask, event: AgentEvent): boolean | Promise<boolean> {
    switch (event.type) {
      case 'working': {
        const text = scrubText(live, event.text);
        if (text !== undefined && !this.#keeps(live, Buffer.byteLength(text, 'utf8')))
          return this.#outputTooLarge(live);
        this.#transition(live, 'working', text);
        return false;
      }
      case 'text': {
        const { writes, bus, caps } = this.#parts;
        if (!appendReplyText(live, event.text, event.last === true, writes, bus, caps.maxTaskOutputBytes)) {
          return this.#outputTooLarge(live);
        }
        return false;
      }
      case 'artifact': {
        const artifact: Artifact = {
          ...scrubArtifact(live, event.artifact),
          artifactId: scrubText(live, event.artifact.artifactId) ?? newId(),
        };
        // A backend streaming artifacts forever stops at the task's cap.
        if (!this.#keeps(live, artifactBytes(artifact))) return this.#outputTooLarge(live);
        this.#parts.writes.commit(live, { ...live.task, artifacts: [...live.task.artifacts, artifact] });
        this.#parts.bus.publish(live.task.id, {
          kind: 'artifact-update',
          taskId: live.task.id,
          contextId: live.task.contextId,
          artifact,
          lastChunk: true,
        });
        return false;
      }
      case 'message':
        // Too late for a direct reply: the task exists, so the message becomes its result.
        this.#finish(live, 'completed', undefined, scrubParts(live, event.parts));
        return true;
      case 'completed':
        this.#finish(live, 'completed', scrubText(live, event.text));
        return true;
      case 'input-required':
        this.#finish(live, 'input-required', scrubText(live, event.question));
        return true;
      case 'rejected':
        this.#finish(live, 'rejected', scrubText(live, event.reason));
        return true;
      case 'failed':
        this.#finish(live, 'failed', scrubText(live, event.reason), undefined, 'agent_failed');
        return true;
      case 'propose-action': {
        const gate = this.#parts.gate;
        if (gate === undefined) {
          return this.#parked(live, {
            kind: 'refuse',
            message: 'The agent proposed a guarded action, and this gateway has no approvals configured.',
            reason: 'action_refused',
          });
        }
        const outcome = gate.propose(live.ctx, live.owner, live.task, event.action, event.continuation);
        if (!(outcome instanceof Promise)) return this.#parked(live, outcome);
        return outcome.then((recorded) => {
          // Canceled while the action was recorded: it must not wait for a person.
          if (live.aborted) {
            gate.withdraw(live.owner, live.task.id);
            return true;
          }
          return this.#parked(live, recorded);
        });
      }
      case 'ask-person': {
        const gate = this.#parts.gate;
        return this.#parked(
          live,
          gate === undefined
            ? { kind: 'park', parts: [{ kind: 'text', text: event.remote.question }] }
            : gate.ask(live.ctx, live.owner, live.task, event.remote),
        );
      }
    }
  }

  /** Applies the gate's answer to a turn that needs a person. Always ends the turn. */
  #parked(live: LiveTask, outcome: ParkOutcome): true {
    switch (outcome.kind) {
      case 'park':
        this.#finish(live, 'input-required', undefined, scrubParts(live, outcome.parts));
        break;
      case 'refuse':
        this.#finish(live, 'failed', outcome.message, undefined, outcome.reason);
        break;
      case 'allow': {
        const allowed = (live.allowedActions ?? 0) + 1;
        live.allowedActions = allowed;
        if (allowed > MAX_ALLOWED_ACTIONS) {
          const message = `The agent proposed more than ${MAX_ALLOWED_ACTIONS} actions in one turn.`;
          this.#finish(live, 'failed', message, undefined, 'action_refused');
        } else {
          live.continueWith = outcome.action;
        }
        break;
      }
    }
    return true;
  }

  /**
   * After an event that ended the turn: when it allowed an action, a new turn of the backend
   * starts with it (same task, same state) and its events are returned; otherwise undefined.
   */
  #continueTurn(live: LiveTask): TurnSource | undefined {
    const action = live.continueWith;
    if (action === undefined || live.aborted) return undefined;
    live.continueWith = undefined;
    live.approvedAction = action;
    live.deniedAction = undefined;
    const previous = live.source;
    if (previous !== undefined) closeSource(previous);
    live.source = undefined;
    try {
      return (live.source = this.open(live, true, false));
    } catch (error) {
      this.#turnFailed(live, error);
      return undefined;
    }
  }

  #transition(live: LiveTask, state: TaskState, text?: string): void {
    this.#parts.writes.commit(live, this.#withStatus(live, state, text));
    this.#parts.bus.publish(live.task.id, statusEvent(live.task, false));
  }

  /** The task in `state` now, its history held to the cap (the oldest messages go first). */
  #withStatus(live: LiveTask, state: TaskState, text?: string, parts?: Message['parts']): Task {
    const next = withStatus(live.task, state, this.#parts.timestamp(), text, parts);
    return withCappedHistory(next, this.#parts.caps.maxHistoryMessages);
  }

  /** Counts `bytes` of output against the task's cap; false (nothing counted) if they pass it. */
  #keeps(live: LiveTask, bytes: number): boolean {
    const total = (live.outputBytes ?? 0) + bytes;
    if (total > this.#parts.caps.maxTaskOutputBytes) return false;
    live.outputBytes = total;
    return true;
  }

  /** The backend's output passed the task's cap: the turn fails, saying so, and the backend is stopped. */
  #outputTooLarge(live: LiveTask): true {
    this.#end(live, 'failed', outputCapMessage(this.#parts.caps.maxTaskOutputBytes), undefined, 'output_too_large');
    abortTurn(live, new Error('task output limit reached'));
    return true;
  }

  /**
   * Moves to a terminal or interrupted state; the stream ends after this event. The final
   * reply counts against the output cap too: a reply that passes it fails the turn instead.
   */
  #finish(live: LiveTask, state: TaskState, text?: string, parts?: Message['parts'], reason?: TaskOutcomeReason): void {
    // Reply text the scrubber still holds back goes out before the final status.
    const { writes, bus, caps } = this.#parts;
    const flushed = flushHeldText(live, writes, bus, caps.maxTaskOutputBytes);
    const replyBytes =
      parts !== undefined ? partsBytes(parts) : text !== undefined ? Buffer.byteLength(text, 'utf8') : 0;
    if (!flushed || !this.#keeps(live, replyBytes)) {
      this.#outputTooLarge(live);
      return;
    }
    this.#end(live, state, text, parts, reason);
  }

  #end(live: LiveTask, state: TaskState, text?: string, parts?: Message['parts'], reason?: TaskOutcomeReason): void {
    this.#parts.writes.commit(live, this.#withStatus(live, state, text, parts));
    this.#parts.bus.publish(live.task.id, statusEvent(live.task, true));
    this.#outcome(live, outcomeOf(state), reason);
    pause(live);
  }

  #outcome(live: LiveTask, type: ReturnType<typeof outcomeOf>, reason?: TaskOutcomeReason): void {
    emitOutcome(this.#parts.observe, live, type, reason);
  }

  #logBackendError(live: LiveTask, error: unknown): void {
    this.#parts.log('error', 'agent_backend_failed', {
      agent: live.ctx.agentSlug,
      backend: live.ctx.backend.kind,
      taskId: live.task.id,
      error: describe(error),
    });
  }
}

/** The turn span's attributes at its end: the state the turn left the task in. */
function turnEnd(live: LiveTask): Attributes {
  return { [ATTR.state]: live.task.status.state };
}

/**
 * The turn's span notes its ids, agent and backend (the ids on the request's server span too),
 * and the backend is pulled with it active: its outbound calls become the turn's children.
 */
function tracedTurn(live: LiveTask, source: TurnSource, span: Span): TurnSource {
  if (span.isRecording()) {
    const ids = { [ATTR.taskId]: live.task.id, [ATTR.contextId]: live.task.contextId };
    span.setAttributes({ ...ids, [ATTR.agent]: live.ctx.agentSlug, [ATTR.backend]: live.ctx.backend.kind });
    trace.getActiveSpan()?.setAttributes(ids);
  }
  return source.sync
    ? { sync: true, iterator: iteratorInSpan(source.iterator, span) }
    : { sync: false, iterator: iteratorInSpan(source.iterator, span) };
}
