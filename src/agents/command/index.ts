/**
 * The command backend: runs a configured program once per turn. The caller's message goes to its
 * stdin, its stdout streams back as the reply, and a small line protocol on stdout
 * (`@airlock input-required …`, `@airlock working …`, `@airlock failed …`, `@airlock rejected …`)
 * lets it ask a question, report progress or end the turn otherwise. The program runs without a
 * shell, with an environment that holds only what the config names, in a process group that is
 * killed as a whole on cancel, timeout, output overflow and gateway shutdown.
 * See docs/backends/command.md.
 *
 * @example
 * ```ts
 * const backend = createCommandBackend(
 *   { type: 'command', command: 'examples/command/word-count.sh', args: [], env: {}, passEnv: [],
 *     input: 'text', timeoutMs: 60_000, maxOutputBytes: 1 << 20, maxStderrBytes: 8192 },
 *   { agent: 'wordcount', log: (level, event, fields) => logger[level]({ event, ...fields }) },
 * );
 * for await (const event of backend.run(turn)) console.log(event); // turn text: 'one two three'
 * // { type: 'working', text: 'counting' }
 * // { type: 'text', text: 'words: 3, lines: 1\n', last: true }
 * // { type: 'completed' }
 * ```
 */
import type { CommandBackendConfig } from './schema.js';
import {
  isAborted,
  type AgentBackend,
  type AgentEvent,
  type AgentTurn,
  type BackendContext,
  type BackendLog,
} from '../backend.js';
import { commandEnvironment, commandStdin } from './environment.js';
import { TurnEventQueue } from './event-queue.js';
import { LineProtocolParser, type ProtocolItem } from './line-protocol.js';
import { startCommandProcess, type CommandProcess, type CommandResult } from './process.js';
import { resolveProgram, resolveWorkingDirectory } from './resolve.js';

/** The outcome a control line declared; it takes effect when the program exits. */
type DeclaredOutcome = Extract<ProtocolItem, { kind: 'input-required' | 'failed' | 'rejected' }>;

/** What every run of one backend shares. */
interface CommandSetup {
  readonly config: CommandBackendConfig;
  /** Absolute, found once at creation. */
  readonly program: string;
  /** Absolute, checked once at creation. */
  readonly cwd: string;
  readonly parentEnv: NodeJS.ProcessEnv;
  readonly agent: string;
  readonly log: BackendLog;
  /** Runs not yet terminated, for `close()`. */
  readonly running: Set<CommandProcess>;
  readonly isClosed: () => boolean;
}

/**
 * Creates the command backend (kind `command`). The program is found and checked here, once:
 * a `command` with a `/` is a path, relative ones resolved against Airlock's working directory
 * (`process.cwd()`, not `cwd`); a bare name is looked up in Airlock's PATH (`context.env`, else
 * `process.env`) and the absolute path is used for every run. `cwd`, when set, is resolved the
 * same way and must be a directory.
 *
 * Throws {@link BackendConfigError} when the program is not an executable file or `cwd` is not a
 * directory, so a broken config stops the gateway at startup rather than failing callers.
 *
 * `close()` kills every program still running (SIGTERM to the group, SIGKILL two seconds later)
 * and resolves once they are gone; a turn started after it fails at once.
 *
 * @example
 * ```ts
 * const backend = createCommandBackend({ ...config, command: 'jq', args: ['-r', '.question'] });
 * backend.kind; // 'command'
 * await backend.close?.();
 * ```
 */
export function createCommandBackend(config: CommandBackendConfig, context: BackendContext = {}): AgentBackend {
  const parentEnv = context.env ?? process.env;
  let closed = false;
  const setup: CommandSetup = {
    config,
    program: resolveProgram(config.command, parentEnv),
    cwd: resolveWorkingDirectory(config.cwd),
    parentEnv,
    agent: context.agent ?? 'command',
    log: context.log ?? (() => undefined),
    running: new Set(),
    isClosed: () => closed,
  };
  return {
    kind: 'command',
    run: (turn) => runCommand(turn, setup),
    close: async () => {
      closed = true;
      const runs = [...setup.running];
      for (const run of runs) run.stop();
      await Promise.all(runs.map((run) => run.terminated));
    },
  };
}

