import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { BackendConfigError } from '../backend.js';
import { resolveProgram, resolveWorkingDirectory } from './resolve.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/command/', import.meta.url));

let scratch: string;
let bin: string;
before(async () => {
  scratch = await realpath(await mkdtemp(join(tmpdir(), 'airlock-command-resolve-')));
  bin = join(scratch, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'tool'), '#!/bin/sh\necho tool\n');
  await chmod(join(bin, 'tool'), 0o755);
  await writeFile(join(bin, 'plain'), 'not a program\n');
  await chmod(join(bin, 'plain'), 0o644);
  await mkdir(join(bin, 'folder'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('resolveProgram', () => {
  it('takes an absolute path as it is', () => {
    assert.equal(resolveProgram(join(bin, 'tool'), {}), join(bin, 'tool'));
  });

  it('resolves a relative path against the working directory of Airlock', () => {
    const relativePath = relative(process.cwd(), join(FIXTURES, 'upper.sh'));
    assert.ok(relativePath.includes('/'));
    assert.equal(resolveProgram(relativePath, {}), join(FIXTURES, 'upper.sh'));
    assert.equal(resolveProgram(`./${relativePath}`, {}), join(FIXTURES, 'upper.sh'));
  });

  it('looks a bare name up in PATH, first match, skipping empty and relative entries', () => {
    assert.equal(
      resolveProgram('tool', { PATH: `:relative/dir:${join(scratch, 'missing')}:${bin}:/bin` }),
      join(bin, 'tool'),
    );
    assert.equal(resolveProgram('sh', { PATH: `${bin}:/bin:/usr/bin` }), '/bin/sh');
  });

  it('skips PATH entries where the name is not an executable file', () => {
    assert.throws(() => resolveProgram('plain', { PATH: bin }), BackendConfigError);
    assert.throws(() => resolveProgram('folder', { PATH: bin }), BackendConfigError);
  });

  it('refuses a name that is nowhere in PATH, or with no PATH at all', () => {
    assert.throws(() => resolveProgram('no-such-tool-anywhere', { PATH: '/usr/bin:/bin' }), {
      name: 'BackendConfigError',
      message: /"no-such-tool-anywhere" was not found as an executable file in PATH/,
    });
    assert.throws(() => resolveProgram('tool', {}), BackendConfigError);
  });

  it('refuses a path that is missing, not a file or not executable, saying which', () => {
    assert.throws(() => resolveProgram(join(bin, 'missing'), {}), { message: /does not exist/ });
    assert.throws(() => resolveProgram(join(bin, 'folder'), {}), { message: /is not a regular file/ });
    assert.throws(() => resolveProgram(join(bin, 'plain'), {}), { message: /is not executable/ });
  });
});

describe('resolveWorkingDirectory', () => {
  it("defaults to Airlock's working directory and resolves relative paths against it", () => {
    assert.equal(resolveWorkingDirectory(undefined), process.cwd());
    assert.equal(resolveWorkingDirectory(relative(process.cwd(), bin) || '.'), bin);
    assert.equal(resolveWorkingDirectory(bin), bin);
  });

  it('refuses what is not an existing directory', () => {
    assert.throws(() => resolveWorkingDirectory(join(bin, 'tool')), { name: 'BackendConfigError', message: /cwd/ });
    assert.throws(() => resolveWorkingDirectory(join(scratch, 'missing')), BackendConfigError);
  });
});
