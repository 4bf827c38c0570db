/**
 * SIGHUP (or `airlock reload`) as a reload of a serving gateway. The file is read and checked
 * (the schema step in a worker thread) while requests go on; the new config is then applied in
 * one synchronous step and the outcome written for `airlock reload` (./pid-file.ts). A signal
 * that comes during a load waits for it: loads never overlap. Once the gateway is stopping, a
 * signal does nothing and a load under way is not applied.
 *
 * @example
 * ```ts
 * reloadOnSignal({ gateway, files: serveFiles(path), logger, stopping: () => false, load: () => loadConfigFileOffThread(path) });
 * ```
 */
import type { AirlockConfig } from '../../config/airlock-config.js';
import type { Logger } from '../log.js';
import { writeReloadOutcome, type ServeFiles } from './pid-file.js';
import type { ReloadOutcome } from './reloader.js';

/**
 * What a signalled reload needs of the serving process.
 *
 * @example
 * ```ts
 * const setup: SignalledReload = { gateway, files, logger, stopping: () => stopping, load };
 * ```
 */
export interface SignalledReload {
  readonly gateway: { reload(load: () => AirlockConfig): ReloadOutcome };
  /** Reads and checks the config anew (rejects with the reason it cannot be used). */
  readonly load: () => Promise<AirlockConfig>;
  readonly files: ServeFiles;
  readonly logger: Pick<Logger, 'error'>;
  readonly stopping: () => boolean;
  /** Default SIGHUP. */
  readonly signal?: NodeJS.Signals;
}

/**
 * Reloads the gateway on each `signal` (SIGHUP), one load at a time.
 *
 * @example
 * ```ts
 * reloadOnSignal({ gateway, files, logger, stopping: () => stopping, load });
 * process.kill(process.pid, 'SIGHUP'); // the outcome lands in files.outcome
 * ```
 */
export function reloadOnSignal(setup: SignalledReload): void {
  let reloads: Promise<void> = Promise.resolve();
  process.on(setup.signal ?? 'SIGHUP', () => {
    if (setup.stopping()) return;
    reloads = reloads
      .then(async () => {
        const loaded = await setup.load().then(
          (next) => ({ next }),
          (error: unknown) => ({ error }),
        );
        if (setup.stopping()) return;
        const outcome = setup.gateway.reload(() => {
          if ('error' in loaded) throw loaded.error;
          return loaded.next;
        });
        await writeReloadOutcome(setup.files, outcome).catch(() => undefined);
      })
      // Only a bug fails outside the config (the gateway reports a bad file as its outcome);
      // it is logged, and the chain stays usable for the next signal.
      .catch((error: unknown) =>
        setup.logger.error({
          event: 'config_reload_failed',
          error: error instanceof Error ? error.message : String(error),
        }),
      );
  });
}
