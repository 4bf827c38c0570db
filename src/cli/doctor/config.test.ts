/**
 * The config and token checks: a token serve would generate is reported, never written; a
 * token file open to others fails with the chmod that fixes it.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../config/errors.js';
import { configLine, loadConfigForDoctor, tokenLines } from './config.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-doctor-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const AGENT = `agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes. }]
    backend: { type: echo }
`;

function configFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('doctor: config and tokens', () => {
  it('loads a config whose token serve would generate, without generating it', () => {
    const tokenFile = join(dir, 'state', 'demo-token');
    const path = configFile(
      'generate.yaml',
      `${AGENT}clients:\n  - { id: demo, token: { env: DOCTOR_TEST_TOKEN, file: ${tokenFile}, generate: true }, agents: [echo] }\n`,
    );
    const loaded = loadConfigForDoctor(path, {});
    assert.equal(existsSync(tokenFile), false, 'doctor wrote no token');
    assert.deepEqual(loaded.toGenerate, [{ key: 'clients[0].token', file: tokenFile }]);
    assert.deepEqual(configLine('generate.yaml', loaded.config), {
      status: 'ok',
      check: 'config',
      detail: 'generate.yaml: 1 agent, 1 client',
    });
    assert.deepEqual(tokenLines(loaded), [
      { status: 'ok', check: 'tokens', detail: '1 token' },
      {
        status: 'ok',
        check: 'tokens',
        detail: `clients[0].token: ${tokenFile} does not exist yet; airlock serve generates it (mode 0600)`,
      },
    ]);
  });

  it('a token file others may read fails with the fix', () => {
    const tokenFile = join(dir, 'open-token');
    writeFileSync(tokenFile, `${'t'.repeat(43)}\n`);
    chmodSync(tokenFile, 0o644);
    const path = configFile(
      'open.yaml',
      `${AGENT}clients:\n  - { id: me, token: { file: ${tokenFile} }, agents: [echo] }\n`,
    );
    const lines = tokenLines(loadConfigForDoctor(path, {}));
    assert.deepEqual(lines, [
      {
        status: 'fail',
        check: 'tokens',
        detail: `client "me": ${tokenFile} is open to others (mode 0644): chmod 600 ${tokenFile}`,
      },
    ]);
    chmodSync(tokenFile, 0o600);
    assert.deepEqual(tokenLines(loadConfigForDoctor(path, {})), [
      { status: 'ok', check: 'tokens', detail: '1 token, 1 from a file (0600)' },
    ]);
  });

  it("a bad config throws the loader's own one-line error", () => {
    const path = configFile('bad.yaml', `${AGENT}clients:\n  - { id: me, token: short, agents: [echo] }\n`);
    assert.throws(
      () => loadConfigForDoctor(path, {}),
      (error: unknown) =>
        error instanceof ConfigError && /^config: clients\[0\]\.token: token must be at least 32/.test(error.message),
    );
    assert.throws(() => loadConfigForDoctor(join(dir, 'missing.yaml'), {}), ConfigError);
  });

  it('no clients: the token check is skipped', () => {
    const loaded = loadConfigForDoctor(configFile('none.yaml', AGENT), {});
    assert.deepEqual(tokenLines(loaded), [
      { status: 'skip', check: 'tokens', detail: 'no client or person tokens configured' },
    ]);
  });
});
