/**
 * Configuration errors: what is wrong and where, in one line a person can act on.
 *
 * @example
 * ```ts
 * throw new ConfigError('agents[0].slug', 'must match ^[a-z0-9][a-z0-9_-]{0,62}$');
 * ```
 */
import { AirlockError } from '../errors/index.js';
export class ConfigError extends AirlockError {
  readonly code = 'CONFIG_INVALID';
  /** Dotted path of the offending key, e.g. `clients[1].token`; empty for the whole file. */
  readonly key: string;
  /** What is wrong, without the key (the message is `config: <key>: <problem>`). */
  readonly problem: string;

  constructor(key: string, problem: string) {
    super(key.length > 0 ? `config: ${key}: ${problem}` : problem);
    this.key = key;
    this.problem = problem;
  }
}
