/**
 * What the command backend's program sees besides its arguments: its environment and its stdin.
 * Nothing of Airlock's own environment reaches it unless the config names it, so a token or key
 * in Airlock's environment cannot leak into a program (or whatever that program runs) by default.
 *
 * @example
 * ```ts
 * const env = commandEnvironment(config, turn, process.env);
 * // { LANG: 'C.UTF-8', HOME: '/home/airlock', AIRLOCK_TASK_ID: '…', AIRLOCK_CONTEXT_ID: '…',
 * //   AIRLOCK_SESSION_ID: 'a2a-…', AIRLOCK_RESUMED: '0' }
 * const stdin = commandStdin(config.input, turn);
 * ```
 */
import type { CommandBackendConfig } from './schema.js';
import { textOf, type AgentTurn } from '../backend.js';
import { buildInboundPrompt } from '../inbound/prompt.js';

/**
 * The names Airlock sets for every run, after `env` and `passEnv`, so a program can rely on them.
 *
 * @example
 * ```ts
 * AIRLOCK_VARIABLES.includes('AIRLOCK_TASK_ID'); // true
 * ```
 */
export const AIRLOCK_VARIABLES = [
  'AIRLOCK_TASK_ID',
  'AIRLOCK_CONTEXT_ID',
  'AIRLOCK_SESSION_ID',
  'AIRLOCK_RESUMED',
] as const;

/**
 * The program's whole environment, built in this order (a later step wins on the same name):
 * 1. each `passEnv` name that is set in `parentEnv`, copied;
 * 2. `config.env`, as written (its `${VAR}` were expanded by the config loader);
 * 3. `AIRLOCK_TASK_ID`, `AIRLOCK_CONTEXT_ID`, `AIRLOCK_SESSION_ID` and `AIRLOCK_RESUMED` (`1` on
 *    a turn that answers an input-required question, else `0`).
 *
 * Nothing else: no PATH, HOME or LANG unless named.
 *
 * @example
 * ```ts
 * commandEnvironment({ env: { MODE: 'fast' }, passEnv: ['HOME', 'UNSET'] }, turn, { HOME: '/root', SECRET: 'x' });
 * // { HOME: '/root', MODE: 'fast', AIRLOCK_TASK_ID: 'task-1', …, AIRLOCK_RESUMED: '0' }
 * ```
 */
export function commandEnvironment(
  config: Pick<CommandBackendConfig, 'env' | 'passEnv'>,
  turn: Pick<AgentTurn, 'taskId' | 'contextId' | 'sessionId' | 'resumed'>,
  parentEnv: NodeJS.ProcessEnv,
): Record<string, string> {
  // A null-prototype object: a variable named `__proto__` or `constructor` stays a plain entry.
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of config.passEnv) {
    // Own string values only: `toString` or `constructor` must not come from the prototype.
    const value = Object.hasOwn(parentEnv, name) ? parentEnv[name] : undefined;
    if (typeof value === 'string') env[name] = value;
  }
  for (const [name, value] of Object.entries(config.env)) env[name] = value;
  env.AIRLOCK_TASK_ID = turn.taskId;
  env.AIRLOCK_CONTEXT_ID = turn.contextId;
  env.AIRLOCK_SESSION_ID = turn.sessionId;
  env.AIRLOCK_RESUMED = turn.resumed ? '1' : '0';
  return env;
}

/**
 * What the program reads on stdin:
 * - `text`: the caller's text as sent (the text parts of the message, joined by newlines);
 * - `prompt`: the framed prompt a model would get, `system`, a blank line, then `user` (the
 *   caller's text inside the untrusted-content markers); built from the text when the turn has
 *   no prompt of its own.
 *
 * @example
 * ```ts
 * commandStdin('text', turn);   // 'hello'
 * commandStdin('prompt', turn); // 'The request in this conversation comes from A2A Agent, …\n\nSECURITY NOTICE: …'
 * ```
 */
export function commandStdin(input: CommandBackendConfig['input'], turn: AgentTurn): string {
  if (input === 'text') return textOf(turn.message);
  const prompt = turn.prompt ?? buildInboundPrompt(textOf(turn.message));
  return `${prompt.system}\n\n${prompt.user}`;
}
