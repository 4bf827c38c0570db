import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startCommandProcess, terminateGroup, type CommandProcessOptions } from './process.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/command/', import.meta.url));

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'airlock-command-process-'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A fresh directory for one test's pid files. */
async function pidDirectory(): Promise<string> {
  return mkdtemp(join(scratch, 'pids-'));
}

function options(program: string, overrides: Partial<CommandProcessOptions> = {}): CommandProcessOptions {
  return {
    program: program.includes('/') ? program : join(FIXTURES, program),
    // Short, so that a test waiting for `terminated` where init leaves zombies (they count as
    // members of the group until reaped) does not wait the full default.
    killGraceMs: 500,
    args: [],
    cwd: scratch,
    env: {},
    stdin: '',
    timeoutMs: 10_000,
    maxOutputBytes: 1024 * 1024,
    maxStderrBytes: 8192,
    onStdout: () => undefined,
    ...overrides,
  };
}

/**
 * True while `pid` is a live process. A zombie counts as gone: it runs nothing, and where init
 * does not reap orphans (some containers) a killed grandchild stays one.
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).charAt(0) !== 'Z';
  } catch {
    return true; // no /proc: kill(pid, 0) is all there is
  }
}

async function eventually(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits for a pid file the script writes, and reads it. */
async function readPid(directory: string, name: string): Promise<number> {
  let text = '';
  await eventually(
    () => {
      try {
        text = readFileSync(join(directory, name), 'utf8');
      } catch {
        return false;
      }
      return text.endsWith('\n');
    },
    5000,
    `${name} pid file`,
  );
  return Number(text.trim());
}

