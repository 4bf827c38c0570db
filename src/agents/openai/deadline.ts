/**
 * The clock of one turn: the first-token and total timeouts and the turn's cancellation, folded
 * into the one AbortSignal the HTTP request is given. Both timeouts count from the first
 * request's start; the total one spans the whole turn (every request of the tool loop and every
 * tool call between them), the first-token one restarts with each request
 * ({@link TurnDeadline.requestStarted}). When a timer fires, the request is aborted and
 * {@link TurnDeadline.failure} says why, so that the error undici then throws (an abort, in its
 * words) is reported in ours.
 *
 * @example
 * ```ts
 * const deadline = new TurnDeadline(turn.signal, { firstTokenMs: 60_000, totalMs: 300_000 });
 * try {
 *   await request({ signal: deadline.signal });
 *   deadline.tokenArrived();
 * } catch (error) {
 *   throw deadline.failure ?? error;
 * } finally {
 *   deadline.dispose();
 * }
 * ```
 */
import { firstTokenTimeoutError, totalTimeoutError, type OpenAiTurnError } from './errors.js';

/**
 * The two timeouts of a turn, in milliseconds.
 *
 * @example
 * ```ts
 * const timeouts: TurnTimeouts = { firstTokenMs: 200, totalMs: 1_000 };
 * ```
 */
export interface TurnTimeouts {
  readonly firstTokenMs: number;
  readonly totalMs: number;
}

/**
 * Starts both timers at once (construct it when the request starts); {@link dispose} stops them
 * and aborts whatever the request left open.
 *
 * @example
 * ```ts
 * const deadline = new TurnDeadline(turn.signal, config.timeouts);
 * ```
 */
export class TurnDeadline {
  readonly #controller = new AbortController();
  readonly #turnSignal: AbortSignal;
  #failure: OpenAiTurnError | undefined;
  #firstTokenTimer: NodeJS.Timeout | undefined;
  readonly #firstTokenMs: number;
  readonly #totalTimer: NodeJS.Timeout;
  readonly #onTurnAbort = (): void => this.#controller.abort(this.#turnSignal.reason);

  constructor(turnSignal: AbortSignal, timeouts: TurnTimeouts) {
    this.#turnSignal = turnSignal;
    this.#firstTokenMs = timeouts.firstTokenMs;
    this.#firstTokenTimer = this.#startFirstToken();
    this.#totalTimer = setTimeout(() => this.#fail(totalTimeoutError(timeouts.totalMs)), timeouts.totalMs);
    if (turnSignal.aborted) this.#onTurnAbort();
    else turnSignal.addEventListener('abort', this.#onTurnAbort, { once: true });
  }

  /** Aborted when the turn is canceled, a timeout fires, or the deadline is disposed. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The timeout that fired, if one did (cancellation is not a failure and leaves this unset). */
  get failure(): OpenAiTurnError | undefined {
    return this.#failure;
  }

  /**
   * The first token arrived: the first-token timer stops (the total one runs on). Idempotent.
   *
   * @example
   * ```ts
   * if (event.type === 'token') deadline.tokenArrived();
   * ```
   */
  tokenArrived(): void {
    if (this.#firstTokenTimer === undefined) return;
    clearTimeout(this.#firstTokenTimer);
    this.#firstTokenTimer = undefined;
  }

  /**
   * The next request of the same turn starts (the tool loop asks the model again): the
   * first-token timer starts over; the total one runs on. Does nothing once the deadline fired.
   *
   * @example
   * ```ts
   * deadline.tokenArrived(); // the answer asked for tools: no timer while they run
   * await runTools();
   * deadline.requestStarted();
   * ```
   */
  requestStarted(): void {
    if (this.#controller.signal.aborted) return;
    this.tokenArrived();
    this.#firstTokenTimer = this.#startFirstToken();
  }

  /**
   * Stops the timers, forgets the turn's signal, and aborts the request if anything of it is still
   * open (a body left unread after `[DONE]`): nothing of the turn outlives it. Idempotent.
   *
   * @example
   * ```ts
   * try { … } finally { deadline.dispose(); }
   * ```
   */
  dispose(): void {
    this.tokenArrived();
    clearTimeout(this.#totalTimer);
    this.#turnSignal.removeEventListener('abort', this.#onTurnAbort);
    if (!this.#controller.signal.aborted) this.#controller.abort(new Error('the turn is over'));
  }

  #startFirstToken(): NodeJS.Timeout {
    return setTimeout(() => this.#fail(firstTokenTimeoutError(this.#firstTokenMs)), this.#firstTokenMs);
  }

  #fail(failure: OpenAiTurnError): void {
    if (this.#controller.signal.aborted) return;
    this.#failure = failure;
    this.tokenArrived();
    clearTimeout(this.#totalTimer);
    this.#controller.abort(failure);
  }
}
