/**
 * The tasks table's own VACUUM. Every task written over an older version of itself and every
 * task evicted or swept leaves a dead row version (and dead index entries) behind; at the quota a
 * principal's every new task evicts an old one. Until a VACUUM clears them, the share count and
 * the eviction read past them: measured here with autovacuum off, a gateway at 5,000–6,000 tasks
 * a second fell to 2,300 within 50 s (178,000 dead rows against 1,000 live ones), and held
 * 6,000 with a VACUUM every few seconds. Autovacuum, where it is on, looks at a table once a
 * minute at best (`autovacuum_naptime`) and only past a fifth of it dead (the default scale
 * factor), so the store does not wait for it: after `vacuumAfterRows` rows written or deleted by
 * this process it runs `VACUUM (SKIP_LOCKED)` on the table in the background, one at a time.
 *
 * VACUUM (not FULL) takes no lock that reads or writes wait for; SKIP_LOCKED leaves the table to
 * the replica or autovacuum worker already vacuuming it; a database user that does not own the
 * table gets a warning from PostgreSQL and nothing happens. It runs on a pooled connection with
 * a timeout of its own ({@link VACUUM_TIMEOUT_MS}: a large table may need longer than a request's
 * statement); its failure goes to `onBackgroundError` and the next threshold tries again.
 *
 * @example
 * ```ts
 * const vacuum = new TasksVacuum(pool, '"airlock"."tasks"', 20_000, onBackgroundError);
 * vacuum.changed(rows.length); // after a group commit; a VACUUM starts once 20,000 have piled up
 * await vacuum.idle();         // before closing the pool
 * ```
 */
import type { Pool, QueryConfig } from 'pg';
import { withPooledClient } from './connection.js';

/** Rows written or deleted between two VACUUMs of the tasks table, by default. */
export const DEFAULT_VACUUM_AFTER_ROWS = 20_000;
/** The longest one VACUUM may run, on the server and as the client waits for it. */
export const VACUUM_TIMEOUT_MS = 10 * 60_000;

export class TasksVacuum {
  readonly #pool: Pool;
  readonly #statement: string;
  readonly #threshold: number;
  readonly #onError: (error: unknown) => void;
  #since = 0;
  #running: Promise<void> | undefined;
  #runs = 0;

  /**
   * @param table the quoted, schema-qualified table name (never caller input)
   * @param threshold rows written or deleted before a VACUUM; 0 never vacuums (autovacuum's job)
   */
  constructor(pool: Pool, table: string, threshold: number, onError: (error: unknown) => void) {
    this.#pool = pool;
    this.#statement = `VACUUM (SKIP_LOCKED) ${table}`;
    this.#threshold = threshold;
    this.#onError = onError;
  }

  /** VACUUMs this store started and finished (for tests and metrics). */
  get runs(): number {
    return this.#runs;
  }

  /** `rows` rows of the table were written or deleted; may start a VACUUM in the background. */
  changed(rows: number): void {
    if (this.#threshold === 0 || rows <= 0) return;
    this.#since += rows;
    if (this.#since < this.#threshold || this.#running !== undefined) return;
    this.#since = 0;
    this.#running = this.#vacuum()
      .catch((error: unknown) => this.#onError(error))
      .finally(() => {
        this.#running = undefined;
      });
  }

  /** Settles once no VACUUM of this store is running. */
  async idle(): Promise<void> {
    await this.#running;
  }

  async #vacuum(): Promise<void> {
    await withPooledClient(this.#pool, async (client) => {
      // SET, not SET LOCAL: VACUUM cannot run inside a transaction block. Reset before the
      // connection goes back to the pool, so requests keep their statement timeout.
      await client.query(`SET statement_timeout = ${VACUUM_TIMEOUT_MS}`);
      try {
        // pg reads a per-query `query_timeout` (the pool's own is a request's); its types omit it.
        const vacuum: QueryConfig & { query_timeout: number } = {
          text: this.#statement,
          query_timeout: VACUUM_TIMEOUT_MS + 2_000,
        };
        await client.query(vacuum);
      } finally {
        await client.query('RESET statement_timeout');
      }
    });
    this.#runs += 1;
  }
}
