import assert from 'node:assert/strict';
import { readFileSync, realpathSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { collect, fakeTurn } from '../../../test/helpers/agent-turn.js';
import type { CommandBackendConfig } from './schema.js';
import { BackendConfigError, type AgentBackend, type AgentEvent, type BackendContext } from '../backend.js';
import { createCommandBackend } from './index.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/command/', import.meta.url));
const SYSTEM_PATH = '/usr/bin:/bin';

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'airlock-command-backend-'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

interface LogLine {
  level: string;
  event: string;
  fields: Readonly<Record<string, string | number | boolean>>;
}

/** A config as the loader would produce it (defaults applied), for a fixture script by default. */
function commandConfig(command: string, overrides: Partial<CommandBackendConfig> = {}): CommandBackendConfig {
  return {
    type: 'command',
    command: command.includes('/') || !command.endsWith('.sh') ? command : join(FIXTURES, command),
    args: [],
    env: {},
    passEnv: [],
    input: 'text',
    timeoutMs: 10_000,
    maxOutputBytes: 1024 * 1024,
    maxStderrBytes: 8192,
    ...overrides,
  };
}

function backendWithLog(
  config: CommandBackendConfig,
  context: Omit<BackendContext, 'log'> = {},
): { backend: AgentBackend; logs: LogLine[] } {
  const logs: LogLine[] = [];
  const backend = createCommandBackend(config, {
    agent: 'cmd',
    ...context,
    log: (level, event, fields) => logs.push({ level, event, fields }),
  });
  return { backend, logs };
}

/**
 * Consecutive text events joined (`last` kept if any had it): whether the last chunk carries the
 * end mark or an empty chunk follows it depends on whether the reader took it before the exit.
 */
function joined(events: readonly AgentEvent[]): AgentEvent[] {
  const out: AgentEvent[] = [];
  for (const event of events) {
    const previous = out.at(-1);
    if (event.type === 'text' && previous?.type === 'text') {
      const last = previous.last === true || event.last === true;
      out[out.length - 1] = { type: 'text', text: previous.text + event.text, ...(last && { last }) };
    } else out.push(event);
  }
  return out;
}

function textOfEvents(events: readonly AgentEvent[]): string {
  return events.map((event) => (event.type === 'text' ? event.text : '')).join('');
}

/** True while `pid` runs; a zombie (left where init does not reap orphans) counts as gone. */
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
    return true;
  }
}

async function eventually(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function readPids(directory: string): number[] {
  return ['leader', 'grandchild'].map((name) => Number(readFileSync(join(directory, name), 'utf8').trim()));
}

/** Runs the turn until `until` matches an event; returns the iterator, still open, and what came. */
async function runUntil(
  backend: AgentBackend,
  turn: Parameters<AgentBackend['run']>[0],
  until: (event: AgentEvent) => boolean,
): Promise<{ iterator: AsyncIterator<AgentEvent>; seen: AgentEvent[] }> {
  const iterator = backend.run(turn)[Symbol.asyncIterator]();
  const seen: AgentEvent[] = [];
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) assert.fail(`the turn ended early after ${JSON.stringify(seen)}`);
    seen.push(next.value);
    if (until(next.value)) return { iterator, seen };
  }
}

async function rest(iterator: AsyncIterator<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) events.push(next.value);
  return events;
}

