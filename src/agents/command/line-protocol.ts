/**
 * The command backend's line protocol: a stdout line that starts with `@airlock ` is a control
 * line (a progress note, a question, a failure, a refusal), every other byte is reply text.
 *
 * The parser is incremental: stdout arrives in chunks that may cut a line anywhere, and reply
 * text must stream as it comes. So a line is held back only while it could still become a
 * control line (while what has arrived of it is a prefix of `@airlock `); as soon as it cannot,
 * it goes out as text, the rest of the line too, without waiting for its newline. A control
 * line is held until its newline (or the end of the output).
 *
 * @example
 * ```ts
 * const parser = new LineProtocolParser();
 * parser.push('Hello\n@air');      // [{ kind: 'text', text: 'Hello\n' }] — '@air' is held back
 * parser.push('lock working 50%\n'); // [{ kind: 'working', note: '50%' }]
 * parser.end();                    // []
 * ```
 */

/**
 * What starts a control line: the marker and one space. Case-sensitive, at the very start of a line.
 *
 * @example
 * ```ts
 * line.startsWith(CONTROL_PREFIX); // true for '@airlock working …', false for '@airlock' alone
 * ```
 */
export const CONTROL_PREFIX = '@airlock ';

/**
 * One piece of a command's stdout, as the protocol reads it.
 *
 * @example
 * ```ts
 * const items: ProtocolItem[] = [
 *   { kind: 'text', text: 'partial reply' },
 *   { kind: 'working', note: 'fetching' },
 *   { kind: 'input-required', question: 'Which city?' },
 *   { kind: 'failed', reason: 'no such city' },
 *   { kind: 'rejected', reason: 'not allowed' },
 *   { kind: 'unknown', verb: 'progress' },
 * ];
 * ```
 */
export type ProtocolItem =
  /** Reply text, exactly as written (newlines included). */
  | { readonly kind: 'text'; readonly text: string }
  /** `@airlock working <note>`: a progress note; the note may be empty. */
  | { readonly kind: 'working'; readonly note: string }
  /** `@airlock input-required <question>`: the program needs an answer from the caller. */
  | { readonly kind: 'input-required'; readonly question: string }
  /** `@airlock failed <reason>`: the turn fails with this reason. */
  | { readonly kind: 'failed'; readonly reason: string }
  /** `@airlock rejected <reason>`: the program refuses the request. */
  | { readonly kind: 'rejected'; readonly reason: string }
  /** A control line with a verb this version does not know: dropped (and logged by the caller). */
  | { readonly kind: 'unknown'; readonly verb: string };

/** The verb that escapes a literal reply line: `@airlock text <rest>` is the reply text `<rest>`. */
const TEXT_VERB = 'text';

/**
 * Reads one whole control line (without its newline; it must start with {@link CONTROL_PREFIX}).
 * The verb is the word after the prefix; the argument is the rest after one space, trimmed
 * (a trailing `\r` from a CRLF line ending goes too). For the `text` escape the argument is kept
 * exactly as written, so `@airlock text  two spaces` is the text ` two spaces`; the newline that
 * ended the line is not part of it (the streaming parser adds it back).
 *
 * @example
 * ```ts
 * parseControlLine('@airlock working Searching…');  // { kind: 'working', note: 'Searching…' }
 * parseControlLine('@airlock text @airlock rocks'); // { kind: 'text', text: '@airlock rocks' }
 * parseControlLine('@airlock bogus 1');              // { kind: 'unknown', verb: 'bogus' }
 * ```
 */
