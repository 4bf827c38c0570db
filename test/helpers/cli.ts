/**
 * How a test runs Airlock's CLI in a child process: `spawn(process.execPath, [...CLI, 'serve', …])`.
 *
 * Under `npm test`, scripts/run-tests.mjs transpiles src/ once (esbuild, the transform tsx applies,
 * well under a second) and names the copy's entry in `AIRLOCK_TEST_CLI`: a child then starts from
 * plain JavaScript, in about half the time it takes through tsx's loader (measured to the
 * listening line: 1.25 s against 2.4 s). A test file run on its own (`node --import tsx --test
 * file`) runs the sources through tsx, as before. Either way the children run this checkout's
 * src/, never a stale dist/.
 *
 * @example
 * ```ts
 * const child = spawn(process.execPath, [...CLI, 'serve', '--config', 'airlock.yaml'], { cwd: dir });
 * ```
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI's entry in the sources (children may run in other folders, so it is absolute). */
const SOURCE_MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

const TRANSPILED_MAIN = process.env.AIRLOCK_TEST_CLI === '' ? undefined : process.env.AIRLOCK_TEST_CLI;

/** Node's arguments before the CLI's own: the transpiled entry, or tsx and the source entry. */
export const CLI: readonly string[] =
  TRANSPILED_MAIN !== undefined ? [TRANSPILED_MAIN] : ['--import', import.meta.resolve('tsx'), SOURCE_MAIN];

/**
 * This run's transpiled src/ (laid out as dist/ is), or undefined when the file runs on its own:
 * a test that needs a built checkout copies it rather than running tsc (about 15 s).
 *
 * @example
 * ```ts
 * const built = TRANSPILED_SOURCES; // e.g. …/node_modules/.cache/airlock-tests/src-x/
 * if (built !== undefined) cpSync(built, join(checkout, 'dist'), { recursive: true });
 * ```
 */
export const TRANSPILED_SOURCES: string | undefined =
  TRANSPILED_MAIN === undefined ? undefined : dirname(dirname(TRANSPILED_MAIN));
