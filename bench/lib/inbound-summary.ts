/**
 * The inbound bench's results: run records, per-row summaries (medians, CPU per request, RSS),
 * the ratios against raw node:http and the SDK, the targets, and the printed table.
 *
 * @example
 * ```ts
 * const summaries = summarise(servers, records);
 * printSummary(summaries, ratios(summaries), rounds);
 * ```
 */
import type { RunStats } from './load.js';
import { formatInt, formatMs, formatRatio, median, renderTable } from './report.js';

/**
 * Targets, as raw/Airlock **CPU** ratios (a bare exchange's CPU per request over the guarded
 * one's): with every guard and the audit file ≥ 0.5 (at most twice a bare exchange); the durable
 * stores ≥ 0.3 (every acknowledged task written before the reply). Throughput with pinned cores:
 * every guard ≥ 0.45× raw req/s, flat across rounds (last ≥ 0.9× the first); ≥ 6× the SDK's req/s.
 */
export const GUARDED_CPU_TARGET = 0.5;
export const SQLITE_CPU_TARGET = 0.3;
export const POSTGRES_CPU_TARGET = 0.3;
export const GUARDED_REQ_TARGET = 0.45;
export const FLAT_TARGET = 0.9;
export const SDK_MULTIPLE_TARGET = 6;

export type ServerKey = 'airlock' | 'guarded' | 'sqlite' | 'postgres' | 'raw' | 'floor' | 'floor-sqlite' | 'sdk';
export interface RunRecord {
  round: number;
  position: number;
  server: ServerKey;
  stats: RunStats;
  /** Server CPU (user + system, all threads) per answered request, µs; NaN where /proc is missing. */
  cpuPerRequest: number;
  /** The server's resident set after the run, bytes. */
  rss: number;
}

export interface Measured {
  stats: RunStats;
  cpuPerRequest: number;
  rss: number;
  /**
   * CPU ms the other bench servers used during the run (they share the server core): a round
   * whose figure moved with this was disturbed by a neighbour (GC, a store sweep), not slower.
   */
  neighboursCpuMs: number;
}

