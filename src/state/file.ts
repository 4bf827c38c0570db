/**
 * Airlock's local state files (card pins, the outbound task ledger): small JSON files under
 * `.airlock/`, written whole and atomically so a reader in another process never sees half a
 * file, readable by the owner only.
 *
 * @example
 * ```ts
 * await writeStateFile('.airlock/pins.json', JSON.stringify(pins));
 * ```
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `text` to `path`: a temporary file in the same directory (so the rename stays on one
 * file system and is atomic), mode 0600, flushed to disk, then renamed over the old file. The
 * directory is created (mode 0700) when missing. On failure the temporary file is removed.
 *
 * @example
 * ```ts
 * await writeStateFile('/var/lib/airlock/outbound-tasks.json', '[]');
 * ```
 */
export async function writeStateFile(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomUUID()}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * The body of a state file: its text parsed as `{"version": <version>, "<key>": …}`, returning
 * the value under `key` (an object or an array, as `shape` says). Anything else — too large, not
 * JSON, another version, another shape — throws `fail(problem)`, so the caller's error names its
 * file; the caller must not carry on as if the file were empty.
 *
 * @example
 * ```ts
 * const pins = readStateBody(text, { version: 1, key: 'pins', shape: 'object', maxBytes: 4 << 20 }, (problem) =>
 *   new Error(`The pin file ${path} is not valid: ${problem}`),
 * );
 * ```
 */
export function readStateBody<Shape extends 'object' | 'array'>(
  text: string,
  expected: { readonly version: number; readonly key: string; readonly shape: Shape; readonly maxBytes: number },
  fail: (problem: string) => Error,
): Shape extends 'array' ? unknown[] : Record<string, unknown> {
  if (text.length > expected.maxBytes) throw fail('it is too large');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw fail('it is not JSON');
  }
  const body = isStateRecord(value) && value.version === expected.version ? value[expected.key] : undefined;
  const fits = expected.shape === 'array' ? Array.isArray(body) : isStateRecord(body);
  if (!fits) {
    const sample = expected.shape === 'array' ? '[...]' : '{...}';
    throw fail(`expected {"version": ${expected.version}, "${expected.key}": ${sample}}`);
  }
  return body as Shape extends 'array' ? unknown[] : Record<string, unknown>;
}

function isStateRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
