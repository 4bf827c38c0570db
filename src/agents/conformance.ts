/**
 * The conformance backend: the agent the public A2A conformance kit (a2a-tck) expects behind a
 * system under test, so that Airlock can be judged by both TCK branches with one configuration.
 * See /work/shared/TCK.md for how to run them.
 *
 * Behaviour is chosen from the caller's `messageId`, longest matching prefix first, because
 * that is the TCK's in-band signal (its test helpers name every message `tck-<scenario>-<run>`).
 *
 * ## One backend for the 1.0-dev and the 0.3.x suites
 *
 * The two branches need opposite defaults: 1.0-dev wants an unknown message to complete, while
 * 0.3.x needs every `message/send` to leave its task open, because it then continues the task
 * (`taskId` follow-ups, several in a row in the history test) and cancels it. The branches can
 * be told apart by their messageIds alone:
 *
 * - 1.0-dev builds every messageId with `tck_id(name)` = `tck-<name>-<session>`;
 * - 0.3.x never uses a `tck-` messageId (`test-…-message-id-<uuid>`, `msg-<id>`,
 *   `<name>-message-id-<uuid>`, `auth-test-msg-…`, …; only its JSON-RPC request ids start with
 *   `tck-`, and backends never see those).
 *
 * So an unknown `tck-…` message echoes and completes (1.0-dev), and any other message (0.3.x,
 * except `test-resubscribe-message-id…`, which both suites share) says it is working, then asks
 * for more input, on every turn, resumed or not. `input-required` rather than a long `working`
 * because 0.3.x sends `message/send` without `configuration`, which is a blocking call: a task
 * held in `working` would hold the HTTP response until the TCK's 30 s client timeout, while an
 * interrupted task returns at once, stays cancelable and accepts any number of follow-ups. It
 * also costs no timer per task. The price is one 0.3.x quality check that wants a blocking send
 * to leave the task `submitted` or `working`, which a blocking send cannot do by definition.
 *
 * `tck-input-required` asks for input on resumed turns too, as the reference SUTs do: the
 * 1.0-dev history test resumes such a task twice with `tck-input-required` messages and expects
 * both to be accepted, then completes it with a `tck-complete-task` follow-up.
 *
 * @example
 * ```ts
 * const tck = createConformanceBackend({ resubscribeHoldMs: 4000 });
 * // messageId 'tck-artifact-data-1a2b' →
 * //   { type: 'artifact', artifact: { name: 'data-artifact',
 * //     parts: [{ kind: 'data', data: { key: 'value', count: 42 } }] } }
 * //   { type: 'completed' }
 * // messageId 'test-state-message-id-…' (0.3.x) →
 * //   { type: 'working', … }, { type: 'input-required', … }
 * ```
 */
import type { JsonValue, Part } from '../protocol/model.js';
import { pause, textOf, type AgentBackend, type AgentEvent, type AgentTurn } from './backend.js';
import { createEchoBackend } from './echo.js';

/** What the reference SUTs hold: 2 × the TCK's default TCK_STREAMING_TIMEOUT of 2 s. */
const DEFAULT_RESUBSCRIBE_HOLD_MS = 4000;

/**
 * Options of {@link createConformanceBackend}.
 *
 * @example
 * ```ts
 * // The TCK wants the task alive for 2 × TCK_STREAMING_TIMEOUT; raise this with that variable.
 * const options: ConformanceOptions = { resubscribeHoldMs: 10_000 };
 * ```
 */
export interface ConformanceOptions {
  /** How long a `test-resubscribe-message-id…` task stays `working`. Defaults to 4000 ms. */
  resubscribeHoldMs?: number;
}

/**
 * Creates the conformance backend (kind `conformance`). See the module comment for the table
 * of behaviours and for why unknown messages behave differently with and without `tck-`.
 *
 * @example
 * ```ts
 * const backend = createConformanceBackend();
 * backend.kind; // 'conformance'
 * ```
 */
export function createConformanceBackend(options: ConformanceOptions = {}): AgentBackend {
  const settings: Settings = {
    resubscribeHoldMs: Math.max(0, options.resubscribeHoldMs ?? DEFAULT_RESUBSCRIBE_HOLD_MS),
  };
  return {
    kind: 'conformance',
    run: (turn) => runConformance(turn, settings),
  };
}

interface Settings {
  readonly resubscribeHoldMs: number;
}

/** One scenario. Plain arrays for fixed sequences; async generators when a scenario waits. */
type Scenario = (turn: AgentTurn, settings: Settings) => Iterable<AgentEvent> | AsyncIterable<AgentEvent>;

/**
 * Runs the scenario the messageId selects. The abort check lives here, once, so that no
 * scenario can yield an outcome after the turn was canceled.
 */
