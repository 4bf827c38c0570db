/**
 * The part of reading a remote's SSE stream that both outbound bindings share: each event's
 * data as a JSON object (capped in size), and a payload decoded in the remote's dialect, a
 * malformed one being the remote's fault (`invalid_response`), never ours.
 *
 * @example
 * ```ts
 * for await (const { event, frame } of readJsonEvents(response.body, endpoint)) {
 *   if (frame === undefined) throw new CallFailure('invalid_response');
 *   yield decodeFromRemote((value) => endpoint.dialect.decodeStreamEvent(value), frame);
 * }
 * ```
 */
import { A2AError } from '../protocol/errors.js';
import { CallFailure } from './call-failure.js';
import { MAX_SSE_EVENT_BYTES } from './remote-wire.js';
import { readSseEvents } from './sse-reader.js';

/** One SSE event: its type when named, and its data when that is a JSON object. */
export interface JsonEvent {
  event?: string | undefined;
  frame: Record<string, unknown> | undefined;
}

/**
 * The events of a remote's stream, each no larger than the entry's response cap (and the SSE cap).
 *
 * @example
 * ```ts
 * for await (const { frame } of readJsonEvents(body, { entry })) if (frame?.error !== undefined) fail(frame);
 * ```
 */
export async function* readJsonEvents(
  body: AsyncIterable<Buffer>,
  endpoint: { readonly entry: { readonly maxResponseBytes: number } },
): AsyncGenerator<JsonEvent, void, undefined> {
  for await (const sse of readSseEvents(body, Math.min(MAX_SSE_EVENT_BYTES, endpoint.entry.maxResponseBytes))) {
    let frame: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(sse.data);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        frame = parsed as Record<string, unknown>;
      }
    } catch {
      frame = undefined;
    }
    yield { event: sse.event, frame };
  }
}

/**
 * A remote's payload through one of the dialect's decoders: what the remote got wrong is an
 * `invalid_response` (the decoder's A2AError), anything else is ours and passes through.
 *
 * @throws CallFailure `invalid_response` when the payload does not decode
 * @example
 * ```ts
 * const event = decodeFromRemote((value) => endpoint.dialect.decodeStreamEvent(value), frame.result);
 * ```
 */
export function decodeFromRemote<T>(decode: (payload: unknown) => T, payload: unknown): T {
  try {
    return decode(payload);
  } catch (error) {
    if (error instanceof A2AError) throw new CallFailure('invalid_response');
    throw error;
  }
}
