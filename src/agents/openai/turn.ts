/**
 * One turn of the `openai` backend, tool loop included.
 *
 * Without tools (no toolbox, or one with no offers) a turn is one request: the model's tokens
 * stream into the reply as they arrive, and the request carries no `tools` field.
 *
 * With tools, the toolbox's offers (and nothing else) go out as OpenAI function tools, and the
 * turn is a loop: ask the model; when its answer holds tool calls, add that answer to the
 * conversation, run each call in order through `turn.tools.call` (a call whose arguments are not
 * JSON is answered without running), add one `tool` message per call (the toolbox's result text
 * as it came, already framed as untrusted and scrubbed, or its reason for not running it), and
 * ask again; until an answer without tool calls, whose text is the reply. Nothing of the loop
 * reaches the caller but a `working` note ("using tools") and that final text: the text of each
 * answer is held until the answer is over, so the words a model writes beside its tool calls
 * stay between it and Airlock.
 *
 * Budgets: the toolbox's (tool calls, result characters: `over_budget` fails the turn),
 * `maxToolRounds` answers with tool calls per turn, {@link MAX_CALLS_PER_ANSWER} calls per
 * answer, `maxResponseBytes` over all the turn's answers, and the turn's timeouts (`totalMs` over
 * the whole loop, tool calls included; `firstTokenMs` per request). Cancellation stops the turn
 * at once, a running tool call included (it is left to its own signal).
 *
 * Parking: when the toolbox answers `park` (an acting tool waits for the person), the calls after
 * it in that answer are not run, and the turn ends with `propose-action` and a continuation (see
 * `./continuation.ts`). The turn that resumes after the decision carries `approvedAction` (the
 * call runs through `runApproved`, exactly as approved, once) or `deniedAction` (the model is told
 * the person refused it); then the rest of that answer's calls run, and the loop goes on.
 *
 * @example
 * ```ts
 * for await (const event of runOpenAiTurn(turn, settings)) console.log(event);
 * // { type: 'working', text: 'using tools' } { type: 'text', text: 'The file says…' }
 * // { type: 'text', text: '', last: true } { type: 'completed' }
 * ```
 */
import type { Dispatcher } from 'undici';
import { isAborted, type AgentEvent, type AgentTurn, type BackendLog, type SessionEntry } from '../backend.js';
import type { ParkedToolCall, ToolCallOutcome, TurnToolbox } from '../tools.js';
import type { OpenAiBackendConfig } from './schema.js';
import { buildContinuation, readContinuation, type ResumePoint } from './continuation.js';
import { TurnDeadline } from './deadline.js';
import { badResponseError, networkError, OpenAiTurnError, serverError } from './errors.js';
import {
  buildChatMessages,
  buildChatRequest,
  toolDefinitions,
  type ChatTool,
  type ToolResultMessage,
  type TranscriptMessage,
} from './request.js';
import {
  DEFAULT_MAX_TOOL_ROUNDS,
  MAX_CALLS_PER_ANSWER,
  parseArguments,
  ToolCallAssembly,
  type ModelToolCall,
} from './tool-calls.js';
import { exchangeChatCompletion, type ExchangeProgress } from './transport.js';

/** What every turn of one backend shares. */
export interface OpenAiSettings {
  readonly config: OpenAiBackendConfig;
  readonly url: URL;
  readonly dispatcher: Dispatcher;
  readonly secrets: readonly string[];
  readonly log: BackendLog;
  readonly agent: string;
}

/** The progress note of a turn that uses tools: never a tool's name, arguments or result. */
export const USING_TOOLS_NOTE = 'using tools';

/** What the model is told for a call whose arguments are not JSON (the call did not run). */
export const ARGUMENTS_NOT_JSON =
  'The tool did not run: the arguments of this call were not valid JSON. Send them as one JSON object.';

/** What the model is told for a call that names no function. */
export const CALL_WITHOUT_NAME = 'The tool did not run: this call named no tool.';

/** One answer of the model. */
interface Answer {
  /** The answer's text (held, unless it streamed live). */
  readonly text: string;
  /** Its tool calls (always none when no tools were offered). */
  readonly calls: readonly ModelToolCall[];
}

/** A call the toolbox parked, with the ids the continuation keeps. */
interface Parked {
  readonly action: ParkedToolCall;
  readonly pending: string;
  readonly remaining: readonly string[];
}

/**
 * Runs one turn (see the module comment).
 *
 * @example
 * ```ts
 * const backend: AgentBackend = { kind: 'openai', run: (turn) => runOpenAiTurn(turn, settings) };
 * ```
 */
