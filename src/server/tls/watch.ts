/**
 * Certificate rotation without a restart: the certificate, key and client CA files are polled
 * (`fs.watchFile`, which follows a path through renames and symlink swaps, as certbot and
 * Kubernetes secrets replace files), and a change is read again after a short debounce, so a
 * certificate and its key written one after the other are taken together. A replacement that
 * does not load (unreadable, not PEM, the key not the certificate's) is refused with a log line
 * and the pair in use stays.
 *
 * @example
 * ```ts
 * const watcher = watchTlsFiles(files, (material) => server.setSecureContext(material), { logger });
 * watcher.close();
 * ```
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import { readTlsMaterial, type TlsMaterial } from '../../config/tls.js';
import type { Logger } from '../log.js';

/**
 * How often the files are checked and how long a change settles before it is read.
 *
 * @example
 * ```ts
 * const timing: TlsWatchTiming = { intervalMs: 50, debounceMs: 50 }; // tests
 * ```
 */
export interface TlsWatchTiming {
  /** Default 2000 ms. */
  intervalMs?: number;
  /** Default 250 ms. */
  debounceMs?: number;
}

/**
 * A running watcher.
 *
 * @example
 * ```ts
 * watcher.close(); // with the server
 * ```
 */
export interface TlsWatcher {
  close(): void;
}

/**
 * Watches the TLS files and hands every replacement that loads to `apply`.
 *
 * @example
 * ```ts
 * watchTlsFiles({ certFile, keyFile }, (material) => server.setSecureContext({ ...material }), { logger });
 * ```
 */
export function watchTlsFiles(
  files: { certFile: string; keyFile: string; caFile?: string | undefined },
  apply: (material: TlsMaterial) => void,
  options: TlsWatchTiming & { logger: Logger },
): TlsWatcher {
  const { logger } = options;
  const intervalMs = options.intervalMs ?? 2000;
  const debounceMs = options.debounceMs ?? 250;
  const paths = [files.certFile, files.keyFile, ...(files.caFile === undefined ? [] : [files.caFile])];
  let timer: NodeJS.Timeout | undefined;
  const reload = (): void => {
    timer = undefined;
    try {
      apply(readTlsMaterial(files));
      logger.info({ event: 'tls_reloaded' });
    } catch (error) {
      // The message names the file and OpenSSL's reason, never key material.
      logger.error({ event: 'tls_reload_refused', error: error instanceof Error ? error.message : String(error) });
    }
  };
  const changed = (current: Stats, previous: Stats): void => {
    // A file that is gone for a moment (mid-replacement) is read once it is back.
    if (current.mtimeMs === previous.mtimeMs && current.ino === previous.ino && current.size === previous.size) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(reload, debounceMs);
    timer.unref();
  };
  for (const path of paths) watchFile(path, { interval: intervalMs, persistent: false }, changed);
  return {
    close: () => {
      if (timer !== undefined) clearTimeout(timer);
      for (const path of paths) unwatchFile(path, changed);
    },
  };
}