describe('createCommandBackend: the program', () => {
  it('is of kind command', () => {
    assert.equal(createCommandBackend(commandConfig('upper.sh')).kind, 'command');
  });

  it('refuses, at creation, a program that is missing, not executable or not in PATH', async () => {
    assert.throws(() => createCommandBackend(commandConfig(join(scratch, 'missing.sh'))), BackendConfigError);
    const plain = join(scratch, 'plain.sh');
    await copyFile(join(FIXTURES, 'upper.sh'), plain);
    await chmod(plain, 0o644);
    assert.throws(() => createCommandBackend(commandConfig(plain)), {
      name: 'BackendConfigError',
      message: /executable/,
    });
    assert.throws(() => createCommandBackend(commandConfig('env'), { env: { PATH: scratch } }), {
      name: 'BackendConfigError',
      message: /"env" was not found/,
    });
    assert.throws(() => createCommandBackend(commandConfig('upper.sh', { cwd: join(scratch, 'nowhere') })), {
      name: 'BackendConfigError',
      message: /cwd/,
    });
  });

  it("finds a bare name in Airlock's PATH once, and runs it with no PATH of its own", async () => {
    const { backend } = backendWithLog(commandConfig('env'), { env: { PATH: SYSTEM_PATH } });
    const events = await collect(backend, fakeTurn());
    assert.equal(events.at(-1)?.type, 'completed');
    assert.doesNotMatch(textOfEvents(events), /^PATH=/m);
  });

  it("resolves a relative path against Airlock's working directory", async () => {
    const command = relative(process.cwd(), join(FIXTURES, 'upper.sh'));
    const { backend } = backendWithLog(commandConfig(command, { cwd: scratch }));
    assert.equal(textOfEvents(await collect(backend, fakeTurn({ text: 'x' }))), 'X');
  });

  it('fails a turn whose program became unrunnable after startup, with the errno and no path', async () => {
    const script = join(await mkdtemp(join(scratch, 'gone-')), 'soon-gone.sh');
    await copyFile(join(FIXTURES, 'upper.sh'), script);
    await chmod(script, 0o755);
    const { backend, logs } = backendWithLog(commandConfig(script));
    await chmod(script, 0o644);
    const events = await collect(backend, fakeTurn());
    assert.deepEqual(events, [{ type: 'failed', reason: 'the command could not be started (EACCES)' }]);
    const line = logs.find((log) => log.event === 'command_finished');
    assert.equal(line?.level, 'warn');
    assert.equal(line?.fields.end, 'spawn-failed');
  });
});