export function runOpenAiTurn(turn: AgentTurn, settings: OpenAiSettings): AsyncGenerator<AgentEvent> {
  return new OpenAiTurnRun(turn, settings).run();
}

class OpenAiTurnRun {
  readonly #turn: AgentTurn;
  readonly #settings: OpenAiSettings;
  readonly #progress: ExchangeProgress = { bytes: 0 };
  readonly #toolbox: TurnToolbox | undefined;
  readonly #tools: readonly ChatTool[];
  #started = Date.now();
  #deadline: TurnDeadline | undefined;
  /** Text events yielded. */
  #chunks = 0;
  #finishReason = '';
  #requests = 0;
  /** Answers with tool calls. */
  #rounds = 0;
  /** Calls handed to the toolbox. */
  #toolCalls = 0;
  #announced = false;

  constructor(turn: AgentTurn, settings: OpenAiSettings) {
    this.#turn = turn;
    this.#settings = settings;
    this.#toolbox = turn.tools;
    this.#tools = turn.tools === undefined ? [] : toolDefinitions(turn.tools.offers);
  }

  async *run(): AsyncGenerator<AgentEvent> {
    const turn = this.#turn;
    if (isAborted(turn)) return;
    const decision = turn.approvedAction ?? turn.deniedAction;
    let transcript: TranscriptMessage[];
    let resume: ResumePoint | undefined;
    if (decision !== undefined) {
      const read = readContinuation(decision.continuation);
      if (!read.ok) {
        yield* this.#failed(new OpenAiTurnError('tool_state', read.reason));
        return;
      }
      resume = read.state;
      transcript = resume.messages;
    } else {
      const history = await this.#readHistory();
      if (isAborted(turn)) return;
      transcript = buildChatMessages(turn, this.#settings.config, history);
    }
    this.#started = Date.now();
    const deadline = new TurnDeadline(turn.signal, this.#settings.config.timeouts);
    this.#deadline = deadline;
    try {
      if (resume !== undefined) {
        deadline.tokenArrived(); // no first-token clock while the decided call runs
        yield this.#announce();
        const parked = await this.#resume(resume, transcript);
        if (parked !== undefined) {
          yield* this.#park(parked, transcript);
          return;
        }
      }
      for (;;) {
        deadline.requestStarted(); // the first-token clock of this request (stopped while tools ran)
        this.#requests++;
        const body = JSON.stringify(buildChatRequest(this.#settings.config, transcript, this.#tools));
        const answer = yield* this.#ask(body, transcript.length);
        if (answer.calls.length === 0) {
          if (this.#tools.length > 0 && answer.text.length > 0) {
            this.#chunks++;
            yield { type: 'text', text: answer.text };
          }
          break;
        }
        deadline.tokenArrived();
        this.#rounds++;
        const maxRounds = this.#settings.config.maxToolRounds ?? DEFAULT_MAX_TOOL_ROUNDS;
        if (this.#rounds > maxRounds) {
          throw new OpenAiTurnError(
            'tool_rounds',
            `the model asked for tools in more than ${maxRounds} answers of one turn (maxToolRounds)`,
          );
        }
        transcript.push({
          role: 'assistant',
          content: answer.text.length > 0 ? answer.text : null,
          tool_calls: answer.calls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
        });
        if (!this.#announced) yield this.#announce();
        const parked = await this.#runCalls(transcript, answer.calls, 0);
        if (parked !== undefined) {
          yield* this.#park(parked, transcript);
          return;
        }
      }
    } catch (error) {
      if (isAborted(turn)) {
        this.#logTurn('debug', 'openai_turn_canceled', {});
        return;
      }
      yield* this.#failed(deadline.failure ?? asTurnError(error, this.#settings.config.timeouts.connectMs));
      return;
    } finally {
      deadline.dispose();
    }
    if (isAborted(turn)) return;
    const reason = this.#finishReason;
    this.#logTurn('info', 'openai_turn_completed', {
      ...(reason !== '' && { finishReason: /^[a-z_]{1,32}$/.test(reason) ? reason : 'other' }),
    });
    if (this.#chunks > 0) yield { type: 'text', text: '', last: true };
    yield { type: 'completed' };
  }

  /**
   * One request and its answer. Without tools the tokens are yielded as they arrive; with tools
   * they are held and returned, because only the answer's end tells whether it is the reply.
   * `seed` (the conversation's length) goes into the ids made up for calls that came without one.
   */
  async *#ask(body: string, seed: number): AsyncGenerator<AgentEvent, Answer> {
    const deadline = this.#deadline as TurnDeadline;
    const { config } = this.#settings;
    const live = this.#tools.length === 0;
    const assembly = new ToolCallAssembly(seed); // made-up call ids stay unique in the conversation
    const held: string[] = [];
    const exchange = {
      url: this.#settings.url,
      apiKey: config.apiKey,
      body,
      signal: deadline.signal,
      maxResponseBytes: config.maxResponseBytes,
      connectMs: config.timeouts.connectMs,
      secrets: this.#settings.secrets,
    };
    let finished = false;
    for await (const event of exchangeChatCompletion(this.#settings.dispatcher, exchange, this.#progress)) {
      if (event.type === 'done') {
        finished = true;
        break;
      }
      switch (event.type) {
        case 'token':
          deadline.tokenArrived();
          if (live) {
            this.#chunks++;
            yield { type: 'text', text: event.text };
          } else {
            held.push(event.text);
          }
          break;
        case 'reasoning':
          // A thinking model is alive and working: not a stall, though nothing is forwarded.
          deadline.tokenArrived();
          break;
        case 'tool-call':
          if (live) break; // offered none: a call the model makes up anyway is ignored
          deadline.tokenArrived();
          if (!assembly.add(event)) {
            throw new OpenAiTurnError(
              'tool_calls',
              `the model asked for more than ${MAX_CALLS_PER_ANSWER} tool calls in one answer`,
            );
          }
          break;
        case 'finish':
          finished = true;
          this.#finishReason = event.reason;
          break;
        case 'error':
          throw serverError(event.message, this.#settings.secrets);
        case 'invalid':
          throw badResponseError(event.what);
      }
    }
    if (!finished) throw badResponseError('an answer that ended before the reply was finished');
    return { text: held.join(''), calls: live ? [] : assembly.calls() };
  }

  /**
   * Runs `calls` from `from` on, in order, adding one tool message per call to `transcript`.
   * Returns the call the toolbox parked (the later ones not run), or undefined when all ran.
   * Throws on an exhausted budget, a timeout or a cancel.
   */
  async #runCalls(
    transcript: TranscriptMessage[],
    calls: readonly ModelToolCall[],
    from: number,
  ): Promise<Parked | undefined> {
    for (let i = from; i < calls.length; i++) {
      const call = calls[i] as ModelToolCall;
      this.#checkpoint();
      const args = parseArguments(call.arguments);
      if (!args.ok) {
        transcript.push(toolMessage(call.id, ARGUMENTS_NOT_JSON));
        continue;
      }
      if (call.name.length === 0) {
        transcript.push(toolMessage(call.id, CALL_WITHOUT_NAME));
        continue;
      }
      const toolbox = this.#needToolbox();
      this.#toolCalls++;
      const deadline = this.#deadline as TurnDeadline;
      const outcome = await this.#guard(toolbox.call(call.name, args.value, deadline.signal));
      if (outcome.kind === 'park') {
        return { action: outcome.action, pending: call.id, remaining: calls.slice(i + 1).map((later) => later.id) };
      }
      transcript.push(toolMessage(call.id, this.#contentOf(outcome)));
    }
    return undefined;
  }

  /** The decided call of a resumed turn, then the rest of its answer's calls. */
  async #resume(point: ResumePoint, transcript: TranscriptMessage[]): Promise<Parked | undefined> {
    const pending = point.calls[point.pendingIndex] as ModelToolCall;
    const approved = this.#turn.approvedAction;
    const denied = this.#turn.deniedAction;
    if (approved !== undefined) {
      if (approved.tool !== pending.name) {
        throw new OpenAiTurnError(
          'tool_state',
          'the tool loop cannot resume: the approved action is not the call it waited for',
        );
      }
      const toolbox = this.#needToolbox();
      this.#toolCalls++;
      const deadline = this.#deadline as TurnDeadline;
      const outcome = await this.#guard(
        toolbox.runApproved({ actionId: approved.actionId, tool: approved.tool, args: approved.args }, deadline.signal),
      );
      if (outcome.kind === 'park') {
        throw new OpenAiTurnError('tool_state', 'the approved tool call asked for approval again');
      }
      transcript.push(toolMessage(pending.id, this.#contentOf(outcome)));
    } else if (denied !== undefined) {
      if (denied.tool !== pending.name) {
        throw new OpenAiTurnError(
          'tool_state',
          'the tool loop cannot resume: the refused action is not the call it waited for',
        );
      }
      const why = denied.outcome === 'expired' ? 'nobody approved it in time' : 'the person refused it';
      const reason = denied.reason.trim().length > 0 ? ` ${denied.reason}` : '';
      transcript.push(toolMessage(pending.id, `The tool did not run: ${why}.${reason}`));
    }
    return this.#runCalls(transcript, point.calls, point.pendingIndex + 1);
  }

  /** Ends the turn on the parked call, with the continuation the resumed turn needs. */
  async *#park(parked: Parked, transcript: readonly TranscriptMessage[]): AsyncGenerator<AgentEvent> {
    const built = buildContinuation(transcript, parked.pending, parked.remaining);
    if (!built.ok) {
      yield* this.#failed(new OpenAiTurnError('tool_state', built.reason));
      return;
    }
    this.#logTurn('info', 'openai_turn_parked', { continuationBytes: built.bytes });
    yield {
      type: 'propose-action',
      action: { tool: parked.action.tool, args: parked.action.args, level: parked.action.level },
      continuation: built.continuation,
    };
  }

  /** What goes back to the model for a call that ran or was refused; throws on `over_budget`. */
  #contentOf(outcome: Exclude<ToolCallOutcome, { kind: 'park' }>): string {
    this.#checkpoint();
    switch (outcome.kind) {
      case 'result':
        return outcome.text;
      case 'refused':
        return outcome.reason;
      case 'over_budget':
        throw new OpenAiTurnError('tool_budget', outcome.reason);
    }
  }

  #needToolbox(): TurnToolbox {
    if (this.#toolbox === undefined) {
      throw new OpenAiTurnError('tool_state', 'the tool loop cannot go on: this turn has no tools');
    }
    return this.#toolbox;
  }

  /**
   * Waits for a tool call, but no longer than the turn: on a cancel or a timeout it gives up at
   * once (the call has the same signal and is expected to stop too). A toolbox that throws,
   * which it should never do, fails the turn without its message (it could hold anything).
   */
  async #guard(work: Promise<ToolCallOutcome>): Promise<ToolCallOutcome> {
    const signal = (this.#deadline as TurnDeadline).signal;
    work.catch(() => {}); // settled after a cancel: nobody waits for it any more
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, stopped]);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new OpenAiTurnError('tool_failed', 'a tool call failed unexpectedly', { cause: error });
    } finally {
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    }
  }

