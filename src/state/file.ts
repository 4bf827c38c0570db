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
