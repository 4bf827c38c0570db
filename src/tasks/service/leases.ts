/**
 * Turn leases, the service side (with a store several replicas share, see stores/leases.ts):
 * while a turn runs here this replica holds the task's lease, renewed for all its turns in one
 * statement every third of the TTL, on a timer of its own (a turn that is slow, or waits on its
 * backend, is still renewed: only a process that stops running its timers loses its leases). The
 * lease is dropped once the turn has paused or ended and its last write has landed.
 *
 * Every replica also sweeps, every half TTL (jittered, so that replicas spread out): a lapsed
 * lease is claimed by exactly one of them, which fails the task if it still reads as running
 * ("the replica running this task stopped", reason `replica_lost`), stores it, publishes the
 * final event on the bus (so subscribers on every replica see it) and reports it (audit). A task
 * that paused for its caller or a person, or ended, holds no lease and is never failed here.
 *
 * A replica that finds one of its own leases claimed by another (it stood still for longer than
 * the TTL) stops that turn: the task was already failed elsewhere, and a second writer must not
 * bring it back.
 *
 * @example
 * ```ts
 * const keeper = new TurnLeaseKeeper(parts, { leases: store.leases!, replicaId, ttlMs: 30_000 }, stop);
 * parts.live.listener = keeper;
 * keeper.start();
 * ```
 */
import { randomBytes } from 'node:crypto';
import type { Task } from '../../protocol/model.js';
import type { LapsedLease, TurnLeases } from '../stores/leases.js';
import { isRunningState, statusEvent, withStatus } from './lifecycle.js';
import type { LiveTask, LiveTurnListener } from './live.js';
import { describe } from './log.js';
import type { ServiceParts } from './parts.js';

/**
 * What a failed task says when the replica running it stopped.
 *
 * @example
 * ```ts
 * assert.equal(task.status.message?.parts[0]?.text, REPLICA_LOST_TEXT);
 * ```
 */
export const REPLICA_LOST_TEXT = 'The replica running this task stopped before it finished; send the message again.';

/** Lapsed leases claimed per sweep statement. */
const SWEEP_BATCH = 100;

/**
 * How a service holds turn leases (TaskServiceOptions.leases).
 *
 * @example
 * ```ts
 * const options: TurnLeaseOptions = { leases: store.leases!, ttlMs: 30_000, onLapsed: (owner, task) => audit.restartFailed(owner, task, 'replica_lost') };
 * ```
 */
export interface TurnLeaseOptions {
  leases: TurnLeases;
  /** A lease not renewed for this long has lapsed (`store.leaseSeconds`). */
  ttlMs: number;
  /** This replica's id in the lease rows. Default: random. */
  replicaId?: string;
  /** Renewal period. Default ttlMs / 3. */
  renewMs?: number;
  /** Mean sweep period (each one jittered ±25 %). Default ttlMs / 2. */
  sweepMs?: number;
  /** Told of each task this replica failed because its replica stopped (audit). */
  onLapsed?: (owner: string, task: Task) => void;
}

/** One lease this replica holds: whether its take landed (renewal skips it until then). */
interface Held {
  readonly owner: string;
  taken: boolean;
  /** A take is under way (a failed one is tried again at the next renewal). */
  taking: boolean;
}

/**
 * Takes, renews and releases this replica's turn leases, and sweeps lapsed ones (see the
 * module comment). `stopLost` ends a turn running here whose lease another replica claimed.
 *
 * @example
 * ```ts
 * const keeper = new TurnLeaseKeeper(parts, options, (live) => bridge.stop(live, error, 'failed', REPLICA_LOST_TEXT, 'replica_lost'));
 * ```
 */
export class TurnLeaseKeeper implements LiveTurnListener {
  readonly replicaId: string;
  readonly #parts: ServiceParts;
  readonly #leases: TurnLeases;
  readonly #ttlMs: number;
  readonly #renewMs: number;
  readonly #sweepMs: number;
  readonly #onLapsed: ((owner: string, task: Task) => void) | undefined;
  readonly #stopLost: (live: LiveTask) => void;
  /** The leases held here, by task id. */
  readonly #held = new Map<string, Held>();
  /** Each task's lease statements in order (a release never overtakes the take before it). */
  readonly #chains = new Map<string, Promise<void>>();
  #renewTimer: NodeJS.Timeout | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #renewing = false;
  #sweeping: Promise<void> | undefined;
  /** The store failed: logged once until a statement succeeds again. */
  #failing = false;
  #closed = false;

