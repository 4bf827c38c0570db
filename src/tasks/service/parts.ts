/**
 * What the pieces of the task service share: the store and bus it was given, its log and
 * observer, the parking gate, its clock, and the live-task registry and write queue it owns.
 *
 * @example
 * ```ts
 * const live = new LiveTasks();
 * const parts: ServiceParts = { store, bus, log, observe, gate, timestamp: isoNow, live, writes: new TaskWrites(store, live, log) };
 * const bridge = new TurnBridge(parts);
 * ```
 */
import type { TaskEventBus } from '../events.js';
import type { ParkingGate, TaskObserver } from '../policy.js';
import type { TaskStore } from '../store.js';
import type { TaskCaps } from './caps.js';
import type { LiveTasks } from './live.js';
import type { ServiceLogger } from './log.js';
import type { TaskWrites } from './writes.js';

/**
 * The task service's collaborators, built once by its constructor.
 *
 * @example
 * ```ts
 * parts.writes.commit(live, withStatus(live.task, 'working', parts.timestamp()));
 * ```
 */
export interface ServiceParts {
  readonly store: TaskStore;
  readonly bus: TaskEventBus;
  readonly log: ServiceLogger;
  /** Told of every task's submission and outcome (audit). */
  readonly observe: TaskObserver | undefined;
  /** The audit trail's commit point, awaited after the submitted row (see TaskServiceOptions). */
  readonly observed: (() => Promise<void> | undefined) | undefined;
  /** Where a turn that needs a person goes; none = every proposal fails its task. */
  readonly gate: ParkingGate | undefined;
  /** The status timestamp for a change made now: ISO 8601 UTC with milliseconds. */
  readonly timestamp: () => string;
  readonly live: LiveTasks;
  readonly writes: TaskWrites;
  /** What one task may keep: history messages, backend output bytes. */
  readonly caps: TaskCaps;
}
