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
 * One problem of a registry file: the entry (`agents[1] "travel"`, or empty for the file), the
 * key, what is wrong, and the whole line as printed.
 *
 * @example
 * ```ts
 * const problem: RegistryProblem = { entry: 'agents[0] "travel"', key: 'card_url', problem: 'must be an https URL',
 *   line: 'registry: agents[0] "travel": card_url: must be an https URL' };
 * ```
 */
export interface RegistryProblem {
  readonly entry: string;
  readonly key: string;
  readonly problem: string;
  readonly line: string;
}

/**
 * A registry problem, in one line: `registry: agents[1] "travel": auth.bearer_env: …`. The
 * message names keys and environment variables, never a secret's value. Loading a file reports
 * every problem it finds at once ({@link RegistryError.all}): then `problems` lists them and the
 * message holds one such line per problem (the first problem's line first).
 *
 * @example
 * ```ts
 * try { parseRegistry(text, env); } catch (e) { if (e instanceof RegistryError) console.error(e.message); }
 * ```
 */
export class RegistryError extends AirlockError {
  readonly code = 'REGISTRY_INVALID';
  /** The entry's name (or `agents[i]` before a name is known); empty for file-level problems. Of the first problem. */
  readonly entry: string;
  /** Dotted key inside the entry (or the environment variable), e.g. `auth.bearer_env`. Of the first problem. */
  readonly key: string;
  /** Every problem this error reports, in file order; one for an error built with `new`. */
  readonly problems: readonly RegistryProblem[];

  constructor(entry: string, key: string, problem: string, alsoFound: readonly RegistryProblem[] = []) {
    const first = problemLine(entry, key, problem);
    // Each line is one line on its own (oneLine), so joining them cannot forge anything else.
    super([first, ...alsoFound].map((found) => found.line).join('\n'));
    this.entry = entry;
    this.key = key;
    this.problems = Object.freeze([first, ...alsoFound]);
  }

  /**
   * One error reporting every problem of `errors` (each may hold several), in order.
   *
   * @example
   * ```ts
   * throw RegistryError.all([new RegistryError(label, 'card_url', 'must be an https URL'), secretError]);
   * ```
   */
  static all(errors: readonly RegistryError[]): RegistryError {
    const [first, ...rest] = errors.flatMap((error) => error.problems);
    if (first === undefined) return new RegistryError('', '', 'invalid registry');
    if (errors.length === 1) return errors[0]!;
    return new RegistryError(first.entry, first.key, first.problem, rest);
  }
}

function problemLine(entry: string, key: string, problem: string): RegistryProblem {
  const where = [entry, key].filter((part) => part.length > 0).join(': ');
  return { entry, key, problem, line: oneLine(`registry: ${where.length > 0 ? `${where}: ` : ''}${problem}`) };
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

/**
 * A checker that keeps going: `check(run)` runs one check and returns its value, or, when it
 * throws a RegistryError, keeps that error in `problems` and returns undefined, so that a
 * file's every problem is reported at once ({@link RegistryError.all}). Other errors propagate.
 *
 * @example
 * ```ts
 * const problems: RegistryError[] = [];
 * const check = collectProblems(problems);
 * const url = check(() => checkUrl(raw.card_url, label, 'card_url'));
 * if (problems.length > 0) throw RegistryError.all(problems);
 * ```
 */
export function collectProblems(problems: RegistryError[]): <T>(run: () => T) => T | undefined {
  return (run) => {
    try {
      return run();
    } catch (error) {
      if (!(error instanceof RegistryError)) throw error;
      problems.push(error);
      return undefined;
    }
  };
}
