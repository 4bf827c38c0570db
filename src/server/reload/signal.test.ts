import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { AirlockConfig } from '../../config/airlock-config.js';
import { ConfigError } from '../../config/errors.js';
import { readReloadOutcome, serveFiles } from './pid-file.js';
import type { ReloadOutcome } from './reloader.js';
import { reloadOnSignal } from './signal.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-signal-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(check());
}

describe('reloadOnSignal', () => {
  it('runs one load at a time, applies each, reports a bad file, and does nothing once stopping', async () => {
    const files = serveFiles(join(dir, 'airlock.yaml'));
    const events: string[] = [];
    let running = 0;
    let stopping = false;
    let loads = 0;
    const outcomes: ReloadOutcome[] = [];
    reloadOnSignal({
      signal: 'SIGUSR2',
      files,
      logger: { error: (record) => events.push(`error ${JSON.stringify(record)}`) },
      stopping: () => stopping,
      load: async () => {
        const n = ++loads;
        running += 1;
        assert.equal(running, 1, 'loads never overlap');
        events.push(`load ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 40));
        running -= 1;
        if (n === 3) throw new ConfigError('limits.maxParts', 'must be >= 1');
        return { n } as unknown as AirlockConfig;
      },
      gateway: {
        reload: (load) => {
          let outcome: ReloadOutcome;
          try {
            const config = load() as unknown as { n: number };
            events.push(`applied ${config.n}`);
            outcome = { outcome: 'applied', changed: [`load ${config.n}`] };
          } catch (error) {
            events.push(`refused ${(error as Error).message}`);
            outcome = { outcome: 'refused', reason: 'invalid_config', message: (error as Error).message };
          }
          outcomes.push(outcome);
          return outcome;
        },
      },
    });
    // Three signals during the first load: three loads, one after the other, each applied (or
    // refused) in order. (Spaced a little: the kernel does not queue a signal already pending.)
    for (let i = 0; i < 3; i++) {
      process.kill(process.pid, 'SIGUSR2');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await until(() => outcomes.length === 3);
    assert.deepEqual(events, [
      'load 1',
      'applied 1',
      'load 2',
      'applied 2',
      'load 3',
      'refused config: limits.maxParts: must be >= 1',
    ]);
    await until(() => readReloadOutcome(files)?.outcome.outcome === 'refused');

    // A load under way when the gateway starts stopping is not applied; later signals do nothing.
    process.kill(process.pid, 'SIGUSR2');
    await until(() => loads === 4);
    stopping = true;
    process.kill(process.pid, 'SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(loads, 4);
    assert.equal(outcomes.length, 3);
  });
});
