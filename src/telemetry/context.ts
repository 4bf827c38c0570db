/**
 * The active-context store of Airlock's spans: an OpenTelemetry `ContextManager` over Node's
 * `AsyncLocalStorage`, so a span started in a route stays the parent of what runs under it
 * (the turn, store writes, the backend's outbound calls) across awaits. Registered only by
 * {@link startTelemetry} when export is on: without it the API's no-op manager answers
 * `context.active()` with the root context and nothing is tracked (no async-hooks cost).
 *
 * @example
 * ```ts
 * context.setGlobalContextManager(new LocalContextManager().enable());
 * ```
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

/**
 * A context manager on `AsyncLocalStorage` (what `@opentelemetry/context-async-hooks` does,
 * without the dependency). Event emitters are not patched: Airlock never relies on a listener
 * seeing the context of whoever registered it.
 *
 * @example
 * ```ts
 * const manager = new LocalContextManager().enable();
 * manager.with(trace.setSpan(ROOT_CONTEXT, span), () => handle());
 * ```
 */
export class LocalContextManager implements ContextManager {
  #storage: AsyncLocalStorage<Context> | undefined;

  active(): Context {
    return this.#storage?.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const storage = this.#storage;
    if (storage === undefined) return fn.call(thisArg, ...args);
    return storage.run(context, () => fn.call(thisArg, ...args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const manager = this;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return function bound(this: unknown, ...args: unknown[]) {
      return manager.with(context, () => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    this.#storage ??= new AsyncLocalStorage<Context>();
    return this;
  }

  disable(): this {
    this.#storage?.disable();
    this.#storage = undefined;
    return this;
  }
}
