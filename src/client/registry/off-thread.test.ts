import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { RegistryError, loadRegistryFile } from '../registry.js';
import { loadRegistryFileOffThread } from './off-thread.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-registry-off-thread-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const GOOD = `agents:
  - name: travel
    card_url: https://travel.example.com/.well-known/agent-card.json
    description: Books trains and hotels.
    effect: acting
    auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }
    skills: [book]
  - name: wiki
    card_url: https://wiki.example.com/card
    description: Reads.
    effect: read_only
    timeouts: { connect: 2, read: 5, total: 10 }
`;

/** Several problems: the schema's (in the worker) and the entries' own (here), in one error. */
const BAD = `agents:
  - name: travel
    card_url: http://travel.example.com/card
    description: Books trains.
    effect: maybe
    colour: blue
  - name: wiki
    card_url: https://wiki.example.com/card
    rpc_url: https://169.254.169.254/rpc
    description: Reads.
    effect: read_only
    auth: { bearer_env: AIRLOCK_SECRET_WIKI }
  - name: wiki
    card_url: https://10.1.2.3/card
    effect: acting
`;

function written(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('loadRegistryFileOffThread', () => {
  it('builds the registry loadRegistryFile builds', async () => {
    const env = { AIRLOCK_SECRET_TRAVEL: 'travel-token-0123456789' };
    const path = written('good.yaml', GOOD);
    const offThread = await loadRegistryFileOffThread(path, env);
    const inProcess = loadRegistryFile(path, env);
    assert.deepEqual(offThread.names(), ['travel', 'wiki']);
    assert.equal(JSON.stringify(offThread), JSON.stringify(inProcess));
    assert.deepEqual(offThread.network, inProcess.network);
  });

  it('reports every problem of a bad file as loadRegistryFile does, the schema’s first', async () => {
    const path = written('bad.yaml', BAD);
    let expected: RegistryError | undefined;
    try {
      loadRegistryFile(path, {});
    } catch (error) {
      assert.ok(error instanceof RegistryError);
      expected = error;
    }
    assert.ok(expected !== undefined && expected.problems.length >= 4, expected?.message);
    await assert.rejects(
      loadRegistryFileOffThread(path, {}),
      (error: unknown) =>
        error instanceof RegistryError &&
        error.message === expected.message &&
        error.entry === expected.entry &&
        error.key === expected.key,
    );
    await assert.rejects(loadRegistryFileOffThread(written('list.yaml', '- a\n'), {}), /expected a mapping/);
  });
});
