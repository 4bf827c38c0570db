/**
 * `npm run bench`: every benchmark section in one run, then one summary table.
 *
 * Sections, in order (each a script of its own, run as a child process with `--json`, its output
 * shown as it runs):
 * - `inbound`  (bench/inbound.ts): v0.3 message/send, Airlock (memory, every guard, SQLite,
 *   PostgreSQL) vs raw node:http vs @a2a-js/sdk;
 * - `stream`   (bench/stream.ts): SSE message/stream, events/s and time to first event;
 * - `list`     (bench/list.ts): ListTasks on 100k tasks in memory, SQLite and PostgreSQL;
 * - `outbound` (bench/outbound.ts): guarded client vs SDK client vs bare undici; card
 *   signature verification vs the SDK's;
 * - `memory`   (bench/memory.ts): 100k tasks through a 10k-capped store; 1 000 held streams.
 * - `fold`     (bench/fold.ts): 100k streamed chunks folded into one task, SSE read + fold, and
 *   framing an 8 KiB text (in process, no servers).
 *
 * Each section writes bench/results/<section>-<time>.json; this script reads them and writes
 * bench/results/summary-<time>.json with every headline figure and the ratios printed.
 * Ratios are always Airlock / raw and Airlock / SDK of the figures as measured; for figures
 * where lower is better (latency, µs, MB, KB) a ratio above 1× means Airlock is worse.
 *
 * Usage: npm run bench -- [--only inbound,stream,…] [--duration S] [--rounds N] [--connections C]
 *                         [--warmup S] [--no-postgres]
 * Flags given here are forwarded to every section; without them each section uses its own
 * defaults (chosen so that the whole run stays around six minutes on 2 vCPUs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from './lib/children.js';
import { formatNumber, machine, printMachine, writeResult, type Headline } from './lib/common.js';
import { formatInt, formatRatio, renderTable } from './lib/report.js';

const SECTIONS = ['inbound', 'stream', 'list', 'outbound', 'memory', 'fold'] as const;
type Section = (typeof SECTIONS)[number];

interface SectionRun {
  section: Section;
  exitCode: number;
  seconds: number;
  resultFile?: string;
  headlines: Headline[];
}

function parse(argv: string[]): { only: Section[]; forward: string[] } {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      warmup: { type: 'string' },
      'no-postgres': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      `usage: npm run bench -- [--only ${SECTIONS.join(',')}] [--duration S] [--rounds N] [--connections C] [--warmup S] [--no-postgres]\n`,
    );
    process.exit(0);
  }
  const only = values.only === undefined ? [...SECTIONS] : values.only.split(',').map((name) => name.trim());
  for (const name of only) {
    if (!(SECTIONS as readonly string[]).includes(name))
      throw new Error(`--only: unknown section "${name}" (${SECTIONS.join(', ')})`);
  }
  const forward: string[] = [];
  for (const flag of ['duration', 'rounds', 'connections', 'warmup'] as const) {
    if (values[flag] !== undefined) forward.push(`--${flag}`, values[flag]);
  }
  if (values['no-postgres']) forward.push('--no-postgres');
  return { only: SECTIONS.filter((section) => only.includes(section)), forward };
}

let current: ChildProcess | undefined;

/** Runs one section, echoing its stdout, and returns its exit code and the JSON file it wrote. */
function runSection(section: Section, forward: readonly string[]): Promise<{ exitCode: number; resultFile?: string }> {
  // memory takes no --duration/--rounds/--warmup (it accepts and ignores them).
  const child = spawn(process.execPath, ['--import', 'tsx', `bench/${section}.ts`, '--json', ...forward], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  current = child;
  let resultFile: string | undefined;
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    process.stdout.write(`${line}\n`);
    const match = /^wrote (.+\.json)$/.exec(line.trim());
    if (match !== null) resultFile = match[1];
  });
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      current = undefined;
      resolve({ exitCode: code ?? (signal !== null ? 1 : 0), ...(resultFile !== undefined && { resultFile }) });
    });
  });
}

/** inbound.ts keeps its own JSON format: its headlines are read from its summary. */
function inboundHeadlines(document: { summary: { server: string; reqPerSec: number; p99: number }[] }): Headline[] {
  const get = (key: string): { reqPerSec: number; p99: number } | undefined =>
    document.summary.find((summary) => summary.server === key);
  const raw = get('raw');
  const sdk = get('sdk');
  const rows: Headline[] = [];
  for (const [key, figure] of [
    ['airlock', 'inbound message/send, memory store, auth'],
    ['guarded', 'inbound message/send, every guard'],
    ['sqlite', 'inbound message/send, SQLite (FULL)'],
    ['postgres', 'inbound message/send, PostgreSQL'],
  ] as const) {
    const row = get(key);
    if (row === undefined) continue;
    rows.push({
      figure,
      unit: 'req/s',
      higherIsBetter: true,
      airlock: row.reqPerSec,
      ...(raw !== undefined && { raw: raw.reqPerSec }),
      ...(sdk !== undefined && { sdk: sdk.reqPerSec }),
      note: `p99 ${formatNumber(row.p99, 2)} ms`,
    });
  }
  return rows;
}