describe('createCommandBackend: a turn', () => {
  it('sends the text on stdin and streams stdout back as the reply', async () => {
    const { backend, logs } = backendWithLog(commandConfig('upper.sh'));
    const events = await collect(backend, fakeTurn({ text: 'hello world' }));
    assert.deepEqual(joined(events), [{ type: 'text', text: 'HELLO WORLD', last: true }, { type: 'completed' }]);
    const finished = logs.find((log) => log.event === 'command_finished');
    assert.equal(finished?.level, 'debug');
    assert.equal(finished?.fields.exitCode, 0);
    assert.equal(finished?.fields.agent, 'cmd');
    assert.ok(
      logs.every((log) => !JSON.stringify(log).includes('HELLO')),
      'no reply text in the log',
    );
  });

  it('streams chunks as they come, before the program exits', async () => {
    const { backend } = backendWithLog(commandConfig('chunks.sh'));
    const timed: Array<{ event: AgentEvent; at: number }> = [];
    for await (const event of backend.run(fakeTurn())) timed.push({ event, at: Date.now() });
    const texts = timed.filter((entry) => entry.event.type === 'text');
    assert.ok(texts.length >= 3, `got ${texts.length} text events`);
    assert.equal(textOfEvents(timed.map((entry) => entry.event)), 'one two three');
    const done = timed.at(-1)!;
    assert.deepEqual(done.event, { type: 'completed' });
    assert.ok(done.at - texts[0]!.at >= 300, 'the first chunk came well before the end');
    const lastText = texts.at(-1)!.event;
    assert.ok(lastText.type === 'text' && lastText.last === true);
    assert.ok(texts.slice(0, -1).every((entry) => entry.event.type === 'text' && entry.event.last !== true));
  });

  it('keeps UTF-8 characters whole when the program writes them in pieces', async () => {
    const { backend } = backendWithLog(commandConfig('utf8.sh'));
    assert.equal(textOfEvents(await collect(backend, fakeTurn())), 'é€\n');
  });

  it('fails with the exit code, keeping the partial reply and logging stderr', async () => {
    const { backend, logs } = backendWithLog(commandConfig('exit.sh'));
    const events = await collect(backend, fakeTurn());
    assert.equal(textOfEvents(events), 'partial reply\n');
    assert.deepEqual(events.at(-1), { type: 'failed', reason: 'the command exited with code 3' });
    const stderr = logs.find((log) => log.event === 'command_stderr');
    assert.deepEqual(stderr, {
      level: 'warn',
      event: 'command_stderr',
      fields: { agent: 'cmd', taskId: 'task-1', bytes: 21, text: 'something went wrong\n' },
    });
  });

  it('fails with the signal that killed the program', async () => {
    const { backend } = backendWithLog(commandConfig('/bin/sh', { args: ['-c', 'kill -TERM $$'] }));
    assert.deepEqual(await collect(backend, fakeTurn()), [
      { type: 'failed', reason: 'the command was killed by signal SIGTERM' },
    ]);
  });

  it('caps stderr in the log and strips control characters from it', async () => {
    const { backend, logs } = backendWithLog(commandConfig('stderr.sh', { maxStderrBytes: 64 }));
    const events = await collect(backend, fakeTurn());
    assert.equal(events.at(-1)?.type, 'completed');
    const fields = logs.find((log) => log.event === 'command_stderr')?.fields;
    assert.equal(fields?.bytes, 4019);
    assert.equal(fields?.truncated, true);
    const text = String(fields?.text);
    assert.ok(text.startsWith('bad [31mred end\n'));
    assert.ok(Buffer.byteLength(text) <= 64);
    // eslint-disable-next-line no-control-regex -- looking for control characters
    assert.doesNotMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f]/);
  });

  it('fails when stdout passes maxOutputBytes', async () => {
    const { backend } = backendWithLog(commandConfig('flood.sh', { maxOutputBytes: 4096 }));
    const events = await collect(backend, fakeTurn());
    assert.deepEqual(events.at(-1), { type: 'failed', reason: 'the command wrote more than 4096 bytes' });
    assert.ok(Buffer.byteLength(textOfEvents(events)) <= 4096);
  });

  it('survives a program that does not read its (large) stdin', async () => {
    const { backend } = backendWithLog(commandConfig('no-stdin.sh'));
    const events = await collect(backend, fakeTurn({ text: 'y'.repeat(2 * 1024 * 1024) }));
    assert.deepEqual(joined(events), [{ type: 'text', text: 'ignored\n', last: true }, { type: 'completed' }]);
  });

  it('sends the framed prompt for input: prompt', async () => {
    const { backend } = backendWithLog(commandConfig('cat', { input: 'prompt' }), { env: { PATH: SYSTEM_PATH } });
    const turn = { ...fakeTurn({ text: 'raw' }), prompt: { system: 'SYSTEM NOTE', user: 'FRAMED USER' } };
    assert.equal(textOfEvents(await collect(backend, turn)), 'SYSTEM NOTE\n\nFRAMED USER');
    const framed = textOfEvents(await collect(backend, fakeTurn({ text: 'plain words' })));
    assert.match(framed, /<<<EXTERNAL_UNTRUSTED_CONTENT>>>\nplain words\n/);
  });

  it('does nothing for a turn canceled before it starts', async () => {
    const controller = new AbortController();
    controller.abort();
    const { backend, logs } = backendWithLog(commandConfig('upper.sh'));
    assert.deepEqual(await collect(backend, fakeTurn({ signal: controller.signal })), []);
    assert.equal(logs.length, 0, 'no program was run');
  });
});

