/**
 * The long form of the sustained-load proof (`npm run soak`, through scripts/soak.mjs): the
 * scenario of soak-lib.ts for 60 s unless told otherwise. Prints req/s, p50/p99, errors, RSS at
 * start and end and its slope, and the audit rows verified; exits 1 when any assertion fails.
 *
 * Usage: npm run soak -- [--seconds N=60] [--warmup S=5] [--connections C=8 per client] [--max-bytes-per-request B=512]
 */
import { parseArgs } from 'node:util';
import { describeSustained, judgeSustained, runSustained, slopeBoundMbPerMin } from './soak-lib.js';

/**
 * The RSS slope bound over the second half of the run (30 s of a 60 s soak), in bytes per request
 * answered (slope ÷ request rate). Measured on a 2-core machine: RSS ramps at ≈ 225 B per request
 * while promoted garbage grows V8's old space (then a major GC drops it), and a task kept in
 * memory costs ≈ 1.6 KB, so a leak of one per request is three times over this bound. Smaller
 * leaks need a longer soak (`--seconds 600`), whose second half averages over many GC cycles.
 */
const DEFAULT_MAX_BYTES_PER_REQUEST = 512;

function numberOption(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number ≥ ${min}, got ${text}`);
  return value;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '60' },
      warmup: { type: 'string', default: '5' },
      connections: { type: 'string', default: '8' },
      'max-bytes-per-request': { type: 'string', default: String(DEFAULT_MAX_BYTES_PER_REQUEST) },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(
      'usage: npm run soak -- [--seconds N=60] [--warmup S=5] [--connections C=8] [--max-bytes-per-request B=512]',
    );
    return 0;
  }
  const seconds = numberOption('seconds', values.seconds, 2);
  const warmupSeconds = numberOption('warmup', values.warmup, 1);
  const connectionsPerClient = Math.round(numberOption('connections', values.connections, 1));
  const maxBytesPerRequest = numberOption('max-bytes-per-request', values['max-bytes-per-request'], 0);
  if (process.platform !== 'linux') throw new Error('the soak reads /proc/<pid>/status: Linux only');

  console.log(
    `soak: airlock serve (auth, limits, scrubbing, audit file, SQLite store) under 2 clients × ${connectionsPerClient} ` +
      `connections for ${seconds} s after ${warmupSeconds} s of warm-up; RSS sampled every second`,
  );
  const report = await runSustained({ warmupSeconds, seconds, connectionsPerClient });
  for (const line of describeSustained(report)) console.log(line);
  console.log(
    `RSS samples (s:MB): ${report.rss.map((sample) => `${sample.t.toFixed(0)}:${sample.mb.toFixed(1)}`).join(' ')}`,
  );
  const problems = judgeSustained(report, { maxBytesPerRequest });
  if (problems.length === 0) {
    console.log(
      `ok: 0 errors, RSS slope below ${slopeBoundMbPerMin(report, { maxBytesPerRequest }).toFixed(1)} MB/min ` +
        `(${maxBytesPerRequest} B per request), audit verified`,
    );
    return 0;
  }
  for (const problem of problems) console.error(`FAIL: ${problem}`);
  return 1;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 1;
  },
);
