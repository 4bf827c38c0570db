import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig, type AirlockConfig } from '../../config/load.js';
import { ConfigError } from '../../config/errors.js';
import type { Logger } from '../log.js';
import { createReloader, type ReloadOutcome } from './reloader.js';

const TOKENS = { TOKEN_A: 'a'.repeat(40), TOKEN_B: 'b'.repeat(40) };
const AGENTS = `agents:
  - { slug: echo, name: Echo, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
`;
const A = `${AGENTS}clients:\n  - { id: a, token: "\${TOKEN_A}", agents: [echo] }\n`;
const B = `${AGENTS}clients:\n  - { id: b, token: "\${TOKEN_B}", agents: [echo] }\n`;

function load(yaml: string): AirlockConfig {
  return parseConfig(yaml, TOKENS);
}

function harness(apply: (next: AirlockConfig) => void = () => undefined) {
  const lines: Record<string, unknown>[] = [];
  const outcomes: ReloadOutcome[] = [];
  const applied: AirlockConfig[] = [];
  const logger: Logger = { info: (f) => lines.push(f), warn: (f) => lines.push(f), error: (f) => lines.push(f) };
  const reload = createReloader({
    config: load(A),
    context: { sharedLimits: false },
    logger,
    onReload: (outcome) => outcomes.push(outcome),
    apply: (next) => {
      apply(next);
      applied.push(next);
    },
  });
  return { reload, lines, outcomes, applied };
}

describe('createReloader', () => {
  it('applies a live change, one log line with the key names and no value, and compares later reloads with it', () => {
    const h = harness();
    const outcome = h.reload(() => load(B));
    assert.deepEqual(outcome, { outcome: 'applied', changed: ['clients[a]', 'clients[b]'] });
    assert.deepEqual(h.lines, [{ event: 'config_reloaded', changed: ['clients[a]', 'clients[b]'] }]);
    assert.deepEqual(h.outcomes, [outcome]);
    assert.equal(h.applied.length, 1);
    // The same file again: nothing changed, nothing applied.
    assert.deepEqual(
      h.reload(() => load(B)),
      { outcome: 'applied', changed: [] },
    );
    assert.equal(h.applied.length, 1);
    assert.ok(!JSON.stringify(h.lines).includes('b'.repeat(8)));
  });

  it('refuses a file that does not load, with its one line, and keeps the running config', () => {
    const h = harness();
    const outcome = h.reload(() => load(`${A}limits: { maxParts: 0 }\n`));
    assert.equal(outcome.outcome, 'refused');
    assert.equal(outcome.outcome === 'refused' && outcome.reason, 'invalid_config');
    assert.match(
      outcome.outcome === 'refused' ? outcome.message : '',
      /^config: limits\.maxParts: .*; the running config is kept$/,
    );
    assert.equal(h.lines.length, 1);
    assert.equal(h.lines[0]?.event, 'config_reload_refused');
    assert.equal(h.applied.length, 0);
    // A foreign error says only its kind (its text might hold anything).
    const odd = h.reload(() => {
      throw new TypeError(`token ${'a'.repeat(40)}`);
    });
    assert.equal(
      odd.outcome === 'refused' && odd.message,
      'config: could not be loaded (TypeError); the running config is kept',
    );
  });

  it('refuses a file with a key that needs a restart whole: the live part is not applied either', () => {
    const h = harness();
    const outcome = h.reload(() => load(`${B}server: { port: 9 }\n`));
    assert.deepEqual(outcome, {
      outcome: 'refused',
      reason: 'needs_restart',
      message:
        'these keys need a restart: server.port; nothing was applied (restart airlock serve, or undo them and reload)',
      restart: ['server.port'],
    });
    assert.equal(h.applied.length, 0);
    // Still compared with the config that runs: the live change alone now applies.
    assert.equal(h.reload(() => load(B)).outcome, 'applied');
  });

  it('a part that cannot be built: refused, and the next reload is still compared with the running config', () => {
    let fail = true;
    const h = harness(() => {
      if (fail) throw new ConfigError('auth.jwt', 'no key can verify ES256');
    });
    const outcome = h.reload(() => load(B));
    assert.equal(outcome.outcome === 'refused' && outcome.reason, 'apply_failed');
    fail = false;
    assert.deepEqual(
      h.reload(() => load(B)),
      { outcome: 'applied', changed: ['clients[a]', 'clients[b]'] },
    );
  });
});
