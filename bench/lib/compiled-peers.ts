/**
 * The peers (bench/peers/*.ts: raw node:http, the floors, the SDK's server) run as JavaScript
 * compiled by tsc, as Airlock itself runs (its `dist/`), never through tsx. Under tsx a peer pays
 * for what a deployed server does not: every function made at run time (a request's callbacks)
 * is wrapped in a call that keeps its name, and source maps are on; the guarded floor measured
 * about 2 µs a request more through tsx (2026-12-06: 44–45.5 against 42–43.5, two copies each way).
 * A peer slowed so flatters Airlock in every ratio it is read against.
 *
 * The first peer a bench process starts compiles them all (with the `src/` files they import)
 * into `node_modules/.cache/airlock-bench-peers/`, incrementally: a few seconds when nothing
 * changed, about ten the first time.
 *
 * @example
 * ```ts
 * compiledPeer('bench/peers/raw-http.ts'); // '<repo>/node_modules/.cache/airlock-bench-peers/bench/peers/raw-http.js'
 * ```
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where a peer's source lives, relative to the repository root. */
const PEER_SOURCE = /^bench\/peers\/[\w-]+\.ts$/;

let compiledIn: string | undefined;

/**
 * Whether `script` (relative to the repository root) is a peer's TypeScript source.
 *
 * @example
 * ```ts
 * isPeerSource('bench/peers/floor-http.ts'); // true
 * isPeerSource('/tmp/build/dist/cli/main.js'); // false
 * ```
 */
export function isPeerSource(script: string): boolean {
  return PEER_SOURCE.test(script);
}

/**
 * The compiled JavaScript of a peer's source, compiling the peers first if this process has not.
 *
 * @throws Error with tsc's output when the peers do not compile
 */
export function compiledPeer(script: string, repoRoot: string): string {
  compiledIn ??= compilePeers(repoRoot);
  return join(compiledIn, script.replace(/\.ts$/, '.js'));
}

function compilePeers(repoRoot: string): string {
  const outDir = join(repoRoot, 'node_modules', '.cache', 'airlock-bench-peers');
  mkdirSync(outDir, { recursive: true });
  const project = join(outDir, 'tsconfig.json');
  writeFileSync(
    project,
    `${JSON.stringify(
      {
        extends: join(repoRoot, 'tsconfig.json'),
        compilerOptions: {
          rootDir: repoRoot,
          outDir,
          noEmit: false,
          declaration: false,
          sourceMap: false,
          incremental: true,
          tsBuildInfoFile: join(outDir, 'peers.tsbuildinfo'),
        },
        include: [join(repoRoot, 'bench', 'peers', '*.ts')],
      },
      null,
      2,
    )}\n`,
  );
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', project], { cwd: repoRoot, encoding: 'utf8' });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().slice(-2_000);
    throw new Error(`the bench peers did not compile (tsc -p ${project}):\n${output}`);
  }
  return outDir;
}
