/**
 * Which upstream ids an inbound conversation maps to. An inbound session (one caller, one
 * agent, one contextId: `turn.sessionId`) talks to one upstream context; an inbound task that
 * is waiting for input continues one upstream task. Both maps are keyed by the session, so two
 * callers who pick the same contextId never share an upstream context, and bounded (least
 * recently used entries go first), so a flood of sessions cannot grow memory without limit.
 *
 * Kept in memory: after a restart, the next turn of a session starts a new upstream context,
 * and an inbound task waiting for input can no longer be continued (the turn fails and says so).
 *
 * @example
 * ```ts
 * const ids = new UpstreamIds();
 * ids.rememberContext(turn.sessionId, 'up-ctx-1');
 * ids.contextOf(turn.sessionId); // 'up-ctx-1'
 * ```
 */

/**
 * How many sessions (and, separately, how many waiting tasks) are remembered by default.
 *
 * @example
 * ```ts
 * new UpstreamIds(DEFAULT_MAX_SESSIONS);
 * ```
 */
export const DEFAULT_MAX_SESSIONS = 10_000;

/**
 * Longest upstream id remembered, in characters. Ids are the upstream's to choose; a longer one
 * is not kept (it would make the bounded maps unbounded in bytes).
 *
 * @example
 * ```ts
 * if (id.length > MAX_UPSTREAM_ID_CHARS) refuse();
 * ```
 */
export const MAX_UPSTREAM_ID_CHARS = 512;

/**
 * Artifacts remembered per waiting task, for {@link WaitingTask.relayed}; beyond that, the
 * oldest are forgotten (their text may be relayed again when the task continues).
 */
const MAX_REMEMBERED_ARTIFACTS = 64;

/**
 * Longest remote question remembered for a waiting task, in characters (the relay cuts a longer
 * one to this length before it hands it to the person, so what is remembered is what was asked).
 *
 * @example
 * ```ts
 * if (question.length > MAX_REMEMBERED_QUESTION_CHARS) cut();
 * ```
 */
export const MAX_REMEMBERED_QUESTION_CHARS = 8192;

/**
 * A map that keeps at most `limit` entries: reading or writing an entry makes it the newest,
 * and adding one beyond the limit drops the oldest.
 *
 * @example
 * ```ts
 * const lru = new BoundedMap<string, number>(2);
 * lru.set('a', 1); lru.set('b', 2); lru.get('a'); lru.set('c', 3);
 * lru.has('b'); // false: the least recently used went first
 * ```
 */
export class BoundedMap<K, V> {
  readonly #limit: number;
  // A Map iterates in insertion order: re-inserting on use keeps the oldest first.
  readonly #entries = new Map<K, V>();

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('BoundedMap: limit must be a positive integer');
    this.#limit = limit;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.#limit) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }
}

/**
 * An upstream task that waits for input, as remembered for the inbound task that relays it.
 *
 * @example
 * ```ts
 * const waiting: WaitingTask = { taskId: 'up-1', contextId: 'up-ctx', relayed: [['a-1', 12]] };
 * ```
 */
export interface WaitingTask {
  readonly taskId: string;
  readonly contextId: string;
  /**
   * Per upstream artifact id, how many characters of its text were relayed already: when the
   * task continues, a snapshot that repeats them does not relay them twice.
   */
  readonly relayed: readonly (readonly [artifactId: string, chars: number])[];
  /**
   * The question the upstream task asked, filtered, when it goes to a person (`askPerson`): a
   * resumed turn without the person's answer asks it again instead of relaying the caller's reply.
   */
  readonly question?: RememberedQuestion;
}

/**
 * A waiting upstream task's question, as handed to the person (see {@link WaitingTask.question}).
 *
 * @example
 * ```ts
 * const question: RememberedQuestion = { text: 'Which day?', state: 'input-required' };
 * ```
 */
export interface RememberedQuestion {
  /** Already filtered as untrusted text; at most {@link MAX_REMEMBERED_QUESTION_CHARS}. */
  readonly text: string;
  readonly state: 'input-required' | 'auth-required';
}

/**
 * The two bounded maps: session → upstream context, and (session, inbound task) → the upstream
 * task waiting for input.
 *
 * @example
 * ```ts
 * const ids = new UpstreamIds(1000);
 * ids.rememberWaiting(turn.sessionId, turn.taskId, { taskId: 'up-1', contextId: 'up-ctx', relayed: [] });
 * ids.waitingOf(turn.sessionId, turn.taskId)?.taskId; // 'up-1'
 * ```
 */
export class UpstreamIds {
  readonly #contexts: BoundedMap<string, string>;
  readonly #waiting: BoundedMap<string, WaitingTask>;

  constructor(maxEntries = DEFAULT_MAX_SESSIONS) {
    this.#contexts = new BoundedMap(maxEntries);
    this.#waiting = new BoundedMap(maxEntries);
  }

  /** The upstream context of this inbound session, if one was learned. */
  contextOf(sessionId: string): string | undefined {
    return this.#contexts.get(sessionId);
  }

  /** Remembers (or replaces) the session's upstream context; ids that are not usable are ignored. */
  rememberContext(sessionId: string, contextId: string | undefined): void {
    if (contextId === undefined || !isUsableUpstreamId(contextId)) return;
    this.#contexts.set(sessionId, contextId);
  }

  /** The upstream task this inbound task waits on, if it is remembered. */
  waitingOf(sessionId: string, taskId: string): WaitingTask | undefined {
    return this.#waiting.get(taskKey(sessionId, taskId));
  }

  rememberWaiting(sessionId: string, taskId: string, waiting: WaitingTask): void {
    const relayed = waiting.relayed.slice(-MAX_REMEMBERED_ARTIFACTS);
    const { question } = waiting;
    // Bounded in bytes too: the relay cuts questions to this length already; this is a backstop.
    const kept =
      question === undefined || question.text.length <= MAX_REMEMBERED_QUESTION_CHARS
        ? question
        : { ...question, text: question.text.slice(0, MAX_REMEMBERED_QUESTION_CHARS) };
    this.#waiting.set(taskKey(sessionId, taskId), {
      taskId: waiting.taskId,
      contextId: waiting.contextId,
      relayed,
      ...(kept !== undefined && { question: kept }),
    });
  }

  /** The inbound task no longer waits (it ended, or it continues now). */
  forgetWaiting(sessionId: string, taskId: string): void {
    this.#waiting.delete(taskKey(sessionId, taskId));
  }
}

/**
 * True when an upstream id can be remembered and sent back: a non-empty string of at most
 * {@link MAX_UPSTREAM_ID_CHARS} characters.
 *
 * @example
 * ```ts
 * isUsableUpstreamId('3f2c9a70-1b2d-4c5e-8f90-1234567890ab'); // true
 * isUsableUpstreamId('x'.repeat(10_000));                      // false
 * ```
 */
export function isUsableUpstreamId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_UPSTREAM_ID_CHARS;
}

/** Session ids never contain a line break, so the pair cannot be forged from either half. */
function taskKey(sessionId: string, taskId: string): string {
  return `${sessionId}\n${taskId}`;
}
