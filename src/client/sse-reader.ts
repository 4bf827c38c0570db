/**
 * Reads Server-Sent Events from a byte stream and yields each event's `data` (multi-line data
 * joined with `\n`), with the event type when one was named. A single event larger than
 * `maxEventBytes` is an error: a remote cannot make us buffer without bound.
 *
 * @example
 * ```ts
 * for await (const event of readSseEvents(response.body!)) console.log(event.data);
 * ```
 */
import { AirlockError } from '../errors/index.js';
export interface SseEvent {
  event?: string;
  data: string;
}

export class SseTooLargeError extends AirlockError {
  readonly code = 'SSE_EVENT_TOO_LARGE';
  constructor(limit: number) {
    super(`an event stream event is larger than ${limit} bytes`);
  }
}

export async function* readSseEvents(
  body: AsyncIterable<Uint8Array>,
  maxEventBytes = 1024 * 1024,
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let dataBytes = 0;
  let event: string | undefined;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    if (buffer.length > maxEventBytes * 2) throw new SseTooLargeError(maxEventBytes);
    let newline: number;
    while ((newline = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length > 0) yield event === undefined ? { data: data.join('\n') } : { event, data: data.join('\n') };
        data = [];
        dataBytes = 0;
        event = undefined;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') {
        dataBytes += value.length;
        if (dataBytes > maxEventBytes) throw new SseTooLargeError(maxEventBytes);
        data.push(value);
      } else if (field === 'event') {
        event = value;
      }
    }
  }
  if (data.length > 0) yield event === undefined ? { data: data.join('\n') } : { event, data: data.join('\n') };
}
