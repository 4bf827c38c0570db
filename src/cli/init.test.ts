/**
 * `airlock init` as a function: the starter config loads with the real loader, the token file
 * is owner-only and never printed, an existing config is refused, `--force` keeps the token.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../config/load.js';
import { InitError, initCommand, starterConfig, writeStarter } from './init.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-init-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('airlock init', () => {
  it('writes a config the loader accepts, with the token in a 0600 file', () => {
    const dir = tempDir();
    const lines = writeStarter({ cwd: dir });
    assert.equal(lines[0], 'wrote airlock.yaml: one echo agent on 127.0.0.1:41240, one client "local", audit on');
    const token = readFileSync(join(dir, '.airlock/client-token'), 'utf8').trim();
    assert.equal(token.length, 43);
    assert.equal(statSync(join(dir, '.airlock/client-token')).mode & 0o777, 0o600);
    assert.ok(!lines.join('\n').includes(token), 'the token is never printed');
    const text = readFileSync(join(dir, 'airlock.yaml'), 'utf8');
    assert.equal(text, starterConfig(41240));
    assert.ok(!text.includes(token));
  });

  it('the starter config parses: one agent, one client from the token file, the audit file on', () => {
    const dir = tempDir();
    writeStarter({ cwd: dir, port: 41250 });
    const text = readFileSync(join(dir, 'airlock.yaml'), 'utf8').replace(
      '.airlock/client-token',
      join(dir, '.airlock/client-token'),
    );
    const config = parseConfig(text, {});
    assert.equal(config.server.port, 41250);
    assert.equal(config.server.host, '127.0.0.1');
    assert.deepEqual(
      config.agents.map((agent) => agent.slug),
      ['echo'],
    );
    assert.equal(config.clients.length, 1);
    assert.equal(config.clients[0]!.tokenOrigin.kind, 'file');
    assert.equal(config.audit.file, '.airlock/audit.jsonl');
    assert.equal(config.store.type, 'memory');
  });

  it('refuses to replace an existing config, in one line, and writes nothing', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'airlock.yaml'), 'mine\n');
    assert.throws(
      () => writeStarter({ cwd: dir }),
      (error: unknown) => error instanceof InitError && error.code === 'init_config_exists',
    );
    const err: string[] = [];
    assert.equal(initCommand({ cwd: dir }, { stdout: () => undefined, stderr: (text) => err.push(text) }), 1);
    assert.deepEqual(err, ['airlock: airlock.yaml already exists; nothing written (use --force to replace it)\n']);
    assert.equal(readFileSync(join(dir, 'airlock.yaml'), 'utf8'), 'mine\n');
  });

  it('--force replaces the config and keeps the existing token', () => {
    const dir = tempDir();
    writeStarter({ cwd: dir });
    const token = readFileSync(join(dir, '.airlock/client-token'), 'utf8');
    const lines = writeStarter({ cwd: dir, force: true, port: 41260 });
    assert.equal(lines[1], "kept .airlock/client-token: the client's existing token (not printed)");
    assert.equal(readFileSync(join(dir, '.airlock/client-token'), 'utf8'), token);
    assert.match(readFileSync(join(dir, 'airlock.yaml'), 'utf8'), /port: 41260/);
  });

  it('--dir writes there and says where to run the commands', () => {
    const cwd = tempDir();
    const lines = writeStarter({ cwd, dir: 'gw' });
    assert.equal(lines[0], 'wrote gw/airlock.yaml: one echo agent on 127.0.0.1:41240, one client "local", audit on');
    assert.equal(lines[2], 'next, in gw:');
    assert.equal(statSync(join(cwd, 'gw/.airlock/client-token')).mode & 0o777, 0o600);
  });

  it('refuses a port a caller could not use', () => {
    assert.throws(() => writeStarter({ cwd: tempDir(), port: 0 }), /--port must be 1\.\.65535/);
  });
});
