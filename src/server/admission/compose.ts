/**
 * How admission steps are put together. A step takes the request as admitted so far and
 * either passes it on (possibly with more known about it) or refuses it: it sends the
 * response itself and answers {@link REFUSED}. A step answers at once when it can (the local
 * limiters, a static token) and with a promise only when it must wait (a limit shared by
 * replicas, a JWT key fetch, the body). This file is the one place that tells the two apart:
 * a chain of steps that all answer at once runs without a single microtask.
 *
 * @example
 * ```ts
 * const admit = compose(lockout, authenticate, rate);
 * const admitted = admit(inbound); // a value, REFUSED, or a promise of either
 * ```
 */

/**
 * What a step answers once it has refused the request (the response is sent).
 *
 * @example
 * ```ts
 * if (locked > 0) { refuse(res, 429, …); return REFUSED; }
 * ```
 */
export const REFUSED: unique symbol = Symbol('refused');

/** The type of {@link REFUSED}. */
export type Refused = typeof REFUSED;

/**
 * A step's answer: the value passed on, or REFUSED; at once, or later.
 *
 * @example
 * ```ts
 * const outcome: Outcome<Principal> = principal ?? REFUSED;
 * ```
 */
export type Outcome<T> = T | Refused | Promise<T | Refused>;

/**
 * One admission step.
 *
 * @example
 * ```ts
 * const onlyPost: Step<Inbound, Inbound> = (inbound) => (inbound.req.method === 'POST' ? inbound : REFUSED);
 * ```
 */
export type Step<I, O> = (input: I) => Outcome<O>;

/**
 * `next` applied to `value` once it is there: at once for a value, after it settles for a
 * promise. What a step uses when it asks a limiter that may answer either way.
 *
 * @example
 * ```ts
 * return andThen(rates.take(key, now), (wait) => (wait === true ? inbound : tooMany(inbound, wait)));
 * ```
 */
export function andThen<T, R>(value: T | Promise<T>, next: (settled: T) => Outcome<R>): Outcome<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * Steps run one after the other, each on what the one before passed on; the first refusal
 * ends the chain. Synchronous as long as every step is.
 *
 * @example
 * ```ts
 * const admitCaller = compose(lockout, authenticate, rate);
 * const admitRpc = compose(admitCaller, readJson);
 * ```
 */
export function compose<A, B, C>(first: Step<A, B>, second: Step<B, C>): Step<A, C>;
export function compose<A, B, C, D>(first: Step<A, B>, second: Step<B, C>, third: Step<C, D>): Step<A, D>;
export function compose<A, B, C, D, E>(
  first: Step<A, B>,
  second: Step<B, C>,
  third: Step<C, D>,
  fourth: Step<D, E>,
): Step<A, E>;
export function compose<A, B, C, D, E, F>(
  first: Step<A, B>,
  second: Step<B, C>,
  third: Step<C, D>,
  fourth: Step<D, E>,
  fifth: Step<E, F>,
): Step<A, F>;
export function compose(...steps: Step<unknown, unknown>[]): Step<unknown, unknown> {
  return (input) => runFrom(steps, 0, input);
}

function runFrom(steps: readonly Step<unknown, unknown>[], start: number, input: unknown): Outcome<unknown> {
  let value = input;
  for (let index = start; index < steps.length; index++) {
    const outcome = (steps[index] as Step<unknown, unknown>)(value);
    if (outcome === REFUSED) return REFUSED;
    if (outcome instanceof Promise) {
      // The last step's promise is the chain's own: no extra turn of the loop for it.
      if (index === steps.length - 1) return outcome;
      const next = index + 1;
      return outcome.then((settled) => (settled === REFUSED ? REFUSED : runFrom(steps, next, settled)));
    }
    value = outcome;
  }
  return value;
}
