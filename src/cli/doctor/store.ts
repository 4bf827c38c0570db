/**
 * The store check of `airlock doctor`, read-only: a SQLite file is opened read-only, a
 * PostgreSQL database is only queried; the schema's applied migrations are compared with this
 * build's (the same rule the stores apply at start), and nothing is ever migrated.
 *
 * @example
 * ```ts
 * const line = await storeLine({ type: 'sqlite', path: '.airlock/airlock.db' }, 'airlock.yaml');
 * ```
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StoreSchemaError } from '../../tasks/stores/errors.js';
import { describeTaskStoreSpec, type TaskStoreSpec } from '../../tasks/stores/index.js';
import { pendingMigrations, type AppliedMigration, type Migration } from '../../tasks/stores/migrations/plan.js';
import { quoteIdentifier } from '../../tasks/stores/migrations/postgres.js';
import { isWritable, nearestExisting, reasonOf, type CheckLine } from './check.js';

const CONNECT_TIMEOUT_MS = 5000;

/**
 * The store line for the spec `airlock serve` would use.
 *
 * @example
 * ```ts
 * await storeLine({ type: 'memory' }, 'airlock.yaml'); // ok: memory, tasks do not survive a restart
 * ```
 */
export async function storeLine(spec: TaskStoreSpec, configPath: string): Promise<CheckLine> {
  switch (spec.type) {
    case 'memory':
      return { status: 'ok', check: 'store', detail: 'memory: tasks do not survive a restart' };
    case 'sqlite':
      return sqliteLine(spec.path, configPath);
    case 'postgres':
      return postgresLine(spec, configPath);
  }
}

async function sqliteLine(path: string, configPath: string): Promise<CheckLine> {
  const shown = `sqlite:${path}`;
  const full = resolve(path);
  if (!existsSync(full)) {
    const folder = nearestExisting(dirname(full));
    return isWritable(folder)
      ? { status: 'ok', check: 'store', detail: `${shown} does not exist yet; airlock serve creates it` }
      : { status: 'fail', check: 'store', detail: `${shown} cannot be created: ${folder} is not writable` };
  }
  const { default: Database } = await import('better-sqlite3');
  const { SQLITE_MIGRATIONS } = await import('../../tasks/stores/migrations/sqlite.js');
  let applied: AppliedMigration[];
  try {
    const db = new Database(full, { readonly: true, fileMustExist: true });
    try {
      const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
      applied =
        table === undefined
          ? []
          : db.prepare<[], AppliedMigration>('SELECT version, name, checksum FROM schema_migrations').all();
    } finally {
      db.close();
    }
  } catch (error) {
    return { status: 'fail', check: 'store', detail: `${shown} cannot be read: ${reasonOf(error)}` };
  }
  const schema = schemaLine(shown, 'SQLite', SQLITE_MIGRATIONS, applied, configPath);
  if (schema.status === 'ok' && !isWritable(full)) {
    return { status: 'fail', check: 'store', detail: `${shown} is not writable by this user` };
  }
  return schema;
}

async function postgresLine(
  spec: Extract<TaskStoreSpec, { type: 'postgres' }>,
  configPath: string,
): Promise<CheckLine> {
  const shown = describeTaskStoreSpec(spec);
  const { default: pg } = await import('pg');
  const { POSTGRES_MIGRATIONS } = await import('../../tasks/stores/migrations/postgres.js');
  const client = new pg.Client({
    connectionString: spec.url,
    connectionTimeoutMillis: spec.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    statement_timeout: spec.statementTimeoutMs ?? CONNECT_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    try {
      await client.connect();
    } catch (error) {
      return { status: 'fail', check: 'store', detail: `${shown} is unreachable: ${reasonOf(error)}` };
    }
    const quoted = quoteIdentifier(spec.schema ?? 'public');
    const table = await client.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
      `${quoted}.schema_migrations`,
    ]);
    const applied =
      table.rows[0]?.found == null
        ? []
        : (
            await client.query<AppliedMigration>(
              `SELECT version, name, checksum FROM ${quoted}.schema_migrations ORDER BY version`,
            )
          ).rows;
    return schemaLine(shown, 'PostgreSQL', POSTGRES_MIGRATIONS, applied, configPath);
  } catch (error) {
    return { status: 'fail', check: 'store', detail: `${shown}: ${reasonOf(error)}` };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Judges a database's applied migrations against this build's: current, behind (the command
 * that migrates it), or refused (newer, or changed), as the store itself would at start.
 *
 * @example
 * ```ts
 * schemaLine('sqlite:a.db', 'SQLite', SQLITE_MIGRATIONS, [], 'airlock.yaml').status; // 'fail': behind
 * ```
 */
export function schemaLine(
  shown: string,
  engine: string,
  known: readonly Migration[],
  applied: readonly AppliedMigration[],
  configPath: string,
): CheckLine {
  let pending: Migration[];
  try {
    pending = pendingMigrations(engine, known, applied);
  } catch (error) {
    if (error instanceof StoreSchemaError)
      return { status: 'fail', check: 'store', detail: `${shown}: ${error.message}` };
    throw error;
  }
  if (pending.length > 0) {
    return {
      status: 'fail',
      check: 'store',
      detail: `${shown}: schema version ${applied.length}, this build needs ${known.length}: run npx airlock db migrate --config ${configPath}`,
    };
  }
  return { status: 'ok', check: 'store', detail: `${shown}: schema version ${known.length} (current)` };
}
