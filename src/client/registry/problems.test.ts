import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RegistryError, parseRegistry } from '../registry.js';

describe('registry: every problem of a file in one run', () => {
  /** The problems of `text`, each as its one line. */
  function problemLines(text: string, env: NodeJS.ProcessEnv = {}): string[] {
    try {
      parseRegistry(text, env);
    } catch (error) {
      assert.ok(error instanceof RegistryError, String(error));
      assert.equal(error.message, error.problems.map((problem) => problem.line).join('\n'));
      return error.problems.map((problem) => problem.line);
    }
    assert.fail('expected a RegistryError');
  }

  it('reports each problem of each entry on its own line, naming the entry and the key', () => {
    const text = `agents:
  - name: travel
    card_url: http://travel.example.com/card
    description: Books trains.
    effect: maybe
    colour: blue
    skills: [ok, not ok]
  - name: wiki
    card_url: https://wiki.example.com/card
    rpc_url: https://169.254.169.254/rpc
    description: Reads.
    effect: read_only
    auth: { bearer_env: AIRLOCK_SECRET_WIKI }
    timeouts: { connect: 30, total: 10 }
  - name: wiki
    card_url: https://10.1.2.3/card
    effect: acting
`;
    assert.deepEqual(problemLines(text), [
      'registry: agents[0] "travel": effect: must be read_only or acting',
      'registry: agents[0] "travel": colour: is not a known setting',
      'registry: agents[0] "travel": skills[1]: must match pattern "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"',
      'registry: agents[2] "wiki": description: is required',
      'registry: agents[1] "wiki": rpc_url: host 169.254.169.254 is in a blocked range (metadata)',
      'registry: agents[1] "wiki": timeouts.connect: is longer than timeouts.total',
      'registry: agents[1] "wiki": timeouts.read: is longer than timeouts.total',
      'registry: agents[1] "wiki": auth.bearer_env: environment variable AIRLOCK_SECRET_WIKI is not set',
    ]);
  });

  it('reports the environment, duplicate names and every URL of an entry together', () => {
    const text = `agents:
  - { name: a, card_url: "ftp://a.example/card", rpc_url: "https://a.example/x#y", description: A, effect: read_only }
  - { name: a, card_url: "https://a.example/card", description: A, effect: read_only }
`;
    assert.deepEqual(problemLines(text, { AIRLOCK_EGRESS_PROXY: 'not a url' }), [
      'registry: AIRLOCK_EGRESS_PROXY: "not a url" is not a URL; expected http://host:port',
      'registry: agents[0] "a": card_url: must be an https URL',
      'registry: agents[0] "a": rpc_url: must not have a #fragment',
      'registry: agents[1] "a": name: is used by an earlier entry',
    ]);
  });

  it('keeps a single problem as before: one line, its entry and key', () => {
    const text =
      'agents:\n  - { name: travel, card_url: "https://t.example/c", description: T, effect: read_only, colour: blue }\n';
    assert.deepEqual(problemLines(text), ['registry: agents[0] "travel": colour: is not a known setting']);
    let error: unknown;
    try {
      parseRegistry(text, {});
    } catch (caught) {
      error = caught;
    }
    assert.ok(error instanceof RegistryError && !error.message.includes('\n'));
    assert.deepEqual([error.entry, error.key, error.problems.length], ['agents[0] "travel"', 'colour', 1]);
  });
});