export interface ServerSummary {
  server: ServerKey;
  label: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  roundsReqPerSec: number[];
  cpuPerRequest: number;
  /** The largest resident set seen after a run, bytes. */
  rss: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface Ratios {
  airlockToRaw: number;
  guardedToRaw: number;
  sqliteToRaw: number;
  postgresToRaw: number;
  sdkToRaw: number;
  airlockToSdk: number;
  guardedToSdk: number;
  /** The floor's req/s over the SDK's: the multiple the work alone reaches (the SDK target's ceiling). */
  floorToSdk: number;
  /** raw CPU per request / this row's CPU per request (1 = as cheap as a bare exchange). */
  cpu: Partial<Record<ServerKey, number>>;
  /** Last round's req/s over the first's, per row. */
  lastToFirst: Partial<Record<ServerKey, number>>;
  /**
   * The target ratios round by round, each from two runs of the same round (minutes apart at
   * most), so that the machine's slower and faster spells fall on both sides: how many rounds
   * reach a target says more than one median on a noisy host.
   */
  perRound: Record<'guardedCpu' | 'sqliteCpu' | 'postgresCpu' | 'guardedToRaw' | 'guardedToSdk', number[]>;
}

// ---------------------------------------------------------------- results

export function summarise(
  servers: readonly { key: ServerKey; label: string }[],
  records: readonly RunRecord[],
): ServerSummary[] {
  return servers.map((server) => {
    const mine = records.filter((record) => record.server === server.key);
    const runs = mine.map((record) => record.stats);
    const sum = (pick: (stats: RunStats) => number): number => runs.reduce((total, stats) => total + pick(stats), 0);
    return {
      server: server.key,
      label: server.label,
      reqPerSec: median(runs.map((stats) => stats.reqPerSec)),
      p50: median(runs.map((stats) => stats.p50)),
      p99: median(runs.map((stats) => stats.p99)),
      roundsReqPerSec: runs.map((stats) => stats.reqPerSec),
      cpuPerRequest: median(mine.map((record) => record.cpuPerRequest)),
      rss: Math.max(...mine.map((record) => record.rss)),
      non2xx: sum((stats) => stats.non2xx),
      errors: sum((stats) => stats.errors),
      timeouts: sum((stats) => stats.timeouts),
    };
  });
}

/**
 * `pick(top) / pick(bottom)` for each round where both rows ran, in round order.
 *
 * @example
 * ```ts
 * pairedByRound(records, 'raw', 'guarded', (record) => 1 / record.cpuPerRequest); // raw/Airlock CPU per round
 * ```
 */
export function pairedByRound(
  records: readonly RunRecord[],
  top: ServerKey,
  bottom: ServerKey,
  pick: (record: RunRecord) => number,
): number[] {
  const rounds = [...new Set(records.map((record) => record.round))].sort((a, b) => a - b);
  const values: number[] = [];
  for (const round of rounds) {
    const upper = records.find((record) => record.round === round && record.server === top);
    const lower = records.find((record) => record.round === round && record.server === bottom);
    if (upper === undefined || lower === undefined) continue;
    const value = pick(upper) / pick(lower);
    if (Number.isFinite(value)) values.push(value);
  }
  return values;
}

export function ratios(summaries: readonly ServerSummary[], records: readonly RunRecord[] = []): Ratios {
  // CPU ratios are raw's CPU over the row's: per request, the cheaper the higher.
  const cpuRatio = (row: ServerKey): number[] =>
    pairedByRound(records, row, 'raw', (record) => 1 / record.cpuPerRequest);
  const reqRatio = (top: ServerKey, bottom: ServerKey): number[] =>
    pairedByRound(records, top, bottom, (record) => record.stats.reqPerSec);
  const reqPerSec = (key: ServerKey): number =>
    summaries.find((summary) => summary.server === key)?.reqPerSec ?? Number.NaN;
  return {
    airlockToRaw: reqPerSec('airlock') / reqPerSec('raw'),
    guardedToRaw: reqPerSec('guarded') / reqPerSec('raw'),
    sqliteToRaw: reqPerSec('sqlite') / reqPerSec('raw'),
    postgresToRaw: reqPerSec('postgres') / reqPerSec('raw'),
    sdkToRaw: reqPerSec('sdk') / reqPerSec('raw'),
    airlockToSdk: reqPerSec('airlock') / reqPerSec('sdk'),
    guardedToSdk: reqPerSec('guarded') / reqPerSec('sdk'),
    floorToSdk: reqPerSec('floor') / reqPerSec('sdk'),
    cpu: Object.fromEntries(summaries.map((summary) => [summary.server, cpuOf('raw') / summary.cpuPerRequest])),
    lastToFirst: Object.fromEntries(
      summaries.map((summary) => {
        const rounds = summary.roundsReqPerSec;
        return [summary.server, rounds[rounds.length - 1]! / rounds[0]!];
      }),
    ),
    perRound: {
      guardedCpu: cpuRatio('guarded'),
      sqliteCpu: cpuRatio('sqlite'),
      postgresCpu: cpuRatio('postgres'),
      guardedToRaw: reqRatio('guarded', 'raw'),
      guardedToSdk: reqRatio('guarded', 'sdk'),
    },
  };
  function cpuOf(key: ServerKey): number {
    return summaries.find((summary) => summary.server === key)?.cpuPerRequest ?? Number.NaN;
  }
}

export function printSummary(summaries: readonly ServerSummary[], result: Ratios, rounds: number): void {
  const raw = summaries.find((summary) => summary.server === 'raw')?.reqPerSec ?? Number.NaN;
  const rows = summaries.map((summary) => [
    summary.label,
    formatInt(summary.cpuPerRequest),
    formatRatio(result.cpu[summary.server] ?? Number.NaN),
    formatInt(summary.reqPerSec),
    formatRatio(summary.reqPerSec / raw),
    formatMs(summary.p50),
    formatMs(summary.p99),
    (summary.rss / 1024 / 1024).toFixed(0),
    summary.roundsReqPerSec.map(formatInt).join(' / '),
    String(summary.non2xx + summary.errors + summary.timeouts),
  ]);
  console.log(`Median of ${rounds} round(s):`);
  console.log(
    renderTable(
      [
        'server',
        'CPU µs/req',
        'raw/it CPU',
        'req/s',
        'vs raw',
        'p50 ms',
        'p99 ms',
        'RSS MB',
        'req/s per round',
        'failed',
      ],
      rows,
    ),
  );
  console.log('');
  const verdict = (value: number, target: number): string =>
    Number.isNaN(value) ? 'not measured' : `${value >= target ? 'meets' : 'BELOW'} the target of ≥ ${target}×`;
  const { perRound } = result;
  const lines: [string, number, number, readonly number[]][] = [
    ['every guard: raw/Airlock CPU', result.cpu.guarded ?? Number.NaN, GUARDED_CPU_TARGET, perRound.guardedCpu],
    ['SQLite: raw/Airlock CPU', result.cpu.sqlite ?? Number.NaN, SQLITE_CPU_TARGET, perRound.sqliteCpu],
    ['PostgreSQL: raw/Airlock CPU', result.cpu.postgres ?? Number.NaN, POSTGRES_CPU_TARGET, perRound.postgresCpu],
    ['every guard: req/s vs raw', result.guardedToRaw, GUARDED_REQ_TARGET, perRound.guardedToRaw],
    ['every guard: last round / first', result.lastToFirst.guarded ?? Number.NaN, FLAT_TARGET, []],
    ['every guard: req/s vs @a2a-js/sdk', result.guardedToSdk, SDK_MULTIPLE_TARGET, perRound.guardedToSdk],
  ];
  for (const [label, value, target, rounds] of lines) {
    console.log(
      `${label.padEnd(40)} ${formatRatio(value)}  (${verdict(value, target)}${describeRounds(rounds, target)})`,
    );
  }
  console.log(`${'echo, auth, no audit: raw/Airlock CPU'.padEnd(40)} ${formatRatio(result.cpu.airlock ?? Number.NaN)}`);
  console.log(`${'@a2a-js/sdk: raw/SDK CPU'.padEnd(40)} ${formatRatio(result.cpu.sdk ?? Number.NaN)}`);
  if (!Number.isNaN(result.floorToSdk)) {
    // Where the work by hand is itself under 6× the SDK, no structure of Airlock's reaches it.
    console.log(`${'floor: req/s vs @a2a-js/sdk'.padEnd(40)} ${formatRatio(result.floorToSdk)}`);
  }
  // The floor: the same work by hand in one function (bench/peers/floor-http.ts). Where it is
  // itself below a target, no structure of Airlock's can meet that target on this runtime.
  const floor = result.cpu.floor ?? Number.NaN;
  if (!Number.isNaN(floor)) {
    console.log(
      `${'floor (the work by hand): raw/floor CPU'.padEnd(40)} ${formatRatio(floor)}` +
        (floor < GUARDED_CPU_TARGET
          ? `  (the work alone does not reach the every-guard target of ≥ ${GUARDED_CPU_TARGET}×)`
          : ''),
    );
    const over = (result.cpu.guarded ?? Number.NaN) / floor;
    console.log(
      `${'every guard: floor/Airlock CPU'.padEnd(40)} ${formatRatio(over)}  (1.00× = no cost beyond the work)`,
    );
  }
  const floorSqlite = result.cpu['floor-sqlite'] ?? Number.NaN;
  if (!Number.isNaN(floorSqlite)) {
    console.log(`${'floor, SQLite: raw/floor CPU'.padEnd(40)} ${formatRatio(floorSqlite)}`);
    const over = (result.cpu.sqlite ?? Number.NaN) / floorSqlite;
    console.log(`${'SQLite: floor/Airlock CPU'.padEnd(40)} ${formatRatio(over)}  (1.00× = no cost beyond the work)`);
  }
}

/**
 * `; rounds 0.27–0.33×, 3 of 5 at target` (empty with fewer than two rounds).
 *
 * @example
 * ```ts
 * describeRounds([0.29, 0.31, 0.30], 0.3); // '; rounds 0.29–0.31×, 2 of 3 at target'
 * ```
 */
export function describeRounds(values: readonly number[], target: number): string {
  if (values.length < 2) return '';
  const reached = values.filter((value) => value >= target).length;
  const low = formatRatio(Math.min(...values)).replace('×', '');
  return `; rounds ${low}–${formatRatio(Math.max(...values))}, ${reached} of ${values.length} at target`;
}

/** Prints a warning and returns false when any request failed. */
export function reportFailures(summaries: readonly ServerSummary[], warmupFailures: number): boolean {
  const failed = summaries.filter((summary) => summary.non2xx + summary.errors + summary.timeouts > 0);
  if (failed.length === 0 && warmupFailures === 0) return true;
  console.log('');
  for (const summary of failed) {
    console.log(
      `WARNING: ${summary.label}: ${summary.non2xx} non-2xx, ${summary.errors} errors, ${summary.timeouts} timeouts ` +
        'in measured runs; its numbers are not comparable',
    );
  }
  if (warmupFailures > 0) console.log(`WARNING: ${warmupFailures} failed requests during warm-up`);
  return false;
}
