/**
 * The writer backend: a demo agent that streams a short composed piece about the caller's text,
 * a few words at a time, so that streaming, cancellation and multi-turn input can be watched
 * end to end without a model behind the gateway.
 *
 * @example
 * ```ts
 * const writer = createWriterBackend({ chunkDelayMs: 50 });
 * for await (const event of writer.run(turn)) console.log(event);
 * // { type: 'working', text: 'Writing about "tides"…' }
 * // { type: 'text', text: 'Here is a short piece about "tides". ' }
 * // … three more chunks, 50 ms apart …
 * // { type: 'text', text: 'That is all for now …', last: true }
 * // { type: 'completed' }
 * ```
 */
import { pause, textOf, type AgentBackend, type AgentEvent, type AgentTurn } from './backend.js';

/**
 * Options of {@link createWriterBackend}.
 *
 * @example
 * ```ts
 * const options: WriterOptions = { chunkDelayMs: 0 }; // as fast as the consumer reads
 * ```
 */
export interface WriterOptions {
  /** Pause between two text chunks, in milliseconds. Defaults to 20. */
  chunkDelayMs?: number;
}

const DEFAULT_CHUNK_DELAY_MS = 20;

/** The exact (trimmed, case-sensitive) text that makes the writer ask for a subject first. */
const ASK_ME = 'ask me';
const QUESTION = 'What should I write about?';

/** Long subjects are cut so that the reply stays short whatever the caller sends. */
const MAX_SUBJECT_CHARS = 80;
const NO_SUBJECT = 'something of my choosing';

/**
 * Creates the writer backend (kind `writer`). It yields `working`, then at least five text
 * chunks `chunkDelayMs` apart (the last one with `last: true`), then `completed`. When the
 * caller's text is exactly `ask me`, it asks "What should I write about?" (`input-required`)
 * and, when the task is resumed, writes about the answer instead. Cancellation stops it at
 * once, mid-pause included, without an outcome.
 *
 * @example
 * ```ts
 * const writer = createWriterBackend();           // 20 ms between chunks
 * const quick = createWriterBackend({ chunkDelayMs: 0 });
 * ```
 */
export function createWriterBackend(options: WriterOptions = {}): AgentBackend {
  const chunkDelayMs = Math.max(0, options.chunkDelayMs ?? DEFAULT_CHUNK_DELAY_MS);
  return {
    kind: 'writer',
    run: (turn) => runWriter(turn, chunkDelayMs),
  };
}

async function* runWriter(turn: AgentTurn, chunkDelayMs: number): AsyncGenerator<AgentEvent> {
  const { signal } = turn;
  if (signal.aborted) return;
  const text = textOf(turn.message).trim();
  // A resumed turn carries the answer to our question, whatever it says (even "ask me").
  if (!turn.resumed && text === ASK_ME) {
    yield { type: 'input-required', question: QUESTION };
    return;
  }
  const subject = subjectOf(text);
  yield { type: 'working', text: `Writing about "${subject}"…` };
  const chunks = composePiece(subject);
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0 && !(await pause(chunkDelayMs, signal))) return;
    if (signal.aborted) return;
    const chunk = chunks[i] ?? '';
    yield i === chunks.length - 1 ? { type: 'text', text: chunk, last: true } : { type: 'text', text: chunk };
  }
  if (signal.aborted) return;
  yield { type: 'completed' };
}

/** The subject as it appears in the piece: one line, bounded, never empty. */
function subjectOf(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  if (oneLine.length === 0) return NO_SUBJECT;
  return oneLine.length <= MAX_SUBJECT_CHARS ? oneLine : `${oneLine.slice(0, MAX_SUBJECT_CHARS - 1)}…`;
}

/** The piece, already cut into the chunks that will be streamed (five of them). */
function composePiece(subject: string): string[] {
  return [
    `Here is a short piece about "${subject}". `,
    'Every subject starts as a question, and this one is no exception. ',
    'Look at it closely and the small details begin to matter; ',
    'step back and the shape of the whole becomes clear. ',
    `That is all for now: thank you for asking about "${subject}".`,
  ];
}
