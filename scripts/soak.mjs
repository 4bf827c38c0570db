#!/usr/bin/env node
// `npm run soak`: the 60 s sustained-load proof (test/load/soak-run.ts), run from the sources
// through tsx, so no build is needed. Arguments pass through, e.g. `npm run soak -- --seconds 300`.
// Exits with the run's status: non-zero when any assertion failed.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const result = spawnSync(process.execPath, ['--import', 'tsx', 'test/load/soak-run.ts', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
if (result.error) console.error(`soak: ${result.error.message}`);
process.exit(result.status ?? 1);
