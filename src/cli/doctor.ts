/**
 * `airlock doctor [--config F]`: checks a setup before (or while) it serves, one line per check:
 * the config loads; token files are owner-only; the port is free, or served by this Airlock;
 * the store opens and its migrations are current (read-only: doctor never migrates); Redis
 * answers; the audit file is writable and its chain intact; the registry's cards are fetchable
 * and match their pins. A last line sums up. Exit 0 when no check failed, 1 otherwise.
 *
 * Doctor writes nothing: not a token serve would generate, not a first-use pin, not a schema.
 * No line carries a secret (tokens, passwords in URLs).
 *
 * @example
 * ```sh
 * airlock doctor --config airlock.yaml
 * # ok    config    airlock.yaml: 1 agent, 1 client
 * # ok    tokens    1 token, 1 from a file (0600)
 * # ok    port      127.0.0.1:41240 is free
 * # …
 * # all good: 5 ok, 2 skipped
 * ```
 */
import { existsSync } from 'node:fs';
import { AirlockError } from '../errors/index.js';
import { auditLine } from './doctor/audit.js';
import { formatCheckLine, summaryLine, type CheckLine } from './doctor/check.js';
import { configLine, loadConfigForDoctor, tokenLines, type DoctorConfig } from './doctor/config.js';
import { getJson, portLine, tryBind, type PortProbe } from './doctor/port.js';
import { redisLine } from './doctor/redis.js';
import { registryLines } from './doctor/registry.js';
import { storeLine } from './doctor/store.js';
import { errorLine } from './registry.js';
import { chooseTaskStore } from './serve.js';

export type { CheckLine, CheckStatus } from './doctor/check.js';

/** The config doctor reads when neither `--config` nor AIRLOCK_CONFIG names one: what `airlock init` writes. */
export const DOCTOR_DEFAULT_CONFIG = 'airlock.yaml';

/**
 * Options of `airlock doctor`.
 *
 * @example
 * ```ts
 * const options: DoctorOptions = { config: 'airlock.yaml' };
 * ```
 */
export interface DoctorOptions {
  /** The config file (default: AIRLOCK_CONFIG, else `airlock.yaml`). */
  config?: string;
  /** For `${VAR}`s, DATABASE_URL and the outbound settings. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** How the port is probed (tests). */
  probe?: PortProbe;
}

/**
 * Where doctor prints; tests pass their own.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const output: DoctorOutput = { stdout: (text) => lines.push(text) };
 * ```
 */
export interface DoctorOutput {
  stdout: (text: string) => void;
}

const PROCESS_OUTPUT: DoctorOutput = { stdout: (text) => process.stdout.write(text) };

/**
 * Runs every check and returns their lines, in order (without the summary).
 *
 * @example
 * ```ts
 * const lines = await runDoctorChecks({ config: 'airlock.yaml' });
 * const failed = lines.some((line) => line.status === 'fail');
 * ```
 */
export async function runDoctorChecks(options: DoctorOptions = {}): Promise<CheckLine[]> {
  const env = options.env ?? process.env;
  const path = options.config ?? nonEmpty(env.AIRLOCK_CONFIG) ?? DOCTOR_DEFAULT_CONFIG;
  if (!existsSync(path)) {
    const hint = `${path} not found: write a starter config with npx airlock init, or name one with --config`;
    return [{ status: 'fail', check: 'config', detail: hint }];
  }
  let loaded: DoctorConfig;
  try {
    loaded = loadConfigForDoctor(path, env);
  } catch (error) {
    if (!(error instanceof AirlockError)) throw error;
    return [{ status: 'fail', check: 'config', detail: errorLine(error) }];
  }
  const { config } = loaded;
  const probe = options.probe ?? { bind: tryBind, get: getJson };
  const store = async (): Promise<CheckLine> => {
    try {
      return await storeLine(chooseTaskStore(config, { env }), path);
    } catch (error) {
      if (!(error instanceof AirlockError)) throw error;
      return { status: 'fail', check: 'store', detail: errorLine(error) };
    }
  };
  const [port, stored, redis, audit, registry] = await Promise.all([
    portLine(config, probe),
    store(),
    redisLine(config.redis),
    auditLine(config.audit),
    registryLines(config.upstreams, env),
  ]);
  return [configLine(path, config), ...tokenLines(loaded), port, stored, redis, audit, ...registry];
}

/**
 * Runs `airlock doctor`: prints one line per check and a summary; returns the exit code (0 no
 * check failed, 1 otherwise).
 *
 * @example
 * ```ts
 * process.exitCode = await doctorCommand({ config: 'airlock.yaml' });
 * ```
 */
export async function doctorCommand(
  options: DoctorOptions = {},
  output: DoctorOutput = PROCESS_OUTPUT,
): Promise<number> {
  const lines = await runDoctorChecks(options);
  output.stdout([...lines.map(formatCheckLine), summaryLine(lines)].join('\n') + '\n');
  return lines.some((line) => line.status === 'fail') ? 1 : 0;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.length === 0 ? undefined : value;
}
