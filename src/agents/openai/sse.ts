/**
 * Server-sent events framing, as the WHATWG spec defines it and OpenAI-compatible servers use it:
 * lines end in LF, CRLF or a lone CR; a line starting with ':' is a comment; `data:` lines
 * accumulate (joined by '\n') until a blank line dispatches them. Only `data` matters to a
 * chat-completion stream, so `event`, `id` and `retry` are read and dropped.
 *
 * Text goes in as it arrives, cut anywhere (even between the CR and LF of one line ending); what
 * comes out does not depend on where it was cut.
 *
 * @example
 * ```ts
 * const sse = new SseDataDecoder();
 * sse.push('data: {"a"');       // []
 * sse.push(':1}\n\ndata: [DONE]\n\n'); // ['{"a":1}', '[DONE]']
 * ```
 */

/**
 * Turns a text stream into the `data` payloads of its events, in order.
 *
 * @example
 * ```ts
 * const sse = new SseDataDecoder();
 * for (const data of sse.push(text)) handle(data);
 * for (const data of sse.end()) handle(data);
 * ```
 */
export class SseDataDecoder {
  /** The start of a line whose end has not arrived yet. */
  #partialLine = '';
  /** The previous piece ended in CR: an LF at the start of the next one belongs to that line end. */
  #afterCr = false;
  /** The `data` lines of the event being read, each followed by '\n' (as the spec builds it). */
  #data = '';
  #hasData = false;

  /**
   * Feeds the next piece of the stream; returns the `data` of every event it completed.
   *
   * @example
   * ```ts
   * new SseDataDecoder().push(': keep-alive\r\ndata: hi\r\n\r\n'); // ['hi']
   * ```
   */
  push(text: string): string[] {
    const out: string[] = [];
    if (text.length === 0) return out;
    let start = 0;
    if (this.#afterCr && text.startsWith('\n')) start = 1;
    this.#afterCr = false;
    for (let index = start; index < text.length; index++) {
      const char = text.charCodeAt(index);
      if (char !== LF && char !== CR) continue;
      const line = this.#partialLine + text.slice(start, index);
      this.#partialLine = '';
      this.#line(line, out);
      if (char === CR) {
        if (index + 1 === text.length) this.#afterCr = true;
        else if (text.charCodeAt(index + 1) === LF) index++;
      }
      start = index + 1;
    }
    this.#partialLine += text.slice(start);
    return out;
  }

  /**
   * The stream ended: returns the data of an event whose lines all arrived but whose closing blank
   * line did not (some servers end that way). An unfinished last line is dropped: it may be a cut
   * JSON object, and what it would have said is unknown.
   *
   * @example
   * ```ts
   * const sse = new SseDataDecoder();
   * sse.push('data: [DONE]\n');
   * sse.end(); // ['[DONE]']
   * ```
   */
  end(): string[] {
    const out: string[] = [];
    this.#partialLine = '';
    this.#afterCr = false;
    this.#dispatch(out);
    return out;
  }

  #line(line: string, out: string[]): void {
    if (line.length === 0) {
      this.#dispatch(out);
      return;
    }
    if (line.charCodeAt(0) === COLON) return; // a comment (": keep-alive", ": OPENROUTER PROCESSING")
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.#data += `${value}\n`;
    this.#hasData = true;
  }

  #dispatch(out: string[]): void {
    if (!this.#hasData) return;
    out.push(this.#data.slice(0, -1));
    this.#data = '';
    this.#hasData = false;
  }
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