async function* runConformance(turn: AgentTurn, settings: Settings): AsyncGenerator<AgentEvent> {
  if (turn.signal.aborted) return;
  const scenario = scenarioFor(turn.message.messageId);
  for await (const event of scenario(turn, settings)) {
    if (turn.signal.aborted) return;
    yield event;
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios. Events are built per turn (never shared) because consumers may attach ids to them.

const FILENAME = 'output.txt';
const FILE_MEDIA_TYPE = 'text/plain';
const FILE_URL = 'https://example.com/output.txt';
const FILE_BASE64 = Buffer.from('Generated file content', 'utf8').toString('base64');

const completeTask: Scenario = () => [completed('Hello from TCK')];

const artifactText: Scenario = () => [
  artifact('text-artifact', { kind: 'text', text: 'Generated text content' }),
  completed(),
];

const artifactFile: Scenario = () => [artifact('file-artifact', rawFilePart()), completed()];

const artifactFileUrl: Scenario = () => [
  artifact('file-url-artifact', {
    kind: 'url',
    url: FILE_URL,
    filename: FILENAME,
    mediaType: FILE_MEDIA_TYPE,
  }),
  completed(),
];

const artifactData: Scenario = () => [artifact('data-artifact', { kind: 'data', data: dataPayload() }), completed()];

const messageResponse: Scenario = () => [
  { type: 'message', parts: [{ kind: 'text', text: 'Direct message response' }] },
];

/** Asks on resumed turns too: see the module comment (1.0-dev resumes it with the same prefix). */
const inputRequired: Scenario = () => [{ type: 'input-required', question: 'Please provide input' }];

const rejectTask: Scenario = () => [{ type: 'rejected', reason: 'rejected' }];

/** working → one text artifact → completed, the shape of most 1.0-dev streaming scenarios. */
function streamText(text: string): Scenario {
  return () => [working(), artifact('stream-text-artifact', { kind: 'text', text }), completed()];
}

const streamCompleteOnly: Scenario = () => [completed()];

const streamFile: Scenario = () => [working(), artifact('stream-file-artifact', rawFilePart()), completed()];

/** Two appended chunks of one artifact; the executor bridge turns `text` events into appends. */
const streamChunked: Scenario = () => [
  working(),
  { type: 'text', text: 'chunk-1 ' },
  { type: 'text', text: 'chunk-2', last: true },
  completed(),
];

/** Keeps the task `working` long enough for the TCK to drop its stream and resubscribe. */
async function* resubscribeHold(turn: AgentTurn, settings: Settings): AsyncGenerator<AgentEvent> {
  yield working('Holding the task open for resubscription');
  if (!(await pause(settings.resubscribeHoldMs, turn.signal))) return;
  yield completed();
}

/** 1.0-dev's fallback for `tck-` messages it has no scenario for: behave like the echo agent. */
const echo = createEchoBackend();
const echoAndComplete: Scenario = (turn) => echo.run(turn);

/** The 0.3.x default: acknowledge, then leave the task interrupted (see the module comment). */
const keepOpen: Scenario = (turn) => [
  working('Processing your message'),
  {
    type: 'input-required',
    question: `You said: "${textOf(turn.message)}". Send a follow-up on this task, or cancel it.`,
  },
];

/** Only messageIds starting with this get 1.0-dev's echo-and-complete fallback. */
const V10_PREFIX = 'tck-';

/** Prefix → scenario, longest first, so that `tck-artifact-file-url` beats `tck-artifact-file`. */
const SCENARIOS: ReadonlyArray<readonly [prefix: string, scenario: Scenario]> = longestFirst([
  ['tck-complete-task', completeTask],
  ['tck-artifact-text', artifactText],
  ['tck-artifact-file', artifactFile],
  ['tck-artifact-file-url', artifactFileUrl],
  ['tck-artifact-data', artifactData],
  ['tck-message-response', messageResponse],
  ['tck-input-required', inputRequired],
  ['tck-reject-task', rejectTask],
  ['tck-stream-001', streamText('Stream hello from TCK')],
  ['tck-stream-002', streamCompleteOnly],
  ['tck-stream-003', streamText('Stream task lifecycle')],
  ['tck-stream-ordering-001', streamText('Ordered output')],
  ['tck-stream-artifact-text', streamText('Streamed text content')],
  ['tck-stream-artifact-file', streamFile],
  ['tck-stream-artifact-chunked', streamChunked],
  ['test-resubscribe-message-id', resubscribeHold],
]);

function scenarioFor(messageId: string): Scenario {
  for (const [prefix, scenario] of SCENARIOS) {
    if (messageId.startsWith(prefix)) return scenario;
  }
  return messageId.startsWith(V10_PREFIX) ? echoAndComplete : keepOpen;
}

function longestFirst<T extends readonly [string, unknown]>(entries: T[]): readonly T[] {
  return [...entries].sort((a, b) => b[0].length - a[0].length);
}

// ---------------------------------------------------------------------------------------------
// Event and part builders.

function working(text?: string): AgentEvent {
  return text === undefined ? { type: 'working' } : { type: 'working', text };
}

function completed(text?: string): AgentEvent {
  return text === undefined ? { type: 'completed' } : { type: 'completed', text };
}

function artifact(name: string, part: Part): AgentEvent {
  return { type: 'artifact', artifact: { name, parts: [part] } };
}

function rawFilePart(): Part {
  return { kind: 'raw', raw: FILE_BASE64, filename: FILENAME, mediaType: FILE_MEDIA_TYPE };
}

function dataPayload(): JsonValue {
  return { key: 'value', count: 42 };
}
