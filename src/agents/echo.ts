/**
 * The echo backend: answers with the caller's own text. It is the benchmark's agent, so it
 * must cost next to nothing: no timers, no copies, and the one event that never varies is a
 * shared frozen constant.
 *
 * @example
 * ```ts
 * const echo = createEchoBackend();
 * for await (const event of echo.run(turn)) console.log(event);
 * // { type: 'text', text: 'hello', last: true }
 * // { type: 'completed' }
 * ```
 */
import { isAborted, textOf, type AgentBackend, type AgentEvent, type AgentTurn } from './backend.js';

/** What the caller sees when there was nothing to echo. */
const NO_TEXT = '(no text)';

// Shared across turns: these never depend on the caller, so allocating them per turn would be
// pure overhead on the hot path. Frozen so that no consumer can change them for the next turn.
const COMPLETED: AgentEvent = Object.freeze({ type: 'completed' });
const COMPLETED_NO_TEXT: AgentEvent = Object.freeze({ type: 'completed', text: NO_TEXT });

/**
 * Creates the echo backend (kind `echo`). A message with text yields that text as one chunk
 * (`last: true`) and completes; a message without text (no text parts, or only empty ones)
 * completes with the text `(no text)` and no chunk.
 *
 * @example
 * ```ts
 * const backend = createEchoBackend();
 * backend.kind; // 'echo'
 * ```
 */
export function createEchoBackend(): AgentBackend {
  return { kind: 'echo', run: runEcho, runSync: echoEvents };
}

/** One echo turn, as the async contract asks: the events of `echoEvents`. */
async function* runEcho(turn: AgentTurn): AsyncGenerator<AgentEvent> {
  yield* echoEvents(turn);
}

/**
 * One echo turn. Nothing here waits, so the bridge pulls it synchronously (`runSync`). An
 * already-aborted turn ends without an outcome, as the contract asks.
 */
function* echoEvents(turn: AgentTurn): Generator<AgentEvent, void, undefined> {
  if (isAborted(turn)) return;
  const text = textOf(turn.message);
  if (text.length === 0) {
    yield COMPLETED_NO_TEXT;
    return;
  }
  yield { type: 'text', text, last: true };
  // The consumer may have canceled while we were suspended at the yield above.
  if (isAborted(turn)) return;
  yield COMPLETED;
}
