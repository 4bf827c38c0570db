#!/usr/bin/env node
// Runs the fuzz suites (test/fuzz/*.test.ts) with node:test, at a chosen number of cases per
// property (AIRLOCK_FUZZ_RUNS, read by test/fuzz/runs.ts).
//
//   npm run fuzz                      1 000 cases per property (what `npm test` runs in CI)
//   npm run fuzz -- --long            100 000 cases per property (several minutes)
//   npm run fuzz -- --runs 5000       any number
//   npm run fuzz -- --long jcs        only the files whose name contains "jcs"
//
// Other arguments starting with `--` go to node's test runner (e.g. --test-name-pattern=...).
// Exits with the test run's status.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const DIR = join('test', 'fuzz');
const args = process.argv.slice(2);
let runs = 1000;
let mode = 'ci';
const filters = [];
const passthrough = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '--long') {
    runs = 100_000;
    mode = 'long';
  } else if (arg === '--runs' || arg.startsWith('--runs=')) {
    const value = arg === '--runs' ? args[++i] : arg.slice('--runs='.length);
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n <= 0) {
      console.error(`fuzz: --runs needs a positive integer, got ${JSON.stringify(value)}`);
      process.exit(2);
    }
    runs = n;
    mode = 'custom';
  } else if (arg.startsWith('--')) {
    passthrough.push(arg);
  } else {
    filters.push(arg);
  }
}

const files = readdirSync(DIR)
  .filter((name) => name.endsWith('.test.ts'))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort()
  .map((name) => join(DIR, name));
if (files.length === 0) {
  console.error(`fuzz: no test files in ${DIR}${filters.length > 0 ? ` matching ${filters.join(', ')}` : ''}`);
  process.exit(1);
}

console.log(`fuzz: ${mode} mode, ${runs} cases per property, ${files.length} file(s): ${files.join(' ')}`);
const started = Date.now();
const nodeArgs = ['--expose-gc', '--import', 'tsx', '--test', '--test-reporter=spec'];
// node:test runs files in parallel by default; one at a time keeps the HTTP fuzzing's timing
// and memory readings honest. (--test-concurrency exists from Node 20.10 / 21.)
nodeArgs.push('--test-concurrency=1');
const result = spawnSync(process.execPath, [...nodeArgs, ...passthrough, ...files], {
  stdio: 'inherit',
  env: { ...process.env, AIRLOCK_FUZZ_RUNS: String(runs) },
});
const seconds = ((Date.now() - started) / 1000).toFixed(1);
const status = result.status ?? 1;
console.log(`fuzz: ${status === 0 ? 'passed' : 'FAILED'} (${mode}, ${runs} cases per property) in ${seconds} s`);
process.exit(status);
