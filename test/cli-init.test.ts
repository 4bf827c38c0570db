/**
 * `airlock init` as a person runs it (the CLI in a child process, in a temporary folder): the
 * exact lines it prints, the files it writes (the token 0600, never printed), the config the
 * real loader accepts, and the refusal to write over an existing config.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfigFile } from '../src/config/load.js';
import { hashToken } from '../src/config/tokens.js';
import { CLI } from './helpers/cli.js';

function airlock(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [...CLI, ...args], { cwd, encoding: 'utf8', timeout: 30_000 });
}

describe('airlock init', () => {
  let dir: string;
  let first: ReturnType<typeof airlock>;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-init-cli-'));
    first = airlock(['init'], dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints what it wrote and the next three commands, exactly', () => {
    assert.equal(first.stderr, '');
    assert.equal(first.status, 0);
    assert.deepEqual(first.stdout.split('\n'), [
      'wrote airlock.yaml: one echo agent on 127.0.0.1:41240, one client "local", audit on',
      "wrote .airlock/client-token (mode 0600): the client's token (not printed)",
      'next: start it, call it from another terminal, check it:',
      '  npx airlock serve --config airlock.yaml',
      '  AIRLOCK_TOKEN="$(cat .airlock/client-token)" npx airlock call http://127.0.0.1:41240/a2a/echo "hello"',
      '  npx airlock doctor --config airlock.yaml',
      '',
    ]);
  });

  it('keeps the token in .airlock/client-token, mode 0600, in a 0700 folder, and never prints it', () => {
    const token = readFileSync(join(dir, '.airlock/client-token'), 'utf8').trim();
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(statSync(join(dir, '.airlock/client-token')).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, '.airlock')).mode & 0o777, 0o700);
    assert.ok(!first.stdout.includes(token));
    assert.ok(!readFileSync(join(dir, 'airlock.yaml'), 'utf8').includes(token));
  });

  it('the config loads with the real loader: the echo agent, the client with that token, the audit file', () => {
    const cwd = process.cwd();
    process.chdir(dir); // the config's paths are relative to where airlock runs
    try {
      const config = loadConfigFile('airlock.yaml', {});
      const token = readFileSync('.airlock/client-token', 'utf8').trim();
      assert.equal(config.server.port, 41240);
      assert.deepEqual(
        config.agents.map((agent) => agent.backend.type),
        ['echo'],
      );
      assert.equal(config.clients[0]!.id, 'local');
      assert.deepEqual(config.clients[0]!.tokenDigest, hashToken(token));
      assert.deepEqual([...config.clients[0]!.agents], ['echo']);
      assert.equal(config.audit.file, '.airlock/audit.jsonl');
    } finally {
      process.chdir(cwd);
    }
  });

  it('run again, it refuses in one line and changes nothing', () => {
    const config = readFileSync(join(dir, 'airlock.yaml'), 'utf8');
    const token = readFileSync(join(dir, '.airlock/client-token'), 'utf8');
    const again = airlock(['init', '--port', '41250'], dir);
    assert.equal(again.status, 1);
    assert.equal(again.stdout, '');
    assert.equal(again.stderr, 'airlock: airlock.yaml already exists; nothing written (use --force to replace it)\n');
    assert.equal(readFileSync(join(dir, 'airlock.yaml'), 'utf8'), config);
    assert.equal(readFileSync(join(dir, '.airlock/client-token'), 'utf8'), token);
  });
});
