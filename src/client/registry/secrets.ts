/**
 * Registry secrets: an entry's bearer token, read from an `AIRLOCK_SECRET_*` environment
 * variable at load and held so that no printed form of an entry shows it.
 *
 * @example
 * ```ts
 * const auth = resolveSecret('AIRLOCK_SECRET_TRAVEL', label, process.env);
 * headers.authorization = auth.header();
 * ```
 */
import { inspect } from 'node:util';
import { MIN_SECRET_LENGTH } from '../../content/redact.js';
import { RegistryError } from './error.js';

/**
 * Prefix every `bearer_env` must carry: secrets meant for remotes live in their own namespace,
 * so an entry cannot be pointed at an unrelated variable (a cloud key, say) and ship it out.
 *
 * @example
 * ```ts
 * 'AIRLOCK_SECRET_TRAVEL'.startsWith(SECRET_ENV_PREFIX); // true
 * ```
 */
export const SECRET_ENV_PREFIX = 'AIRLOCK_SECRET_';

/**
 * A bearer token for one entry, read from the environment at startup. The value sits in a
 * private field so that logging, `JSON.stringify` or `util.inspect` of an entry never prints
 * it; only {@link BearerSecret.header} (for the request) and
 * {@link BearerSecret.valueForRedaction} (to scrub an echo from a reply) read it.
 *
 * @example
 * ```ts
 * headers.authorization = entry.auth.header(); // 'Bearer …'
 * String(entry.auth);                         // '[secret from AIRLOCK_SECRET_TRAVEL]'
 * ```
 */
export class BearerSecret {
  /** The environment variable it came from (safe to show). */
  readonly env: string;
  readonly #value: string;

  constructor(env: string, value: string) {
    this.env = env;
    this.#value = value;
  }

  /** The `Authorization` header value. */
  header(): string {
    return `Bearer ${this.#value}`;
  }

  /** The raw value, for redacting an echo of it; never for output. */
  valueForRedaction(): string {
    return this.#value;
  }

  toString(): string {
    return `[secret from ${this.env}]`;
  }

  toJSON(): { bearer_env: string } {
    return { bearer_env: this.env };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** Token characters we are willing to put in a header: printable ASCII, no spaces (RFC 6750 b64token and more). */
const TOKEN_PATTERN = /^[\x21-\x7e]{1,8192}$/;
const SECRET_ENV_PATTERN = /^AIRLOCK_SECRET_[A-Z0-9_]{1,100}$/;

/**
 * An entry's `auth.bearer_env`, read from the environment now: the variable must be in the
 * `AIRLOCK_SECRET_` namespace, set, printable ASCII without spaces, and long enough to redact.
 *
 * @example
 * ```ts
 * const auth = resolveSecret('AIRLOCK_SECRET_TRAVEL', 'agents[0] "travel"', process.env);
 * ```
 * @throws RegistryError naming the variable, never its value
 */
export function resolveSecret(name: string, label: string, env: NodeJS.ProcessEnv): BearerSecret {
  if (!SECRET_ENV_PATTERN.test(name)) {
    throw new RegistryError(
      label,
      'auth.bearer_env',
      `must name an environment variable starting with ${SECRET_ENV_PREFIX} (upper case, digits, _)`,
    );
  }
  const value = env[name];
  if (value === undefined || value.length === 0) {
    throw new RegistryError(label, 'auth.bearer_env', `environment variable ${name} is not set`);
  }
  // The value is never echoed: only what is wrong with it.
  if (!TOKEN_PATTERN.test(value)) {
    throw new RegistryError(
      label,
      'auth.bearer_env',
      `environment variable ${name} must hold printable ASCII without spaces or line breaks`,
    );
  }
  // Replies are scrubbed of the token; the scrubber skips values this short (too many false hits).
  if (value.length < MIN_SECRET_LENGTH) {
    throw new RegistryError(
      label,
      'auth.bearer_env',
      `environment variable ${name} must hold at least ${MIN_SECRET_LENGTH} characters, so that an echo of it can be redacted`,
    );
  }
  return new BearerSecret(name, value);
}
