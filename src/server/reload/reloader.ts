/**
 * One config reload, start to end: load the new config, compare it with the running one
 * (diff.ts), refuse it whole when it is invalid or changes a key that needs a restart (the old
 * config keeps serving), else hand the new config to the gateway's `apply` and make it the
 * running one. Every outcome is one log line (`config_reloaded` with the changed key names, or
 * `config_reload_refused` with the reason line), never a value, and goes to `onReload` (the
 * metrics counter).
 *
 * @example
 * ```ts
 * const reload = createReloader({ config, context: { sharedLimits: false }, apply, logger });
 * reload(() => loadConfigFile('airlock.yaml')); // { outcome: 'applied', changed: ['clients[b]'] }
 * ```
 */
import type { AirlockConfig } from '../../config/load.js';
import { AirlockError } from '../../errors/index.js';
import type { Logger } from '../log.js';
import { diffConfigs, type ConfigDiff, type ReloadContext } from './diff.js';

/**
 * What a reload did. `applied` with no `changed` key: the file said nothing new.
 * `invalid_config`: the file did not load (YAML, schema, a reference, a secret); `needs_restart`:
 * it changes keys only a restart applies (`restart` names them); `apply_failed`: building a part
 * from it failed (the old config is kept).
 *
 * @example
 * ```ts
 * const outcome: ReloadOutcome = { outcome: 'refused', reason: 'needs_restart', message: '…', restart: ['server.port'] };
 * ```
 */
export type ReloadOutcome =
  | { outcome: 'applied'; changed: string[] }
  | {
      outcome: 'refused';
      reason: 'invalid_config' | 'needs_restart' | 'apply_failed';
      /** One line for the operator: what is wrong and what to do. */
      message: string;
      restart?: string[];
    };

/**
 * What the reloader needs: the running config, what the gateway is besides it, how to apply a
 * new one, and where outcomes go.
 *
 * @example
 * ```ts
 * const options: ReloaderOptions = { config, context: { sharedLimits: false }, apply: (next) => swap(next), logger };
 * ```
 */
export interface ReloaderOptions {
  config: AirlockConfig;
  context: ReloadContext;
  /** Builds the live parts from `next` and swaps them in; throws (having swapped nothing) when it cannot. */
  apply: (next: AirlockConfig, diff: ConfigDiff) => void;
  logger: Logger;
  /** Told of every outcome (a metric: `airlock_config_reloads_total{outcome}`). */
  onReload?: (outcome: ReloadOutcome) => void;
}

/**
 * The reload function of one gateway. Reloads run one at a time (they are synchronous).
 *
 * @example
 * ```ts
 * const reload = createReloader(options);
 * process.on('SIGHUP', () => reload(() => loadConfigFile(path)));
 * ```
 */
export function createReloader(options: ReloaderOptions): (load: () => AirlockConfig) => ReloadOutcome {
  const { context, apply, logger } = options;
  let running = options.config;
  const settle = (outcome: ReloadOutcome): ReloadOutcome => {
    if (outcome.outcome === 'applied') {
      logger.info({ event: 'config_reloaded', changed: outcome.changed });
    } else {
      logger.warn({
        event: 'config_reload_refused',
        reason: outcome.reason,
        message: outcome.message,
        ...(outcome.restart !== undefined && { restart: outcome.restart }),
      });
    }
    options.onReload?.(outcome);
    return outcome;
  };
  return (load) => {
    let next: AirlockConfig;
    try {
      next = load();
    } catch (error) {
      return settle({
        outcome: 'refused',
        reason: 'invalid_config',
        message: `${describe(error)}; the running config is kept`,
      });
    }
    const diff = diffConfigs(running, next, context);
    if (diff.restart.length > 0) {
      return settle({
        outcome: 'refused',
        reason: 'needs_restart',
        message: `these keys need a restart: ${diff.restart.join(', ')}; nothing was applied (restart airlock serve, or undo them and reload)`,
        restart: diff.restart,
      });
    }
    if (diff.changed.length > 0) {
      try {
        apply(next, diff);
      } catch (error) {
        return settle({
          outcome: 'refused',
          reason: 'apply_failed',
          message: `${describe(error)}; the running config is kept`,
        });
      }
    }
    running = next;
    return settle({ outcome: 'applied', changed: diff.changed });
  };
}

/** The error's own one line when it is ours (a ConfigError names the key); else only its code. */
function describe(error: unknown): string {
  if (error instanceof AirlockError) return error.message;
  return `config: could not be loaded (${error instanceof Error ? error.name : 'error'})`;
}