  /** Throws when the turn was canceled or timed out (the catch in `run` says which). */
  #checkpoint(): void {
    const signal = (this.#deadline as TurnDeadline).signal;
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
  }

  #announce(): AgentEvent {
    this.#announced = true;
    return { type: 'working', text: USING_TOOLS_NOTE };
  }

  async *#failed(failure: OpenAiTurnError): AsyncGenerator<AgentEvent> {
    this.#logTurn('warn', 'openai_turn_failed', {
      code: failure.code,
      ...(failure.status !== undefined && { status: failure.status }),
    });
    yield { type: 'failed', reason: failure.message };
  }

  /**
   * The session's earlier entries within the configured bounds. A store that cannot be read costs
   * the turn its context, not its answer: the failure is logged and the turn goes on without it.
   */
  async #readHistory(): Promise<readonly SessionEntry[]> {
    const { maxTurns, maxChars } = this.#settings.config.history;
    const turn = this.#turn;
    if (turn.history === undefined || maxTurns === 0 || maxChars === 0) return [];
    try {
      return await turn.history({ maxTurns, maxChars });
    } catch (error) {
      this.#settings.log('warn', 'openai_history_unavailable', {
        agent: this.#settings.agent,
        error: error instanceof Error ? error.name : 'unknown',
      });
      return [];
    }
  }

  #logTurn(
    level: 'debug' | 'info' | 'warn',
    event: string,
    fields: Readonly<Record<string, string | number | boolean>>,
  ): void {
    const progress = this.#progress;
    this.#settings.log(level, event, {
      agent: this.#settings.agent,
      model: this.#settings.config.model,
      durationMs: Date.now() - this.#started,
      bytes: progress.bytes,
      ...(progress.status !== undefined && { status: progress.status }),
      chunks: this.#chunks,
      ...(this.#toolbox !== undefined && {
        requests: this.#requests,
        toolRounds: this.#rounds,
        toolCalls: this.#toolCalls,
      }),
      ...fields,
    });
  }
}

function toolMessage(id: string, content: string): ToolResultMessage {
  return { role: 'tool', tool_call_id: id, content };
}

function asTurnError(error: unknown, connectMs: number): OpenAiTurnError {
  return error instanceof OpenAiTurnError ? error : networkError(error, true, connectMs);
}