export function parseControlLine(line: string): ProtocolItem {
  const body = line.startsWith(CONTROL_PREFIX) ? line.slice(CONTROL_PREFIX.length) : line;
  const space = body.indexOf(' ');
  const verb = stripCarriageReturn(space < 0 ? body : body.slice(0, space));
  const rawArgument = space < 0 ? '' : body.slice(space + 1);
  if (verb === TEXT_VERB) return { kind: 'text', text: rawArgument };
  const argument = rawArgument.trim();
  switch (verb) {
    case 'working':
      return { kind: 'working', note: argument };
    case 'input-required':
      return { kind: 'input-required', question: argument };
    case 'failed':
      return { kind: 'failed', reason: argument };
    case 'rejected':
      return { kind: 'rejected', reason: argument };
    default:
      return { kind: 'unknown', verb };
  }
}

function stripCarriageReturn(text: string): string {
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

/**
 * Where the parser is within the current line:
 * - `prefix`: at most a proper prefix of {@link CONTROL_PREFIX} has arrived (held back);
 * - `control`: the line is a control line (held until its newline);
 * - `text`: the line cannot be a control line (streamed as it comes).
 */
type LineState = 'prefix' | 'control' | 'text';

/**
 * The incremental parser: push decoded stdout chunks, get protocol items; `end()` once the output
 * is over. However the output is cut into chunks, the items carry the same text and the same
 * control lines in the same order (only how text is split between items may differ).
 *
 * @example
 * ```ts
 * const parser = new LineProtocolParser();
 * const items = [...parser.push('@airlock input-required Name?\n'), ...parser.end()];
 * // [{ kind: 'input-required', question: 'Name?' }]
 * ```
 */
export class LineProtocolParser {
  #state: LineState = 'prefix';
  /** The held-back start of the line (`prefix`) or the control line so far (`control`). */
  #held = '';

  /** Reads the next chunk; returns the items it completes (adjacent text joined). */
  push(chunk: string): ProtocolItem[] {
    const items: ProtocolItem[] = [];
    let text = '';
    let index = 0;
    while (index < chunk.length) {
      if (this.#state === 'text') {
        const newline = chunk.indexOf('\n', index);
        const end = newline < 0 ? chunk.length : newline + 1;
        text += chunk.slice(index, end);
        index = end;
        if (newline >= 0) this.#state = 'prefix';
      } else if (this.#state === 'control') {
        const newline = chunk.indexOf('\n', index);
        if (newline < 0) {
          this.#held += chunk.slice(index);
          index = chunk.length;
        } else {
          this.#held += chunk.slice(index, newline);
          index = newline + 1;
          text = this.#emitControl(items, text, true);
        }
      } else {
        // Compare one character at a time: the first that differs from the prefix decides.
        const char = chunk.charAt(index);
        if (char === CONTROL_PREFIX.charAt(this.#held.length)) {
          this.#held += char;
          index += 1;
          if (this.#held.length === CONTROL_PREFIX.length) this.#state = 'control';
        } else {
          text += this.#held;
          this.#held = '';
          this.#state = 'text';
        }
      }
    }
    if (text.length > 0) items.push({ kind: 'text', text });
    return items;
  }

  /**
   * The output is over: a held-back line start is text, an unterminated control line still
   * counts. The parser is then ready for a new output.
   */
  end(): ProtocolItem[] {
    const items: ProtocolItem[] = [];
    let text = '';
    if (this.#state === 'control') text = this.#emitControl(items, text, false);
    else if (this.#state === 'prefix') text = this.#held;
    this.#held = '';
    this.#state = 'prefix';
    if (text.length > 0) items.push({ kind: 'text', text });
    return items;
  }

  /**
   * Turns the held control line into an item. An escaped text line joins the pending text (with
   * the newline that ended it); anything else first flushes the pending text so order is kept.
   * Returns the pending text that is left.
   */
  #emitControl(items: ProtocolItem[], pendingText: string, endedByNewline: boolean): string {
    const item = parseControlLine(this.#held);
    this.#held = '';
    this.#state = 'prefix';
    if (item.kind === 'text') return pendingText + item.text + (endedByNewline ? '\n' : '');
    if (pendingText.length > 0) items.push({ kind: 'text', text: pendingText });
    items.push(item);
    return '';
  }
}