describe('createCommandBackend: the line protocol', () => {
  it('turns control lines into events and drops unknown verbs with a warning (no content)', async () => {
    const { backend, logs } = backendWithLog(commandConfig('protocol.sh'));
    const events = await collect(backend, fakeTurn());
    assert.deepEqual(joined(events), [
      { type: 'text', text: 'first line\n' },
      { type: 'working', text: 'halfway there' },
      { type: 'text', text: '@airlock is how control lines start\n' },
      { type: 'working', text: 'split note' },
      { type: 'text', text: 'last line', last: true },
      { type: 'completed' },
    ]);
    const unknown = logs.filter((log) => log.event === 'command_unknown_control_line');
    assert.deepEqual(unknown, [
      {
        level: 'warn',
        event: 'command_unknown_control_line',
        fields: { agent: 'cmd', taskId: 'task-1', verb: 'frobnicate' },
      },
    ]);
    assert.ok(logs.every((log) => !JSON.stringify(log).includes('secret stuff')));
  });

  it('fails or rejects with the reason the program gives, whatever its exit code', async () => {
    const run = async (ending: string): Promise<AgentEvent | undefined> => {
      const { backend } = backendWithLog(commandConfig('protocol.sh', { args: [ending] }));
      return (await collect(backend, fakeTurn())).at(-1);
    };
    assert.deepEqual(await run('failed'), { type: 'failed', reason: 'no such city' });
    assert.deepEqual(await run('rejected'), { type: 'rejected', reason: 'not for you' });
    assert.deepEqual(await run('failed-exit'), { type: 'failed', reason: 'gave up' });
  });

  it('asks with input-required, then the resumed run (same task id) has the answer', async () => {
    const state = await mkdtemp(join(scratch, 'ask-'));
    const { backend } = backendWithLog(commandConfig('ask.sh', { args: [state] }));
    const first = await collect(backend, fakeTurn({ text: 'tell me a story' }));
    assert.deepEqual(joined(first), [
      { type: 'text', text: 'Let me think.\n', last: true },
      { type: 'input-required', question: 'What is your name?' },
    ]);
    const second = await collect(backend, fakeTurn({ text: 'Ada', resumed: true }));
    assert.deepEqual(joined(second), [
      { type: 'text', text: 'Hello, Ada! You first said: tell me a story\n', last: true },
      { type: 'completed' },
    ]);
  });

  it('fails instead of asking when the program exits non-zero after its question', async () => {
    const { backend } = backendWithLog(
      commandConfig('/bin/sh', { args: ['-c', 'echo "@airlock input-required Name?"; exit 2'] }),
    );
    assert.deepEqual(await collect(backend, fakeTurn()), [
      { type: 'failed', reason: 'the command exited with code 2' },
    ]);
  });
});

describe('createCommandBackend: isolation', () => {
  it('gives the program only env, passEnv and the Airlock variables', async () => {
    const { backend } = backendWithLog(
      commandConfig('env', { env: { GREETING: 'hi there' }, passEnv: ['PASSED', 'NOT_SET'] }),
      { env: { PATH: SYSTEM_PATH, PASSED: 'yes', SECRET_TOKEN: 's3cret', HOME: '/root' } },
    );
    const events = await collect(backend, fakeTurn({ resumed: true }));
    const lines = textOfEvents(events).trimEnd().split('\n').sort();
    assert.deepEqual(lines, [
      'AIRLOCK_CONTEXT_ID=ctx-1',
      'AIRLOCK_RESUMED=1',
      'AIRLOCK_SESSION_ID=a2a-test-session',
      'AIRLOCK_TASK_ID=task-1',
      'GREETING=hi there',
      'PASSED=yes',
    ]);
  });

  it("inherits nothing from Airlock's own environment unless named", async () => {
    process.env.AIRLOCK_COMMAND_TEST_NAMED = 'named';
    process.env.AIRLOCK_COMMAND_TEST_HIDDEN = 'hidden';
    try {
      const { backend } = backendWithLog(commandConfig('env', { passEnv: ['AIRLOCK_COMMAND_TEST_NAMED'] }));
      const output = textOfEvents(await collect(backend, fakeTurn()));
      assert.match(output, /^AIRLOCK_COMMAND_TEST_NAMED=named$/m);
      assert.doesNotMatch(output, /HIDDEN|^PATH=|^HOME=/m);
    } finally {
      delete process.env.AIRLOCK_COMMAND_TEST_NAMED;
      delete process.env.AIRLOCK_COMMAND_TEST_HIDDEN;
    }
  });

  it('passes arguments literally, never through a shell', async () => {
    const cwd = await mkdtemp(join(scratch, 'noshell-'));
    const args = ['$(touch pwned)', '; touch pwned2', '`touch pwned3`', '*', '"quoted" \'single\'', '$HOME', 'a|b>c'];
    const { backend } = backendWithLog(commandConfig('args.sh', { args, cwd }));
    const output = textOfEvents(await collect(backend, fakeTurn()));
    assert.deepEqual(output.split('\n').slice(0, -1), args);
    assert.deepEqual(await readdir(cwd), []);
  });

  it('runs in cwd', async () => {
    const cwd = await mkdtemp(join(scratch, 'cwd-'));
    const { backend } = backendWithLog(commandConfig('/bin/sh', { args: ['-c', 'pwd -P'], cwd }));
    const output = textOfEvents(await collect(backend, fakeTurn()));
    assert.equal(output, `${realpathSync(cwd)}\n`);
  });
});

