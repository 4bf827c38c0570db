/**
 * Bench-only preload (NODE_OPTIONS=--require): counts the SQL statements a gateway runs, by
 * wrapping better-sqlite3's Statement run/get/all/iterate and Database exec (and counting the
 * calls of functions made by Database transaction: commits), and pg's
 * Client query. Writes `{ sqlite, postgres }` to the file in AIRLOCK_BENCH_STATEMENTS_FILE every
 * 100 ms, so the bench reads the count before and after a run. No gateway code changes.
 */
'use strict';
const { renameSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const path = require('node:path');

const out = process.env.AIRLOCK_BENCH_STATEMENTS_FILE;
if (out) {
  const load = createRequire(path.join(process.cwd(), 'package.json'));
  const counts = { sqlite: 0, sqliteTransactions: 0, postgres: 0 };
  try {
    const Database = load('better-sqlite3');
    const probe = new Database(':memory:');
    const statement = Object.getPrototypeOf(probe.prepare('SELECT 1'));
    probe.close();
    for (const name of ['run', 'get', 'all', 'iterate']) {
      const original = statement[name];
      statement[name] = function counted(...args) {
        counts.sqlite++;
        return original.apply(this, args);
      };
    }
    // db.transaction(fn) returns a function; each call of it is one transaction (one commit).
    const transaction = Database.prototype.transaction;
    Database.prototype.transaction = function counted(fn) {
      const db = this;
      const wrapped = transaction.call(db, fn);
      const outer = function (...args) {
        if (!db.inTransaction) counts.sqliteTransactions++;
        return wrapped.apply(this, args);
      };
      for (const variant of ['deferred', 'immediate', 'exclusive']) outer[variant] = wrapped[variant];
      return outer;
    };
    const exec = Database.prototype.exec;
    Database.prototype.exec = function counted(...args) {
      counts.sqlite++;
      return exec.apply(this, args);
    };
  } catch {
    // No better-sqlite3: nothing to count there.
  }
  try {
    const pg = load('pg');
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function counted(...args) {
      counts.postgres++;
      return query.apply(this, args);
    };
  } catch {
    // No pg.
  }
  // Written aside and renamed, so that a reader never sees a half-written file.
  setInterval(() => {
    writeFileSync(`${out}.tmp`, JSON.stringify(counts));
    renameSync(`${out}.tmp`, out);
  }, 100).unref();
}
