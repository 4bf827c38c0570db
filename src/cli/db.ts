/**
 * `airlock db migrate`: applies the task store's pending schema migrations and exits, so that
 * an operator can migrate before rolling out new replicas (servers also migrate at start,
 * under the same lock). The store is chosen as `airlock serve` chooses it: `--url` (PostgreSQL),
 * else `--data <dir>` (SQLite), else the config file's store, else `DATABASE_URL`.
 *
 * Output: `migrated <store>: schema version N (applied 1, 2)` or `… (already current)` on
 * stdout, exit 0. Exit 1 when the database is unavailable or its schema is newer than this
 * build's; exit 2 when there is nothing to migrate (a memory store), or the config or an
 * option (such as the schema name) is invalid.
 * Nothing printed carries a password.
 *
 * @example
 * ```sh
 * DATABASE_URL=postgres://airlock@db/airlock airlock db migrate
 * airlock db migrate --data /var/lib/airlock
 * airlock db migrate --config airlock.yaml
 * ```
 */
import { ConfigError } from '../config/errors.js';
import { loadConfigFile } from '../config/load.js';
import { StoreSchemaError, StoreUnavailableError } from '../tasks/stores/errors.js';
import {
  describeTaskStoreSpec,
  migrateTaskStore,
  resolveTaskStoreSpec,
  type TaskStoreSpec,
} from '../tasks/stores/index.js';

/**
 * Where `airlock db migrate` finds the database. All optional; see the module comment for the order.
 *
 * @example
 * ```ts
 * const options: DbMigrateOptions = { data: '/var/lib/airlock' };
 * ```
 */
export interface DbMigrateOptions {
  /** A config file whose `store` names the database. */
  config?: string;
  /** A PostgreSQL URL (wins over everything else). */
  url?: string;
  /** A data directory: SQLite in `<data>/airlock.db`. */
  data?: string;
  /** PostgreSQL schema for `--url` or `DATABASE_URL` (default `public`). */
  schema?: string;
  /** Environment for `DATABASE_URL` (and the config's `${VAR}`s). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Where the command writes; tests pass their own.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const output: DbCommandOutput = { stdout: (line) => lines.push(line), stderr: (line) => lines.push(line) };
 * ```
 */
export interface DbCommandOutput {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}

const PROCESS_OUTPUT: DbCommandOutput = {
  stdout: (line) => process.stdout.write(line),
  stderr: (line) => process.stderr.write(line),
};

/**
 * Runs `airlock db migrate`; returns the exit code (0 done, 1 database problem, 2 usage).
 *
 * @example
 * ```ts
 * process.exitCode = await dbMigrateCommand({ url: process.env.DATABASE_URL });
 * ```
 */
export async function dbMigrateCommand(
  options: DbMigrateOptions,
  output: DbCommandOutput = PROCESS_OUTPUT,
): Promise<number> {
  const env = options.env ?? process.env;
  let spec: TaskStoreSpec;
  try {
    spec = chooseSpec(options, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      output.stderr(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const described = describeTaskStoreSpec(spec);
  if (spec.type === 'memory') {
    output.stderr(
      'nothing to migrate: the task store is in memory (give --url, --data, a config with a database store, or DATABASE_URL)\n',
    );
    return 2;
  }
  try {
    const report = await migrateTaskStore(spec);
    const applied =
      report === undefined || report.applied.length === 0 ? 'already current' : `applied ${report.applied.join(', ')}`;
    output.stdout(`migrated ${described}: schema version ${report?.version ?? 0} (${applied})\n`);
    return 0;
  } catch (error) {
    if (error instanceof StoreUnavailableError || error instanceof StoreSchemaError) {
      output.stderr(`cannot migrate ${described}: ${error.message}\n`);
      return 1;
    }
    if (error instanceof RangeError) {
      output.stderr(`cannot migrate ${described}: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

function chooseSpec(options: DbMigrateOptions, env: NodeJS.ProcessEnv): TaskStoreSpec {
  const schema = options.schema !== undefined && { schema: options.schema };
  if (options.url !== undefined) return { type: 'postgres', url: options.url, ...schema };
  const configured: TaskStoreSpec | undefined =
    options.config !== undefined ? loadConfigFile(options.config, env).store : undefined;
  const spec = resolveTaskStoreSpec({
    ...(configured !== undefined && { configured }),
    ...(options.data !== undefined && { data: options.data }),
    env,
  });
  return spec.type === 'postgres' && spec.schema === undefined ? { ...spec, ...schema } : spec;
}
