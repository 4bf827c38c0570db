/**
 * `airlock send <agent> <text>`: one message to a registered remote agent, by registry name,
 * through the outbound client (guarded transport, card trust, polling — or with `--stream` an
 * event stream when the card offers one — cancel on max_wait_s, framed and redacted reply).
 *
 * Output: the reply (one framed block of untrusted text) and a status line on stdout; for an
 * error, a one-line reason on stderr. `--json` prints the result object instead. An entry for
 * delegation only (`token_exchange` without `subject_token_env`) is refused at once: there is no
 * caller to delegate from. Exit codes: 0 success, 3 the agent asks for input (answer with
 * `--task <id>`), 1 anything else.
 *
 * @example
 * ```sh
 * airlock send travel "Trains to Lyon tomorrow?" --confirm --registry registry.yaml
 * airlock send travel "Tuesday" --task 3f2c9a70-1b2d-4c5e-8f90-1234567890ab --confirm
 * airlock send travel "Trains to Lyon tomorrow?" --stream   # SSE when the card offers streaming
 * ```
 */
import { delegatesCallerOnly } from '../client/auth/token-exchange.js';
import type { CallResult } from '../client/index.js';
import { PROCESS_IO, errorLine, openOutbound, shownName, startProgress, type CommandIO } from './registry.js';

/**
 * Options of `airlock send`.
 *
 * @example
 * ```ts
 * const options: SendCommandOptions = { agent: 'travel', text: 'hi', confirm: true, json: false };
 * ```
 */
export interface SendCommandOptions {
  agent: string;
  text: string;
  /** Answer the task that asked for input (one this user started). */
  taskId?: string;
  contextId?: string;
  /** Required for entries with `effect: acting`. */
  confirm: boolean;
  /** Read the answer as an event stream when the remote's card offers one (else send + poll). */
  stream?: boolean;
  json: boolean;
  registry?: string;
}

/**
 * The exit code of a result: 0 success, 3 input required, 1 error.
 *
 * @example
 * ```ts
 * exitCodeOf({ status: 'input_required', ... }); // 3
 * ```
 */
export function exitCodeOf(result: Pick<CallResult, 'status'>): number {
  if (result.status === 'success') return 0;
  if (result.status === 'input_required') return 3;
  return 1;
}

/**
 * Runs `airlock send`.
 *
 * @example
 * ```ts
 * process.exitCode = await sendCommand({ agent: 'travel', text: 'hi', confirm: false, json: true });
 * ```
 */
export async function sendCommand(options: SendCommandOptions, io: CommandIO = PROCESS_IO): Promise<number> {
  let runtime;
  try {
    runtime = openOutbound(options.registry, io);
  } catch (error) {
    io.stderr(`airlock: ${errorLine(error)}\n`);
    return 1;
  }
  const agent = shownName(options.agent);
  const entry = runtime.registry.find(options.agent);
  if (entry !== undefined && delegatesCallerOnly(entry.oauth)) {
    // Refused before any card fetch or token request: the exchange's subject would be the
    // inbound caller's JWT, and a CLI call has none (no gateway's identity stands in for it).
    await runtime.close();
    io.stderr(
      `airlock: remote_auth_failed: registry entry "${agent}" is for delegation (token_exchange without subject_token_env): airlock send has no caller to delegate from\n`,
    );
    return 1;
  }
  const progress = startProgress(io, `airlock: calling ${agent}…`, {
    tick: (seconds) =>
      `airlock: waiting for ${agent} (${seconds} s${entry === undefined ? '' : ` of at most ${entry.maxWaitMs / 1000} s`})`,
  });
  let result: CallResult;
  try {
    result = await runtime.send({
      agent: options.agent,
      message: options.text,
      ...(options.taskId !== undefined && { taskId: options.taskId }),
      ...(options.contextId !== undefined && { contextId: options.contextId }),
      ...(options.confirm && { confirm: true }),
      ...(options.stream === true && { stream: true }),
    });
  } finally {
    progress.stop();
    await runtime.close();
  }
  if (options.json) {
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    printResult(result, io);
  }
  if (result.status === 'input_required' && result.task_id !== null) {
    const confirm = entry?.effect === 'acting' ? ' --confirm' : '';
    io.stderr(
      `airlock: ${agent} asks for input; answer with: airlock send ${agent} "<answer>" --task ${result.task_id}${confirm}\n`,
    );
  }
  if (result.status === 'error') {
    io.stderr(`airlock: ${result.error_type ?? 'error'}: ${result.error_message ?? 'the call failed'}\n`);
  }
  return exitCodeOf(result);
}

/** The reply, then one status line; notes on what the reply leaves out. */
function printResult(result: CallResult, io: CommandIO): void {
  if (result.reply.length > 0) io.stdout(`${result.reply}\n`);
  const status = [
    `status: ${result.status}`,
    ...(result.task_state !== null ? [`state: ${result.task_state}`] : []),
    ...(result.task_id !== null ? [`task: ${result.task_id}`] : []),
    ...(result.context_id !== null ? [`context: ${result.context_id}`] : []),
  ];
  io.stdout(`${status.join('  ')}\n`);
  if (result.truncated) io.stdout('note: the reply was cut at max_reply_chars\n');
  if (result.dropped_parts > 0) {
    const kinds = result.parts.map((part) =>
      part.media_type === null ? part.kind : `${part.kind} ${part.media_type}`,
    );
    io.stdout(
      `note: ${result.dropped_parts} non-text part(s) left out${kinds.length > 0 ? `: ${kinds.join(', ')}` : ''}\n`,
    );
  }
}