  constructor(parts: ServiceParts, options: TurnLeaseOptions, stopLost: (live: LiveTask) => void) {
    this.#parts = parts;
    this.#leases = options.leases;
    this.#ttlMs = options.ttlMs;
    this.#renewMs = options.renewMs ?? Math.max(1, Math.floor(options.ttlMs / 3));
    this.#sweepMs = options.sweepMs ?? Math.max(1, Math.floor(options.ttlMs / 2));
    if (!(Number.isSafeInteger(this.#ttlMs) && this.#ttlMs >= 100))
      throw new RangeError('ttlMs must be an integer ≥ 100');
    if (this.#renewMs >= this.#ttlMs) throw new RangeError('renewMs must be below ttlMs');
    this.replicaId = options.replicaId ?? randomBytes(8).toString('hex');
    this.#onLapsed = options.onLapsed;
    this.#stopLost = stopLost;
  }

  /** Starts renewing and sweeping (timers that never keep the process alive). */
  start(): void {
    if (this.#closed || this.#renewTimer !== undefined) return;
    this.#renewTimer = setInterval(() => this.#renew(), this.#renewMs).unref();
    this.#scheduleSweep();
  }

  /** How many leases this replica holds (tests, metrics). */
  get held(): number {
    return this.#held.size;
  }

  /** A turn started running here: its lease is taken (in the background; see Held.taken). */
  started(live: LiveTask): void {
    const held: Held = { owner: live.owner, taken: false, taking: false };
    this.#held.set(live.task.id, held);
    this.#take(live.task.id, held);
  }

  #take(taskId: string, held: Held): void {
    held.taking = true;
    this.#chain(taskId, async () => {
      try {
        // Released meanwhile: nothing to take.
        if (this.#held.get(taskId) !== held) return;
        await this.#leases.take(taskId, held.owner, this.replicaId, this.#ttlMs);
        held.taken = true;
      } finally {
        held.taking = false;
      }
    });
  }

  /** The turn paused or ended here: its lease goes once its last write has landed. */
  ended(live: LiveTask): void {
    const taskId = live.task.id;
    this.#held.delete(taskId);
    const written = live.writes;
    this.#chain(taskId, async () => {
      await written;
      await this.#leases.release(taskId, this.replicaId);
    });
  }

  /** Stops the timers and waits for the lease statements under way. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#renewTimer);
    clearTimeout(this.#sweepTimer);
    this.#renewTimer = undefined;
    this.#sweepTimer = undefined;
    await this.#sweeping;
    await Promise.allSettled([...this.#chains.values()]);
  }

  /**
   * One sweep: claims lapsed leases and settles each (see the module comment). Resolves with the
   * tasks it failed. For tests; the timer calls it too.
   */
  async sweep(): Promise<string[]> {
    const claimed = await this.#leases.sweepLapsed(this.replicaId, this.#ttlMs, SWEEP_BATCH);
    const failed: string[] = [];
    for (const lapsed of claimed) {
      if (await this.#settle(lapsed)) failed.push(lapsed.taskId);
    }
    return failed;
  }

  /** Fails a claimed task if it still reads as running; drops its lease either way. */
  async #settle(lapsed: LapsedLease): Promise<boolean> {
    const { taskId, owner } = lapsed;
    if (this.#held.has(taskId)) return false; // Our own turn (we stood still): renewed from now on.
    const { store, bus, log, timestamp } = this.#parts;
    const task = await store.get(owner, taskId);
    let failed: Task | undefined;
    if (task !== undefined && isRunningState(task.status.state)) {
      failed = withStatus(task, 'failed', timestamp(), REPLICA_LOST_TEXT);
      await store.put(owner, failed);
      bus.publish(taskId, statusEvent(failed, true));
      log('warn', 'turn_lease_lapsed', { taskId, replica: lapsed.replicaId });
      this.#onLapsed?.(owner, failed);
    }
    this.#chain(taskId, () => this.#leases.release(taskId, this.replicaId));
    return failed !== undefined;
  }

  #renew(): void {
    if (this.#renewing || this.#closed) return;
    const ids: string[] = [];
    for (const [taskId, held] of this.#held) {
      if (held.taken) ids.push(taskId);
      else if (!held.taking) this.#take(taskId, held);
    }
    if (ids.length === 0) return;
    this.#renewing = true;
    this.#leases
      .renew(this.replicaId, ids, this.#ttlMs)
      .then(
        (lost) => {
          this.#succeeded();
          for (const taskId of lost) this.#lost(taskId);
        },
        (error: unknown) => this.#failed(error),
      )
      .finally(() => {
        this.#renewing = false;
      });
  }

  /** Another replica claimed this turn's lease: the task was failed there, so the turn stops here. */
  #lost(taskId: string): void {
    const held = this.#held.get(taskId);
    // Released meanwhile, or taken again by a later turn whose take has not landed yet.
    if (held === undefined || !held.taken) return;
    const live = this.#parts.live.get(taskId);
    this.#held.delete(taskId);
    if (live === undefined) return;
    this.#parts.log('warn', 'turn_lease_lost', { taskId });
    this.#stopLost(live);
  }

  #scheduleSweep(): void {
    if (this.#closed) return;
    const delay = Math.max(1, Math.round(this.#sweepMs * (0.75 + Math.random() * 0.5)));
    this.#sweepTimer = setTimeout(() => {
      this.#sweeping = this.sweep()
        .then(
          () => this.#succeeded(),
          (error: unknown) => this.#failed(error),
        )
        .finally(() => {
          this.#sweeping = undefined;
          this.#scheduleSweep();
        });
    }, delay).unref();
  }

  #chain(taskId: string, step: () => Promise<void>): void {
    const previous = this.#chains.get(taskId) ?? Promise.resolve();
    const next = previous.then(step).catch((error: unknown) => this.#failed(error));
    this.#chains.set(taskId, next);
    void next.then(() => {
      if (this.#chains.get(taskId) === next) this.#chains.delete(taskId);
    });
  }

  #succeeded(): void {
    if (!this.#failing) return;
    this.#failing = false;
    this.#parts.log('warn', 'turn_leases_recovered', {});
  }

  /** A lease statement failed (the store is down): the next period tries again. */
  #failed(error: unknown): void {
    if (this.#failing) return;
    this.#failing = true;
    this.#parts.log('warn', 'turn_leases_unavailable', { error: describe(error) });
  }
}
