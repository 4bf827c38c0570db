/**
 * What both migration runners share: the shape of a migration, its checksum, and the check
 * that decides which migrations are still to run. A database's applied migrations must be a
 * prefix of this build's list, each with the same checksum: anything else means the database
 * was written by a newer build or a migration was edited after it shipped, and the store
 * refuses to start rather than misread rows.
 *
 * A migration is plain SQL in a TypeScript module (no files to ship or find next to dist/), run
 * in one transaction together with the row that records it, so it is applied wholly or not
 * at all. Never edit a migration once it has shipped: add the next version.
 *
 * @example
 * ```ts
 * const pending = pendingMigrations('SQLite', SQLITE_MIGRATIONS, appliedRowsFromTheDatabase);
 * for (const migration of pending) applyInOneTransaction(migration);
 * ```
 */
import { createHash } from 'node:crypto';
import { StoreSchemaError } from '../errors.js';

/**
 * One schema change. `version` counts up from 1 with no gaps; `sql` may hold several statements.
 *
 * @example
 * ```ts
 * const migration: Migration = { version: 2, name: 'tasks_by_agent', sql: 'CREATE INDEX …;' };
 * ```
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * A row of `schema_migrations`: what the database says it has applied.
 *
 * @example
 * ```ts
 * const row: AppliedMigration = { version: 1, name: 'tasks', checksum: checksumOf(migration) };
 * ```
 */
export interface AppliedMigration {
  version: number;
  name: string;
  checksum: string;
}

/**
 * What a migration run did: the schema version the database is at now, and the versions this
 * run applied (empty when it was already current).
 *
 * @example
 * ```ts
 * const report: MigrationReport = { engine: 'sqlite', version: 1, applied: [1] };
 * ```
 */
export interface MigrationReport {
  engine: 'sqlite' | 'postgres';
  version: number;
  applied: number[];
}

/**
 * SHA-256 of the migration's version, name and SQL: changes when any of them is edited.
 *
 * @example
 * ```ts
 * checksumOf({ version: 1, name: 'tasks', sql: 'CREATE TABLE t (x INT);' }); // 64 hex digits
 * ```
 */
export function checksumOf(migration: Migration): string {
  return createHash('sha256').update(`${migration.version}\n${migration.name}\n${migration.sql}`).digest('hex');
}

/**
 * The migrations of `known` that `applied` lacks, in order.
 *
 * @throws StoreSchemaError `schema_too_new` if the database has a version this build does not
 *   know; `schema_mismatch` if an applied version's name or checksum differs from this build's.
 * @example
 * ```ts
 * pendingMigrations('SQLite', [m1, m2], [{ version: 1, name: m1.name, checksum: checksumOf(m1) }]); // [m2]
 * ```
 */
export function pendingMigrations(
  engineName: string,
  known: readonly Migration[],
  applied: readonly AppliedMigration[],
): Migration[] {
  checkMigrationList(known);
  const newest = known.length;
  const sorted = [...applied].sort((a, b) => a.version - b.version);
  for (const [index, row] of sorted.entries()) {
    if (row.version > newest) {
      throw new StoreSchemaError(
        'schema_too_new',
        `${engineName}: the database is at schema version ${sorted[sorted.length - 1]?.version}; this build knows versions up to ${newest}. Run a newer Airlock, or restore a backup.`,
      );
    }
    const migration = known[index];
    if (migration === undefined || migration.version !== row.version) {
      throw new StoreSchemaError(
        'schema_mismatch',
        `${engineName}: schema_migrations has version ${row.version} where version ${index + 1} was expected`,
      );
    }
    if (row.name !== migration.name || row.checksum !== checksumOf(migration)) {
      throw new StoreSchemaError(
        'schema_mismatch',
        `${engineName}: migration ${row.version} (${row.name}) in the database differs from this build's ${migration.name}`,
      );
    }
  }
  return known.slice(sorted.length);
}

/** A build's own list must count 1, 2, 3…: a gap or a repeat is a bug caught by every test. */
function checkMigrationList(known: readonly Migration[]): void {
  known.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`migrations: version ${migration.version} at position ${index + 1}; versions must count from 1`);
    }
  });
}
