/**
 * The registry's one error class and the shape of a registry name: every registry problem is a
 * `RegistryError` naming the entry and key, in one line.
 *
 * @example
 * ```ts
 * throw new RegistryError('agents[0] "travel"', 'card_url', 'must be an https URL');
 * ```
 */
import { AirlockError } from '../../errors/index.js';

/**
 * What a registry name must look like: the same shape as an inbound agent slug.
 *
 * @example
 * ```ts
 * REGISTRY_NAME_PATTERN.test('travel-desk'); // true
 * ```
 */
export const REGISTRY_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * A registry problem, in one line: `registry: agents[1] "travel": auth.bearer_env: …`. The
 * message names keys and environment variables, never a secret's value.
 *
 * @example
 * ```ts
 * try { parseRegistry(text, env); } catch (e) { if (e instanceof RegistryError) console.error(e.message); }
 * ```
 */
export class RegistryError extends AirlockError {
  readonly code = 'REGISTRY_INVALID';
  /** The entry's name (or `agents[i]` before a name is known); empty for file-level problems. */
  readonly entry: string;
  /** Dotted key inside the entry (or the environment variable), e.g. `auth.bearer_env`. */
  readonly key: string;

  constructor(entry: string, key: string, problem: string) {
    const where = [entry, key].filter((part) => part.length > 0).join(': ');
    super(oneLine(`registry: ${where.length > 0 ? `${where}: ` : ''}${problem}`));
    this.entry = entry;
    this.key = key;
  }
}

/**
 * Text on one line: control characters and line separators become a space, so a message (or a
 * value quoted in it) cannot forge a second log line.
 *
 * @example
 * ```ts
 * oneLine('a\nb'); // 'a b'
 * ```
 */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
}
