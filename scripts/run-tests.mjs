#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node:test (Node 20's --test does not expand
// globs). Extra arguments are passed through, e.g. `npm test -- --test-name-pattern=cancel`.
// Every test has a time limit, so a regression that hangs (a cap removed, a stream never ended)
// fails with the test's name instead of holding CI until its own limit.
//
// Two groups, one summary. node:test runs one file at a time on a two-core machine
// (availableParallelism - 1), and most files spend their time waiting on sockets and child
// processes, so the bulk runs two files at a time. Files that measure time, hold a machine-wide
// resource (load, faults, fuzz budgets, replicas and leases, drain, browsers, package install,
// example ports) run afterwards, one at a time, as before. The reporter (test-reporter.mjs) holds
// back each group's totals; this script prints them added up, in the spec reporter's form.
//
// Tests start the CLI as a child process a few hundred times. Through tsx's loader a child takes
// about twice as long to start as from JavaScript, so src/ is first transpiled (esbuild, the
// transform tsx applies; under a second) into a folder of this run's, and test/helpers/cli.ts
// starts children from there (AIRLOCK_TEST_CLI). The folder sits under node_modules/ so the
// copy resolves the project's packages as the sources do.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

/** Files that run alone, after the rest. */
const ALONE = [
  /^test\/(load|faults|fuzz)\//,
  /^test\/(drain|replicas|replica-lease[^/]*|restart-safety|first-hour|package-install|workers)\.test\.ts$/,
  /^test\/(examples-[^/]*|deploy-recipes|console-[^/]*|hardening2-browsers|hardening2-fair-shares)\.test\.ts$/,
  /^test\/(hardening2-streams|hardening-limits|tls)\.test\.ts$/,
  /^src\/tasks\/stores\/memory\.test\.ts$/,
];
const CONCURRENCY = Number(process.env.AIRLOCK_TEST_CONCURRENCY ?? 2);
const TEST_TIMEOUT_MS = 120_000;

function collect(dir, out, keep = (name) => name.endsWith('.test.ts')) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries.sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out, keep);
    else if (keep(name)) out.push(path);
  }
  return out;
}

const files = [...collect('src', []), ...collect('test', [])];
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
const alone = files.filter((file) => ALONE.some((pattern) => pattern.test(file)));
const together = files.filter((file) => !alone.includes(file));

const started = performance.now();
const scratch = mkdtempSync(join(tmpdir(), 'airlock-tests-'));
const transpiledRoot = resolve('node_modules/.cache/airlock-tests');
mkdirSync(transpiledRoot, { recursive: true });
// A run stopped half-way (Ctrl-C) leaves its copy behind; the next one clears copies a day old.
for (const name of readdirSync(transpiledRoot)) {
  const path = join(transpiledRoot, name);
  if (Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { recursive: true, force: true });
}
const transpiled = mkdtempSync(join(transpiledRoot, 'src-'));
const sources = collect('src', [], (name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));
try {
  await build({
    entryPoints: sources,
    outbase: 'src',
    outdir: transpiled,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
} catch {
  // esbuild has printed what it could not read; nothing has run yet.
  rmSync(transpiled, { recursive: true, force: true });
  console.error('run-tests: src/ could not be transpiled for the CLI children (see above); fix it and run again');
  process.exit(1);
}
process.env.AIRLOCK_TEST_CLI = join(transpiled, 'cli', 'main.js');
console.log(
  `ℹ src/ transpiled for the CLI children: ${sources.length} files, ${(performance.now() - started).toFixed(0)} ms`,
);
const totals = { tests: 0, suites: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
const groups = [];
const fileTimes = {};
let status = 0;
for (const [index, [group, concurrency]] of [
  [together, CONCURRENCY],
  [alone, 1],
].entries()) {
  if (group.length === 0) continue;
  const summary = join(scratch, `group-${index}.json`);
  const groupStarted = performance.now();
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-reporter=./scripts/test-reporter.mjs',
      `--test-concurrency=${concurrency}`,
      `--test-timeout=${TEST_TIMEOUT_MS}`,
      ...process.argv.slice(2),
      ...group,
    ],
    { stdio: 'inherit', env: { ...process.env, AIRLOCK_TEST_SUMMARY: summary } },
  );
  if (result.status !== 0) status = result.status ?? 1;
  groups.push(
    `${group.length} files, ${concurrency} at a time: ${((performance.now() - groupStarted) / 1000).toFixed(0)} s`,
  );
  let counted;
  try {
    const written = JSON.parse(readFileSync(summary, 'utf8'));
    counted = written.totals;
    Object.assign(fileTimes, written.files);
  } catch {
    console.error(`run-tests: group ${index + 1} ended without its totals (${result.signal ?? result.status})`);
    status ||= 1;
    continue;
  }
  for (const key of Object.keys(totals)) totals[key] += counted[key] ?? 0;
}
rmSync(scratch, { recursive: true, force: true });
rmSync(transpiled, { recursive: true, force: true });
// Each file's duration, slowest first, for whoever tunes the groups.
if (process.env.AIRLOCK_TEST_TIMINGS) {
  const slowestFirst = Object.entries(fileTimes).sort(([, a], [, b]) => b - a);
  writeFileSync(process.env.AIRLOCK_TEST_TIMINGS, JSON.stringify(Object.fromEntries(slowestFirst), null, 1));
}
for (const [index, line] of groups.entries()) console.log(`ℹ group ${index + 1}: ${line}`);
for (const [key, value] of Object.entries(totals)) console.log(`ℹ ${key} ${value}`);
console.log(`ℹ duration_ms ${(performance.now() - started).toFixed(3)}`);
process.exit(status);
