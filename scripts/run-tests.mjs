#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node:test (Node 20's --test does not expand
// globs). Extra arguments are passed through, e.g. `npm test -- --test-name-pattern=cancel`.
// Every test has a time limit, so a regression that hangs (a cap removed, a stream never ended)
// fails with the test's name instead of holding CI until its own limit.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries.sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const files = [...collect('src', []), ...collect('test', [])];
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
const TEST_TIMEOUT_MS = 120_000;
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    `--test-timeout=${TEST_TIMEOUT_MS}`,
    ...process.argv.slice(2),
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