describe('startCommandProcess', () => {
  it('writes stdin, streams stdout and reports the exit code', async () => {
    const chunks: string[] = [];
    const run = startCommandProcess(
      options('upper.sh', { stdin: 'hello there', onStdout: (text) => chunks.push(text) }),
    );
    assert.ok(typeof run.pid === 'number');
    const result = await run.finished;
    assert.deepEqual(result.end, { kind: 'exited', code: 0 });
    assert.equal(chunks.join(''), 'HELLO THERE');
    assert.equal(result.outputBytes, 11);
    assert.equal(result.stderr.bytes, 0);
    await run.terminated;
  });

  it('never hands on half of a UTF-8 character cut between two reads', async () => {
    const chunks: string[] = [];
    const result = await startCommandProcess(options('utf8.sh', { onStdout: (text) => chunks.push(text) })).finished;
    assert.deepEqual(result.end, { kind: 'exited', code: 0 });
    assert.equal(chunks.join(''), 'é€\n');
    assert.ok(
      chunks.every((chunk) => !chunk.includes('\uFFFD')),
      JSON.stringify(chunks),
    );
  });

  it('reports a non-zero exit code and a death by signal', async () => {
    assert.deepEqual((await startCommandProcess(options('exit.sh', { args: ['7'] })).finished).end, {
      kind: 'exited',
      code: 7,
    });
    const signaled = await startCommandProcess(options('/bin/sh', { args: ['-c', 'kill -USR1 $$'] })).finished;
    assert.deepEqual(signaled.end, { kind: 'signaled', signal: 'SIGUSR1' });
  });

  it('ends spawn-failed (never throws) for a missing or non-executable program', async () => {
    const missing = await startCommandProcess(options(join(scratch, 'no-such-program'))).finished;
    assert.equal(missing.end.kind, 'spawn-failed');
    assert.equal(missing.end.kind === 'spawn-failed' && missing.end.code, 'ENOENT');
    const script = join(scratch, 'not-executable.sh');
    await writeFile(script, '#!/bin/sh\necho hi\n');
    await chmod(script, 0o644);
    const denied = await startCommandProcess(options(script)).finished;
    assert.equal(denied.end.kind === 'spawn-failed' && denied.end.code, 'EACCES');
    const nul = await startCommandProcess(options('args.sh', { args: ['a\0b'] })).finished;
    assert.equal(nul.end.kind, 'spawn-failed');
  });

  it('survives a program that does not read its stdin (EPIPE)', async () => {
    const chunks: string[] = [];
    const run = startCommandProcess(
      options('no-stdin.sh', { stdin: 'x'.repeat(4 * 1024 * 1024), onStdout: (text) => chunks.push(text) }),
    );
    assert.deepEqual((await run.finished).end, { kind: 'exited', code: 0 });
    assert.equal(chunks.join(''), 'ignored\n');
  });

  it('keeps the head of stderr, counts all of it and strips control characters', async () => {
    const result = await startCommandProcess(options('stderr.sh', { maxStderrBytes: 30 })).finished;
    assert.equal(result.stderr.bytes, 19 + 200 * 20);
    assert.equal(result.stderr.truncated, true);
    assert.equal(result.stderr.text, 'bad [31mred end\nxxxxxxxxxxx');
    const none = await startCommandProcess(options('stderr.sh', { maxStderrBytes: 0 })).finished;
    assert.deepEqual(none.stderr, { bytes: 4019, text: '', truncated: true });
  });

  it('kills the whole group on timeout, grandchild included', async () => {
    const pids = await pidDirectory();
    const run = startCommandProcess(options('hang.sh', { args: [pids], timeoutMs: 300 }));
    const [leader, grandchild] = [await readPid(pids, 'leader'), await readPid(pids, 'grandchild')];
    assert.equal(leader, run.pid);
    const result = await run.finished;
    assert.deepEqual(result.end, { kind: 'timed-out' });
    assert.ok(result.durationMs >= 290, `ended after ${result.durationMs} ms`);
    await run.terminated;
    await eventually(() => !isRunning(leader) && !isRunning(grandchild), 3000, 'the group to be gone');
  });

  it('stop() kills a pipeline and everything in it', async () => {
    const pids = await pidDirectory();
    const run = startCommandProcess(options('pipeline.sh', { args: [pids] }));
    const [leader, member] = [await readPid(pids, 'leader'), await readPid(pids, 'grandchild')];
    assert.ok(isRunning(member));
    run.stop();
    run.stop(); // idempotent
    assert.deepEqual((await run.finished).end, { kind: 'stopped' });
    await run.terminated;
    await eventually(() => !isRunning(leader) && !isRunning(member), 3000, 'the pipeline to be gone');
  });

  it('sends SIGKILL after the grace period to a group that ignores SIGTERM', async () => {
    const pids = await pidDirectory();
    const run = startCommandProcess(options('stubborn.sh', { args: [pids], killGraceMs: 200 }));
    const [leader, grandchild] = [await readPid(pids, 'leader'), await readPid(pids, 'grandchild')];
    const started = Date.now();
    run.stop();
    const result = await run.finished;
    assert.deepEqual(result.end, { kind: 'stopped' });
    assert.ok(Date.now() - started >= 150, 'SIGTERM alone did not end it');
    await run.terminated;
    await eventually(() => !isRunning(leader) && !isRunning(grandchild), 3000, 'the group to be gone');
  });

  it('ends what the program left behind when it exits, so its end is not held up', async () => {
    const pids = await pidDirectory();
    const chunks: string[] = [];
    const started = Date.now();
    const run = startCommandProcess(options('leave-behind.sh', { args: [pids], onStdout: (t) => chunks.push(t) }));
    const result = await run.finished;
    assert.deepEqual(result.end, { kind: 'exited', code: 0 });
    assert.equal(chunks.join(''), 'bye\n');
    assert.ok(Date.now() - started < 1500, 'the background job holding stdout was killed');
    const grandchild = Number((await readFile(join(pids, 'grandchild'), 'utf8')).trim());
    await run.terminated;
    await eventually(() => !isRunning(grandchild), 3000, 'the background job to be gone');
  });

  it('kills the group when stdout passes the cap, and hands on nothing beyond it', async () => {
    let handed = 0;
    const run = startCommandProcess(
      options('flood.sh', { maxOutputBytes: 64 * 1024, onStdout: (text) => (handed += Buffer.byteLength(text)) }),
    );
    const result = await run.finished;
    assert.deepEqual(result.end, { kind: 'output-exceeded' });
    assert.ok(result.outputBytes > 64 * 1024);
    assert.ok(handed <= 64 * 1024, `handed on ${handed} bytes`);
    await run.terminated;
  });
});

describe('terminateGroup', () => {
  it('resolves at once for a group that is gone', async () => {
    const run = startCommandProcess(options('no-stdin.sh'));
    await run.finished;
    const started = Date.now();
    await terminateGroup(run.pid!, 5000);
    assert.ok(Date.now() - started < 100);
  });
});
