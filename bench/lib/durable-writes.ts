/**
 * What a durable store writes per task, read from outside the gateway: SQL statements (counted
 * by the bench-only preload bench/peers/count-statements.cjs), fsync/fdatasync calls (perf stat
 * on the syscall tracepoints, attached during each run), bytes written to storage (/proc/<pid>/io), and on the
 * PostgreSQL side the database's commits and rows (pg_stat_database), WAL records, bytes, writes
 * and syncs (pg_stat_wal, cluster-wide) and the CPU time of the database's backends (/proc).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuMicros } from './cpu.js';

/** SQL statements the gateway has run so far, from the preload's file (0 when unreadable). */
export function statementsSoFar(file: string): { sqlite: number; sqliteTransactions: number; postgres: number } {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { sqlite: number; sqliteTransactions: number; postgres: number };
  } catch {
    return { sqlite: 0, sqliteTransactions: 0, postgres: 0 };
  }
}

/** Bytes the process has caused to be written to storage (`write_bytes`, /proc/<pid>/io). */
export function storageWriteBytes(pid: number): number {
  try {
    const match = /write_bytes:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match === null ? Number.NaN : Number(match[1]);
  } catch {
    return Number.NaN;
  }
}

/** A running `perf stat` counting syscall entries of a process; `stop()` returns calls per syscall. */
export interface SyscallCount {
  stop(): Promise<Record<string, number>>;
}

/**
 * Counts `syscalls` (e.g. fsync) made by every thread of `pid` with `perf stat` on the
 * `syscalls:sys_enter_*` tracepoints: in-kernel counting, no ptrace stop per call (strace would
 * slow the server several-fold and so change its batch sizes). Resolves once perf has started;
 * an empty result when perf is missing or not permitted.
 */
export async function countSyscalls(pid: number, syscalls: readonly string[], outFile: string): Promise<SyscallCount> {
  const events = syscalls.map((name) => `syscalls:sys_enter_${name}`).join(',');
  const perf = spawn('perf', ['stat', '-x', ',', '-o', outFile, '-e', events, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const exited = new Promise<void>((resolve) => {
    perf.once('exit', () => resolve());
    perf.once('error', () => resolve());
  });
  await sleep(300);
  return {
    async stop() {
      perf.kill('SIGINT');
      await exited;
      const counts: Record<string, number> = {};
      let text: string;
      try {
        text = readFileSync(outFile, 'utf8');
      } catch {
        return counts;
      }
      // CSV: "count,unit,event,..."
      for (const line of text.split('\n')) {
        const [count, , event] = line.split(',');
        const name = event?.replace('syscalls:sys_enter_', '');
        if (name !== undefined && syscalls.includes(name)) counts[name] = Number(count);
      }
      return counts;
    },
  };
}

/** Counters of one PostgreSQL database and of the cluster's WAL, plus its backends' CPU. */
export interface PostgresCounters {
  xactCommit: number;
  tupInserted: number;
  tupUpdated: number;
  tupDeleted: number;
  walRecords: number;
  walBytes: number;
  walWrite: number;
  walSync: number;
  /** CPU µs of the backends connected to the database (the gateway's pool). */
  backendCpu: number;
  /** CPU µs of the cluster's WAL writer. */
  walWriterCpu: number;
}

interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** Reads the counters; waits first so that idle backends have flushed their statistics. */
export async function postgresCounters(client: Queryable, database: string): Promise<PostgresCounters> {
  await sleep(1500);
  const db = (
    await client.query(
      'SELECT xact_commit, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = $1',
      [database],
    )
  ).rows[0]!;
  const wal = (await client.query('SELECT wal_records, wal_bytes, wal_write, wal_sync FROM pg_stat_wal')).rows[0]!;
  const backends = (
    await client.query(
      `SELECT pid, backend_type FROM pg_stat_activity
        WHERE (datname = $1 AND pid <> pg_backend_pid()) OR backend_type = 'walwriter'`,
      [database],
    )
  ).rows;
  let backendCpu = 0;
  let walWriterCpu = 0;
  for (const row of backends) {
    const cpu = cpuMicros(Number(row.pid)) ?? 0;
    if (row.backend_type === 'walwriter') walWriterCpu += cpu;
    else backendCpu += cpu;
  }
  return {
    xactCommit: Number(db.xact_commit),
    tupInserted: Number(db.tup_inserted),
    tupUpdated: Number(db.tup_updated),
    tupDeleted: Number(db.tup_deleted),
    walRecords: Number(wal.wal_records),
    walBytes: Number(wal.wal_bytes),
    walWrite: Number(wal.wal_write),
    walSync: Number(wal.wal_sync),
    backendCpu,
    walWriterCpu,
  };
}

/** after − before, field by field. */
export function counterDelta(before: PostgresCounters, after: PostgresCounters): PostgresCounters {
  const delta = { ...after };
  for (const key of Object.keys(delta) as (keyof PostgresCounters)[]) delta[key] = after[key] - before[key];
  return delta;
}
