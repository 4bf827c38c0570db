/**
 * The two extra modes of bench/inbound.ts:
 *
 * - `--rate R`: raw node:http, Airlock (every guard, memory store, audit file) and the floor at a
 *   fixed offered rate, not at saturation: p50/p99 and the p99 Airlock (and the floor: the work
 *   alone) adds over raw, medians over interleaved rounds; once with the open-loop pacer
 *   (bench/lib/paced.ts, latency from the schedule and from the send) and once with autocannon's
 *   `overallRate` (bursty, from the send).
 * - `--writes`: the SQLite and PostgreSQL rows with what each task costs the store: server CPU,
 *   SQL statements, fsyncs, storage bytes; PostgreSQL commits, rows, WAL and backend CPU; and
 *   the tasks/s one PostgreSQL primary could take, extrapolated from those.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuMicros } from './cpu.js';
import {
  counterDelta,
  countSyscalls,
  postgresCounters,
  statementsSoFar,
  storageWriteBytes,
  type PostgresCounters,
} from './durable-writes.js';
import { runLoad, type Target } from './load.js';
import { runPaced } from './paced.js';

/** A started server as the modes need it. */
export interface ModeServer {
  key: string;
  label: string;
  pid: number;
  target: Target;
}

function median(values: readonly number[]): number {
  const sorted = [...values].filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const ms = (value: number): string => value.toFixed(2).padStart(7);

interface RateMedians {
  p50: number;
  p99: number;
  p50s: number;
  p99s: number;
  cpu: number;
  acP50: number;
  acP99: number;
}

interface RateRow {
  paced: { p50: number; p99: number; p50s: number; p99s: number; achieved: number; cpu: number };
  autocannon: { p50: number; p99: number; reqPerSec: number };
  failures: number;
}

/**
 * Runs raw, Airlock and (when given, third) the floor at `rate` req/s for `rounds` interleaved
 * rounds; returns failures.
 */
export async function runFixedRate(
  servers: readonly ModeServer[],
  options: { rate: number; duration: number; rounds: number; warmup: number; connections: number },
): Promise<{ failures: number; rows: Record<string, RateRow[]> }> {
  const rows: Record<string, RateRow[]> = {};
  let failures = 0;
  const once = async (server: ModeServer, duration: number): Promise<RateRow> => {
    const before = cpuMicros(server.pid);
    const paced = await runPaced(server.target, options.rate, duration, options.connections);
    const cpu = ((cpuMicros(server.pid) ?? Number.NaN) - (before ?? Number.NaN)) / paced.completed;
    await sleep(250);
    const burst = await runLoad(server.target, {
      connections: options.connections,
      pipelining: 1,
      duration,
      overallRate: options.rate,
    });
    await sleep(250);
    return {
      paced: {
        p50: paced.p50,
        p99: paced.p99,
        p50s: paced.p50FromSend,
        p99s: paced.p99FromSend,
        achieved: paced.achieved,
        cpu,
      },
      autocannon: { p50: burst.p50, p99: burst.p99, reqPerSec: burst.reqPerSec },
      failures: paced.failures + burst.non2xx + burst.errors + burst.timeouts,
    };
  };
  const describe = (row: RateRow): string =>
    `paced: ${row.paced.achieved.toFixed(0)} req/s  p50 ${ms(row.paced.p50)}  p99 ${ms(row.paced.p99)} ms ` +
    `(from send ${row.paced.p50s.toFixed(2)}/${row.paced.p99s.toFixed(2)})  cpu ${row.paced.cpu.toFixed(0)} µs/req | ` +
    `autocannon overallRate: p50 ${ms(row.autocannon.p50)}  p99 ${ms(row.autocannon.p99)} ms  failures ${row.failures}`;
  if (options.warmup > 0) {
    for (const server of servers)
      console.log(`warm-up   ${server.key.padEnd(8)} ${describe(await once(server, options.warmup))}`);
  }
  for (let round = 0; round < options.rounds; round++) {
    for (let index = 0; index < servers.length; index++) {
      const server = servers[(index + round) % servers.length]!;
      const row = await once(server, options.duration);
      failures += row.failures;
      (rows[server.key] ??= []).push(row);
      console.log(`round ${round + 1}/${options.rounds} ${server.key.padEnd(8)} ${describe(row)}`);
    }
  }
  console.log(
    `\nFixed offered rate ${options.rate} req/s, ${options.connections} connections, medians of ${options.rounds} rounds (ms):`,
  );
  console.log('server                   | p50    | p99    | p50 send | p99 send | CPU µs/req | ac p50 | ac p99');
  const medians: Record<string, RateMedians> = {};
  for (const server of servers) {
    const list = rows[server.key] ?? [];
    const m = {
      p50: median(list.map((r) => r.paced.p50)),
      p99: median(list.map((r) => r.paced.p99)),
      p50s: median(list.map((r) => r.paced.p50s)),
      p99s: median(list.map((r) => r.paced.p99s)),
      cpu: median(list.map((r) => r.paced.cpu)),
      acP50: median(list.map((r) => r.autocannon.p50)),
      acP99: median(list.map((r) => r.autocannon.p99)),
    };
    medians[server.key] = m;
    console.log(
      `${server.label.padEnd(24)} |${ms(m.p50)} |${ms(m.p99)} |${ms(m.p50s)}  |${ms(m.p99s)}  | ${m.cpu.toFixed(0).padStart(10)} |${ms(m.acP50)} |${ms(m.acP99)}`,
    );
  }
  const [raw, airlock, floor] = servers.map((server) => medians[server.key]!);
  if (raw !== undefined && airlock !== undefined) {
    const added = airlock.p99 - raw.p99;
    console.log(
      `\nadded p99 (Airlock − raw): ${added.toFixed(2)} ms paced from the schedule ` +
        `(${(airlock.p99s - raw.p99s).toFixed(2)} ms from the send; autocannon overallRate ${(airlock.acP99 - raw.acP99).toFixed(2)} ms); ` +
        `target ≤ 2 ms: ${added <= 2 ? 'met' : 'NOT met'}`,
    );
    if (floor !== undefined) {
      console.log(
        `added p99 (floor − raw): ${(floor.p99 - raw.p99).toFixed(2)} ms paced from the schedule: what the work alone adds`,
      );
    }
    console.log(
      'autocannon overallRate sends each connection its per-second quota back to back at the start of every second and times from the send: its p99 is that of a burst, not of a paced 1,000 req/s.',
    );
  }
  return { failures, rows };
}

/** The gateway's syscalls counted per task (perf): the SQLite store's syncs and writes. */
const SYSCALLS = ['fsync', 'fdatasync', 'pwrite64'] as const;

interface WritesRow {
  requests: number;
  reqPerSec: number;
  cpu: number;
  statements: number;
  /** SQLite transactions (commits) per task; NaN for PostgreSQL (see pg.xactCommit). */
  commits: number;
  /** Syscalls of the gateway process per task, from perf. */
  syscalls: Record<string, number>;
  storageBytes: number;
  pg?: PostgresCounters;
}

/** Per durable server: a warm-up, then R closed-loop runs, each with every counter. */
export async function runDurableWrites(
  servers: readonly ModeServer[],
  options: {
    duration: number;
    rounds: number;
    warmup: number;
    connections: number;
    statementsFile: (key: string) => string;
    workDir: string;
    pg?: { client: Parameters<typeof postgresCounters>[0]; database: string };
  },
): Promise<number> {
  let failures = 0;
  const load = { connections: options.connections, pipelining: 1 };
  for (const server of servers) {
    const isPg = server.key === 'postgres';
    if (options.warmup > 0) await runLoad(server.target, { ...load, duration: options.warmup });
    const rows: WritesRow[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const pgBefore = isPg && options.pg ? await postgresCounters(options.pg.client, options.pg.database) : undefined;
      const statementsBefore = statementsSoFar(options.statementsFile(server.key));
      const bytesBefore = storageWriteBytes(server.pid);
      const perf = await countSyscalls(server.pid, SYSCALLS, join(options.workDir, `perf-${server.key}.csv`));
      const cpuBefore = cpuMicros(server.pid) ?? Number.NaN;
      const stats = await runLoad(server.target, { ...load, duration: options.duration });
      const cpu = ((cpuMicros(server.pid) ?? Number.NaN) - cpuBefore) / stats.requests;
      const calls = await perf.stop();
      await sleep(300);
      const statementsAfter = statementsSoFar(options.statementsFile(server.key));
      const statements = isPg
        ? statementsAfter.postgres - statementsBefore.postgres
        : statementsAfter.sqlite - statementsBefore.sqlite;
      const pgAfter = isPg && options.pg ? await postgresCounters(options.pg.client, options.pg.database) : undefined;
      failures += stats.non2xx + stats.errors + stats.timeouts;
      const row: WritesRow = {
        requests: stats.requests,
        reqPerSec: stats.reqPerSec,
        cpu,
        statements: statements / stats.requests,
        commits: isPg
          ? Number.NaN
          : (statementsAfter.sqliteTransactions - statementsBefore.sqliteTransactions) / stats.requests,
        syscalls: Object.fromEntries(SYSCALLS.map((name) => [name, (calls[name] ?? Number.NaN) / stats.requests])),
        storageBytes: (storageWriteBytes(server.pid) - bytesBefore) / stats.requests,
        ...(pgBefore && pgAfter ? { pg: counterDelta(pgBefore, pgAfter) } : {}),
      };
      rows.push(row);
      const pg = row.pg;
      console.log(
        `round ${round + 1} ${server.key.padEnd(8)} ${stats.reqPerSec.toFixed(0)} req/s  ${stats.requests} tasks  ` +
          `gateway cpu ${cpu.toFixed(0)} µs/task  statements ${row.statements.toFixed(2)}/task  ` +
          `storage ${row.storageBytes.toFixed(0)} B/task  ` +
          (isPg ? '' : `commits ${row.commits.toFixed(3)}/task  `) +
          SYSCALLS.map((name) => `${name} ${row.syscalls[name]!.toFixed(3)}`).join('  ') +
          (pg
            ? `  | commits ${(pg.xactCommit / stats.requests).toFixed(3)}  ins ${(pg.tupInserted / stats.requests).toFixed(2)}  ` +
              `upd ${(pg.tupUpdated / stats.requests).toFixed(2)}  del ${(pg.tupDeleted / stats.requests).toFixed(2)}  ` +
              `WAL ${(pg.walRecords / stats.requests).toFixed(2)} rec ${(pg.walBytes / stats.requests).toFixed(0)} B  ` +
              `wal_write ${(pg.walWrite / stats.requests).toFixed(3)}  wal_sync ${(pg.walSync / stats.requests).toFixed(3)}  ` +
              `pg backends ${(pg.backendCpu / stats.requests).toFixed(0)} µs  walwriter ${(pg.walWriterCpu / stats.requests).toFixed(1)} µs (per task)`
            : ''),
      );
    }
    const m = (pick: (row: WritesRow) => number): number => median(rows.map(pick));
    console.log(
      `median ${server.key}: ${m((r) => r.reqPerSec).toFixed(0)} req/s, gateway ${m((r) => r.cpu).toFixed(0)} µs/task, ` +
        `${m((r) => r.statements).toFixed(2)} statements/task, ` +
        SYSCALLS.map((name) => `${name} ${m((r) => r.syscalls[name]!).toFixed(3)}`).join(', ') +
        '/task (gateway process)',
    );
    if (isPg && rows.every((row) => row.pg)) {
      const backend = m((r) => r.pg!.backendCpu / r.requests);
      const walWriter = m((r) => r.pg!.walWriterCpu / r.requests);
      const walBytes = m((r) => r.pg!.walBytes / r.requests);
      const walSync = m((r) => r.pg!.walSync / r.requests);
      const perTask = backend + walWriter;
      console.log(
        `PostgreSQL per task (medians): backends ${backend.toFixed(0)} µs + walwriter ${walWriter.toFixed(1)} µs CPU, ` +
          `${walBytes.toFixed(0)} B WAL, ${walSync.toFixed(3)} WAL syncs`,
      );
      for (const cores of [2, 8, 16, 32]) {
        console.log(
          `  estimate: one primary on ${cores} cores, CPU-bound at 70% → ${((0.7 * cores * 1e6) / perTask).toFixed(0)} tasks/s ` +
            `(WAL ${((((0.7 * cores * 1e6) / perTask) * walBytes) / 1e6).toFixed(1)} MB/s)`,
        );
      }
    }
  }
  return failures;
}