describe('createCommandBackend: ending a run', () => {
  it('times out: fails, and the whole group is gone, grandchild included', async () => {
    const pids = await mkdtemp(join(scratch, 'timeout-'));
    const { backend, logs } = backendWithLog(commandConfig('hang.sh', { args: [pids], timeoutMs: 300 }));
    const started = Date.now();
    const events = await collect(backend, fakeTurn());
    assert.ok(Date.now() - started >= 290);
    assert.deepEqual(joined(events), [
      { type: 'text', text: 'started\n', last: true },
      { type: 'failed', reason: 'the command did not finish within 0.3 s' },
    ]);
    const [leader, grandchild] = readPids(pids);
    await eventually(() => !isRunning(leader!) && !isRunning(grandchild!), 3000, 'the group to be gone');
    assert.equal(logs.find((log) => log.event === 'command_finished')?.fields.end, 'timed-out');
  });

  it('on cancel: ends quietly, and the whole group is gone', async () => {
    const pids = await mkdtemp(join(scratch, 'cancel-'));
    const controller = new AbortController();
    const { backend } = backendWithLog(commandConfig('hang.sh', { args: [pids] }));
    const { iterator } = await runUntil(
      backend,
      fakeTurn({ signal: controller.signal }),
      (event) => event.type === 'text',
    );
    const [leader, grandchild] = readPids(pids);
    assert.ok(isRunning(leader!) && isRunning(grandchild!));
    controller.abort(new Error('task canceled'));
    assert.deepEqual(await rest(iterator), []);
    await eventually(() => !isRunning(leader!) && !isRunning(grandchild!), 3000, 'the group to be gone');
  });

  it('kills the program when the reader stops early', async () => {
    const pids = await mkdtemp(join(scratch, 'return-'));
    const { backend } = backendWithLog(commandConfig('hang.sh', { args: [pids] }));
    const { iterator } = await runUntil(backend, fakeTurn(), (event) => event.type === 'text');
    const [leader, grandchild] = readPids(pids);
    await iterator.return?.();
    await eventually(() => !isRunning(leader!) && !isRunning(grandchild!), 3000, 'the group to be gone');
  });

  it('close() kills running programs, fails their turns, and refuses new ones', async () => {
    const pids = await mkdtemp(join(scratch, 'close-'));
    const { backend } = backendWithLog(commandConfig('hang.sh', { args: [pids] }));
    const { iterator } = await runUntil(backend, fakeTurn(), (event) => event.type === 'text');
    const [leader, grandchild] = readPids(pids);
    await backend.close!();
    assert.ok(!isRunning(leader!), 'the program is gone when close() resolves');
    assert.deepEqual(await rest(iterator), [
      { type: 'text', text: '', last: true },
      { type: 'failed', reason: 'the agent is shutting down' },
    ]);
    await eventually(() => !isRunning(grandchild!), 3000, 'the grandchild to be gone');
    assert.deepEqual(await collect(backend, fakeTurn()), [{ type: 'failed', reason: 'the agent is shutting down' }]);
  });
});