function headlinesOf(section: Section, file: string | undefined): Headline[] {
  if (file === undefined) return [];
  const document = JSON.parse(readFileSync(file, 'utf8')) as { headlines?: Headline[] };
  if (section === 'inbound') return inboundHeadlines(document as Parameters<typeof inboundHeadlines>[0]);
  return document.headlines ?? [];
}

function formatValue(value: number | undefined, unit: string): string {
  if (value === undefined) return '—';
  if (unit === 'req/s' || unit === 'events/s' || unit === 'calls/s') return formatInt(value);
  return formatNumber(value, unit === 'ms' || unit === 'µs' ? 2 : 1);
}

function ratio(airlock: number, other: number | undefined): string {
  return other === undefined ? '—' : formatRatio(airlock / other);
}

async function main(): Promise<number> {
  const { only, forward } = parse(process.argv.slice(2));
  const startedAt = new Date();
  console.log(`Airlock benchmarks: ${only.join(', ')}${forward.length > 0 ? `  (flags: ${forward.join(' ')})` : ''}`);
  printMachine();
  console.log('');
  const runs: SectionRun[] = [];
  for (const section of only) {
    console.log(`${'='.repeat(20)} ${section} ${'='.repeat(20)}`);
    const started = performance.now();
    const { exitCode, resultFile } = await runSection(section, forward);
    const seconds = (performance.now() - started) / 1000;
    let headlines: Headline[] = [];
    try {
      headlines = headlinesOf(section, resultFile);
    } catch (error) {
      console.log(`could not read ${resultFile}: ${error instanceof Error ? error.message : String(error)}`);
    }
    runs.push({ section, exitCode, seconds, ...(resultFile !== undefined && { resultFile }), headlines });
    console.log(`(${section}: ${seconds.toFixed(0)} s, exit code ${exitCode})`);
    console.log('');
  }

  console.log(`${'='.repeat(20)} summary ${'='.repeat(20)}`);
  const host = machine();
  console.log(`node ${host.node}, ${host.cpuModel} × ${host.cpuCount}; every figure measured in this run`);
  const rows = runs.flatMap((run) =>
    run.headlines.map((headline) => [
      run.section,
      headline.figure,
      `${headline.unit} (${headline.higherIsBetter ? 'higher' : 'lower'} is better)`,
      formatValue(headline.airlock, headline.unit),
      formatValue(headline.raw, headline.unit),
      formatValue(headline.sdk, headline.unit),
      ratio(headline.airlock, headline.raw),
      ratio(headline.airlock, headline.sdk),
      headline.note ?? '',
    ]),
  );
  console.log(
    renderTable(['section', 'figure', 'unit', 'Airlock', 'raw', 'SDK', 'Airlock/raw', 'Airlock/SDK', 'note'], rows),
  );
  console.log('');
  for (const run of runs) {
    const state =
      run.exitCode === 0 ? 'ok' : `exit code ${run.exitCode}: see its output (failed requests, or it did not finish)`;
    console.log(`${run.section.padEnd(9)} ${run.seconds.toFixed(0).padStart(4)} s  ${state}`);
  }
  const elapsed = (Date.now() - startedAt.getTime()) / 1000;
  console.log(`total ${elapsed.toFixed(0)} s`);
  const path = writeResult('summary', startedAt, {
    benchmark: 'npm run bench summary',
    flags: forward,
    totalSeconds: elapsed,
    sections: runs.map((run) => ({
      section: run.section,
      exitCode: run.exitCode,
      seconds: run.seconds,
      resultFile: run.resultFile,
    })),
    headlines: runs.flatMap((run) =>
      run.headlines.map((headline) => ({
        section: run.section,
        ...headline,
        airlockToRaw: headline.raw === undefined ? null : headline.airlock / headline.raw,
        airlockToSdk: headline.sdk === undefined ? null : headline.airlock / headline.sdk,
      })),
    ),
  });
  console.log(`wrote ${path}`);
  return runs.every((run) => run.exitCode === 0) ? 0 : 1;
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the running section`);
    if (current === undefined) process.exit(code);
    // The section stops its own servers on this signal, then exits.
    current.once('exit', () => process.exit(code));
    current.kill(signal);
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
    current?.kill('SIGTERM');
    process.exit(1);
  },
);
