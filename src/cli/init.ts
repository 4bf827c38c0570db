/**
 * `airlock init [--dir D] [--port P] [--force]`: writes a commented starter config
 * (`airlock.yaml`: one echo agent on loopback, one client, the audit file on) and the client's
 * token into the state directory (`.airlock/client-token`, mode 0600), then prints the next
 * three commands: serve, call with the token, doctor. The token itself is never printed.
 *
 * An existing `airlock.yaml` is never replaced without `--force`; an existing token file is
 * kept (so a forced re-init does not lock out a caller that already has the token).
 *
 * Paths in the config are relative to the folder airlock runs in, as everywhere in Airlock, so
 * the printed commands are meant to be run in that folder.
 *
 * @example
 * ```sh
 * airlock init            # then: npx airlock serve --config airlock.yaml
 * airlock init --dir ./gw --port 41250
 * ```
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { generateToken, MIN_TOKEN_LENGTH } from '../config/tokens.js';
import { AirlockError } from '../errors/index.js';

/** The port the starter config listens on: next to the examples' 41241–41249, used by none of them. */
export const INIT_DEFAULT_PORT = 41240;

/** The starter config's file name, in the chosen folder. */
export const INIT_CONFIG_FILE = 'airlock.yaml';

/** The client's token file, relative to the chosen folder (the state directory `.airlock/`). */
export const INIT_TOKEN_FILE = '.airlock/client-token';

/**
 * Options of `airlock init`.
 *
 * @example
 * ```ts
 * const options: InitOptions = { dir: '/srv/airlock', port: 41250, force: false };
 * ```
 */
export interface InitOptions {
  /** The folder to write into (default: the working directory). */
  dir?: string;
  /** The port the gateway will listen on (default {@link INIT_DEFAULT_PORT}). */
  port?: number;
  /** Replace an existing `airlock.yaml`. */
  force?: boolean;
  /** The working directory the printed commands are relative to (default `process.cwd()`). */
  cwd?: string;
}

/**
 * Where `airlock init` writes its lines; tests pass their own.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const output: InitOutput = { stdout: (text) => lines.push(text), stderr: (text) => lines.push(text) };
 * ```
 */
export interface InitOutput {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const PROCESS_OUTPUT: InitOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/**
 * Why `airlock init` wrote nothing: an existing config, a bad port, a folder it cannot write.
 *
 * @example
 * ```ts
 * throw new InitError('init_config_exists', 'airlock.yaml already exists; …');
 * ```
 */
export class InitError extends AirlockError {
  readonly code: 'init_config_exists' | 'init_port_invalid';
  constructor(code: InitError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Runs `airlock init`; returns the exit code (0 written, 1 refused or failed, one line on stderr).
 *
 * @example
 * ```ts
 * process.exitCode = initCommand({ dir: 'gateway' });
 * ```
 */
export function initCommand(options: InitOptions = {}, output: InitOutput = PROCESS_OUTPUT): number {
  try {
    output.stdout(writeStarter(options).join('\n') + '\n');
    return 0;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message =
      error instanceof AirlockError
        ? error.message
        : `cannot write the starter config: ${typeof code === 'string' ? code : String(error)}`;
    output.stderr(`airlock: ${message}\n`);
    return 1;
  }
}

/**
 * Writes the starter config and token; returns the lines to print. Throws InitError (or a file
 * system error) having written nothing when the config is refused.
 *
 * @example
 * ```ts
 * const lines = writeStarter({ dir: mkdtempSync(join(tmpdir(), 'airlock-')) });
 * ```
 */
export function writeStarter(options: InitOptions = {}): string[] {
  const cwd = options.cwd ?? process.cwd();
  const dir = resolve(cwd, options.dir ?? '.');
  const port = options.port ?? INIT_DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InitError('init_port_invalid', `--port must be 1..65535 (a caller needs to know the port)`);
  }
  const configPath = join(dir, INIT_CONFIG_FILE);
  if (existsSync(configPath) && options.force !== true) {
    throw new InitError(
      'init_config_exists',
      `${shownPath(cwd, configPath)} already exists; nothing written (use --force to replace it)`,
    );
  }
  mkdirSync(join(dir, '.airlock'), { recursive: true, mode: 0o700 });
  const tokenPath = join(dir, INIT_TOKEN_FILE);
  const kept = keepsExistingToken(tokenPath);
  if (!kept) {
    writeFileSync(tokenPath, `${generateToken()}\n`, { mode: 0o600 });
    chmodSync(tokenPath, 0o600);
  }
  writeFileSync(configPath, starterConfig(port), { mode: 0o644 });
  const endpoint = `http://127.0.0.1:${port}/a2a/echo`;
  const where = relative(cwd, dir);
  return [
    `wrote ${shownPath(cwd, configPath)}: one echo agent on 127.0.0.1:${port}, one client "local", audit on`,
    kept
      ? `kept ${shownPath(cwd, tokenPath)}: the client's existing token (not printed)`
      : `wrote ${shownPath(cwd, tokenPath)} (mode 0600): the client's token (not printed)`,
    where === '' ? 'next: start it, call it from another terminal, check it:' : `next, in ${where}:`,
    `  npx airlock serve --config ${INIT_CONFIG_FILE}`,
    `  AIRLOCK_TOKEN="$(cat ${INIT_TOKEN_FILE})" npx airlock call ${endpoint} "hello"`,
    `  npx airlock doctor --config ${INIT_CONFIG_FILE}`,
  ];
}

/** A token file that already holds a usable token stays: someone may be using it. */
function keepsExistingToken(path: string): boolean {
  if (!existsSync(path)) return false;
  const value = readFileSync(path, 'utf8').trim();
  if (value.length < MIN_TOKEN_LENGTH || /\s/.test(value)) return false;
  chmodSync(path, 0o600);
  return true;
}

function shownPath(cwd: string, path: string): string {
  const shown = relative(cwd, path);
  return shown.startsWith('..') ? path : shown;
}

/**
 * The starter config's text: valid as written (a test loads it with the real loader), and
 * commented for the person who reads it next.
 *
 * @example
 * ```ts
 * parseConfig(starterConfig(41240), process.env);
 * ```
 */
export function starterConfig(port: number): string {
  return `# Airlock starter config, written by \`airlock init\`. Every key: docs/CONFIGURATION.md.
# Check it (and the port, the store, the audit file) with: npx airlock doctor --config ${INIT_CONFIG_FILE}
# Paths are relative to the folder you run airlock in.

server:
  host: 127.0.0.1 # loopback only: nothing outside this machine can connect
  port: ${port}

# Where tasks live. memory forgets them on restart; for tasks that survive one:
#   store: { type: sqlite, path: .airlock/airlock.db }
store:
  type: memory

# One row per call and per refusal (ids, counts, outcomes; never message text or tokens),
# hash-chained. Check it with: npx airlock audit verify .airlock/audit.jsonl
audit:
  file: .airlock/audit.jsonl

# What you publish: each agent at http://127.0.0.1:${port}/a2a/<slug>.
agents:
  - slug: echo
    name: Echo
    description: Replies with the text it was sent.
    skills:
      - id: echo
        name: Echo
        description: Repeats the caller's text back.
        examples: ['hello']
    backend: { type: echo } # or openai, command, module, a2a: docs/backends/

# Who may call, and which agents. The token is read from its file (mode 0600), never written
# here; make more with: npx airlock tokens new <client>
clients:
  - id: local
    token: { file: ${INIT_TOKEN_FILE} }
    agents: [echo]
`;
}