async function* runCommand(turn: AgentTurn, setup: CommandSetup): AsyncGenerator<AgentEvent> {
  if (isAborted(turn)) return;
  if (setup.isClosed()) {
    yield { type: 'failed', reason: 'the agent is shutting down' };
    return;
  }
  const { config, log, agent } = setup;
  const queue = new TurnEventQueue();
  const parser = new LineProtocolParser();
  let declared: DeclaredOutcome | undefined;

  const take = (items: readonly ProtocolItem[]): void => {
    for (const item of items) {
      switch (item.kind) {
        case 'text':
          queue.text(item.text);
          break;
        case 'working':
          queue.push(item.note.length > 0 ? { type: 'working', text: item.note } : { type: 'working' });
          break;
        case 'unknown':
          // The verb only when it looks like one: the rest of the line may be anything.
          log('warn', 'command_unknown_control_line', {
            agent,
            taskId: turn.taskId,
            ...(/^[A-Za-z0-9_-]{1,32}$/.test(item.verb) && { verb: item.verb }),
          });
          break;
        default:
          // The first outcome line counts; the program is expected to exit after it.
          declared ??= item;
      }
    }
  };

  const run = startCommandProcess({
    program: setup.program,
    args: config.args,
    cwd: setup.cwd,
    env: commandEnvironment(config, turn, setup.parentEnv),
    stdin: commandStdin(config.input, turn),
    timeoutMs: config.timeoutMs,
    maxOutputBytes: config.maxOutputBytes,
    maxStderrBytes: config.maxStderrBytes,
    onStdout: (text) => take(parser.push(text)),
  });
  setup.running.add(run);
  void run.terminated.then(() => setup.running.delete(run));

  const signal = turn.signal;
  const onAbort = (): void => run.stop();
  signal.addEventListener('abort', onAbort, { once: true });
  let finished = false;
  void run.finished.then((result) => {
    finished = true;
    signal.removeEventListener('abort', onAbort);
    if (result.end.kind !== 'output-exceeded') take(parser.end());
    logResult(setup, turn, result);
    const outcome = outcomeOf(result, declared, setup, signal.aborted);
    if (outcome !== undefined) {
      queue.endText();
      queue.push(outcome);
    }
    queue.close();
  });

  try {
    yield* queue.drain();
  } finally {
    // The reader stopped early (or the turn is over): nothing of this run may outlive it.
    signal.removeEventListener('abort', onAbort);
    if (!finished) run.stop();
  }
}

/**
 * The event that ends the turn, or undefined when it ends quietly (canceled). Our own decisions
 * (timeout, output cap) come first; then what the program declared, unless it crashed after
 * declaring a question; then its exit status.
 */
function outcomeOf(
  result: CommandResult,
  declared: DeclaredOutcome | undefined,
  setup: CommandSetup,
  aborted: boolean,
): AgentEvent | undefined {
  const end = result.end;
  switch (end.kind) {
    case 'spawn-failed':
      return { type: 'failed', reason: `the command could not be started (${end.code})` };
    case 'timed-out':
      return { type: 'failed', reason: `the command did not finish within ${seconds(setup.config.timeoutMs)} s` };
    case 'output-exceeded':
      return { type: 'failed', reason: `the command wrote more than ${setup.config.maxOutputBytes} bytes` };
    case 'stopped':
      return aborted ? undefined : { type: 'failed', reason: 'the agent is shutting down' };
    case 'signaled':
    case 'exited':
      break;
  }
  if (declared?.kind === 'failed') return { type: 'failed', reason: declared.reason || 'the command failed' };
  if (declared?.kind === 'rejected') {
    return { type: 'rejected', reason: declared.reason || 'the command rejected the request' };
  }
  if (end.kind === 'signaled') return { type: 'failed', reason: `the command was killed by signal ${end.signal}` };
  if (end.code !== 0) return { type: 'failed', reason: `the command exited with code ${end.code}` };
  if (declared?.kind === 'input-required') {
    return { type: 'input-required', question: declared.question || 'More input is needed.' };
  }
  return { type: 'completed' };
}

/** One line per run, and one for its stderr: counts and codes, never the message or the reply. */
function logResult(setup: CommandSetup, turn: AgentTurn, result: CommandResult): void {
  const { agent, log } = setup;
  const end = result.end;
  const routine = end.kind === 'exited' || end.kind === 'stopped';
  log(routine ? 'debug' : 'warn', 'command_finished', {
    agent,
    taskId: turn.taskId,
    end: end.kind,
    ...(end.kind === 'exited' && { exitCode: end.code }),
    ...(end.kind === 'signaled' && { signal: end.signal }),
    // The spawn error names the program's path: for the operator, never for the caller.
    ...(end.kind === 'spawn-failed' && { error: end.message }),
    durationMs: result.durationMs,
    outputBytes: result.outputBytes,
  });
  const stderr = result.stderr;
  if (stderr.bytes === 0) return;
  log('warn', 'command_stderr', {
    agent,
    taskId: turn.taskId,
    bytes: stderr.bytes,
    ...(stderr.text.length > 0 && { text: stderr.text }),
    ...(stderr.truncated && { truncated: true }),
  });
}

/** 300 → '0.3', 60000 → '60'. */
function seconds(ms: number): string {
  return String(Number((ms / 1000).toFixed(3)));
}
