/**
 * The wire format of the shared task event buses: what one replica sends to the others over
 * PostgreSQL NOTIFY or Redis PUBLISH, and how a receiver puts it back together.
 *
 * A message is one task event (`e`) or one cancel request (`c`). It travels as one or more
 * frames, each a JSON header line and a piece of the body:
 *
 * ```text
 * ["a1","3f9c0e1d2b4a5968",41,0,1,"e","7d0c…task id…",1764695930123]\n{"kind":"status-update",…}
 *   version, origin,        seq, part, parts, kind, task id, sent at      body (the event's JSON)
 * ```
 *
 * - `origin` names the sending process: a bus ignores its own echoes (its local listeners were
 *   told synchronously when it published).
 * - `seq` counts the origin's messages. Each origin's messages arrive in order (one connection
 *   sends them), so a receiver drops any `seq` it has already passed: a batch re-sent after a
 *   lost connection, whose first attempt did commit, is not delivered twice.
 * - PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. A body that does not fit in one
 *   frame is cut into `parts` frames at UTF-8 character boundaries and sent in one transaction;
 *   the receiver joins them. Chunking was chosen over a "changed, read the store" notice because
 *   the store is written behind the events (writes are coalesced), so a receiver reading it
 *   could see an older state than the event it was told about. Events larger than
 *   `maxEventBytes` are not sent at all (see the buses' options).
 * - `sent at` is the publish time on the origin (epoch ms, its clock), for the receiver's
 *   `airlock_event_bus_lag_seconds`. It was added after the first frames: a header without it
 *   (7 elements) is still read, and only not measured; elements after it are ignored, so a
 *   later field can be added the same way.
 *
 * @example
 * ```ts
 * const encoder = new FrameEncoder({ origin: newOrigin(), maxFrameBytes: 7999 });
 * const frames = encoder.encode({ kind: 'event', taskId, event });
 * const decoder = new FrameDecoder({ self: 'another-origin' });
 * for (const frame of frames) {
 *   const received = decoder.accept(frame);
 *   if (received) console.log(received.kind, received.taskId);
 * }
 * ```
 */
import { randomBytes } from 'node:crypto';
import type { StreamEvent } from '../../protocol/model.js';
import { AirlockError } from '../../errors/index.js';

/**
 * One message between replicas: a task event, or a request to cancel a task.
 *
 * @example
 * ```ts
 * const message: BusMessage = { kind: 'cancel', taskId: 't-1' };
 * ```
 */
export type BusMessage = { kind: 'event'; taskId: string; event: StreamEvent } | { kind: 'cancel'; taskId: string };

/**
 * A message as received: an event's body is still JSON text, parsed only by a process that has
 * listeners for the task (every replica receives every event; most have nobody to tell).
 *
 * @example
 * ```ts
 * const received = decoder.accept(frame);
 * if (received?.kind === 'event' && hasListeners(received.taskId)) publish(JSON.parse(received.body));
 * ```
 */
export type ReceivedMessage = ({ kind: 'event'; taskId: string; body: string } | { kind: 'cancel'; taskId: string }) & {
  /** When the origin published it (epoch ms, the origin's clock); absent in frames of older versions. */
  sentAt?: number;
};

/**
 * The largest NOTIFY payload PostgreSQL accepts (it must be shorter than 8000 bytes).
 *
 * @example
 * ```ts
 * const encoder = new FrameEncoder({ origin, maxFrameBytes: POSTGRES_MAX_PAYLOAD_BYTES });
 * ```
 */
export const POSTGRES_MAX_PAYLOAD_BYTES = 7_999;

const VERSION = 'a1';
const KIND_CODES = { event: 'e', cancel: 'c' } as const;
/** Most origins a decoder remembers (replicas, and replicas restarted under a new origin). */
const MAX_ORIGINS = 1_024;

/**
 * A new random origin id for one bus: 16 hex characters.
 *
 * @example
 * ```ts
 * newOrigin(); // '3f9c0e1d2b4a5968'
 * ```
 */
export function newOrigin(): string {
  return randomBytes(8).toString('hex');
}

/**
 * A message too big for the bus (over `maxEventBytes`): it is delivered locally only.
 *
 * @example
 * ```ts
 * if (error instanceof BusMessageTooLargeError) log.warn({ event: 'bus_event_too_large', bytes: error.bytes });
 * ```
 */
export class BusMessageTooLargeError extends AirlockError {
  readonly code = 'bus_message_too_large';
  readonly bytes: number;

  constructor(bytes: number, limit: number) {
    super(`A task event of ${bytes} bytes is over the bus limit of ${limit} bytes; it is delivered locally only`);
    this.bytes = bytes;
  }
}

/**
 * Turns messages into frames for one origin, numbering them.
 *
 * @example
 * ```ts
 * const encoder = new FrameEncoder({ origin, maxFrameBytes: POSTGRES_MAX_PAYLOAD_BYTES, maxMessageBytes: 4 << 20 });
 * const frames = encoder.encode({ kind: 'cancel', taskId });
 * ```
 */
export class FrameEncoder {
  readonly origin: string;
  readonly #maxFrameBytes: number;
  readonly #maxMessageBytes: number;
  readonly #now: () => number;
  #seq = 0;

  /** `now`: the publish time written into each frame (epoch ms; default `Date.now`). */
  constructor(options: { origin: string; maxFrameBytes?: number; maxMessageBytes?: number; now?: () => number }) {
    this.origin = options.origin;
    this.#now = options.now ?? Date.now;
    this.#maxFrameBytes = options.maxFrameBytes ?? Number.POSITIVE_INFINITY;
    this.#maxMessageBytes = options.maxMessageBytes ?? Number.POSITIVE_INFINITY;
  }

  /**
   * The frames of one message, in order.
   *
   * @throws BusMessageTooLargeError if the body is over `maxMessageBytes`.
   * @example
   * ```ts
   * const frames = encoder.encode({ kind: 'event', taskId, event });
   * ```
   */
  encode(message: BusMessage): string[] {
    const body = message.kind === 'event' ? JSON.stringify(message.event) : '';
    const seq = ++this.#seq;
    const kind = KIND_CODES[message.kind];
    const sentAt = Math.trunc(this.#now());
    const head = (part: number, parts: number): string =>
      `${JSON.stringify([VERSION, this.origin, seq, part, parts, kind, message.taskId, sentAt])}\n`;
    // Most events are small: one frame, measured without copying the body into a Buffer.
    const single = head(0, 1) + body;
    if (this.#maxFrameBytes === Number.POSITIVE_INFINITY || single.length * 3 <= this.#maxFrameBytes) {
      this.#checkSize(body);
      return [single];
    }
    const bytes = Buffer.from(body, 'utf8');
    if (bytes.length > this.#maxMessageBytes) throw new BusMessageTooLargeError(bytes.length, this.#maxMessageBytes);
    if (Buffer.byteLength(single, 'utf8') <= this.#maxFrameBytes) return [single];
    // Every header of this message is at most as long as the one with the largest numbers.
    const room = this.#maxFrameBytes - Buffer.byteLength(head(999_999, 999_999), 'utf8');
    if (room < 16) throw new RangeError('maxFrameBytes leaves no room for the body (the task id is too long)');
    const pieces = splitUtf8(bytes, room);
    return pieces.map((piece, index) => head(index, pieces.length) + piece);
  }

  #checkSize(body: string): void {
    if (this.#maxMessageBytes === Number.POSITIVE_INFINITY) return;
    // UTF-16 length ≤ UTF-8 length ≤ 3 × UTF-16 length: measure only when it could matter.
    if (body.length * 3 <= this.#maxMessageBytes) return;
    const bytes = Buffer.byteLength(body, 'utf8');
    if (bytes > this.#maxMessageBytes) throw new BusMessageTooLargeError(bytes, this.#maxMessageBytes);
  }
}

/**
 * Cuts UTF-8 bytes into strings of at most `room` bytes each, never inside a character.
 *
 * @example
 * ```ts
 * splitUtf8(Buffer.from('héllo'), 2); // ['h', 'é', 'll', 'o']
 * ```
 */
export function splitUtf8(bytes: Buffer, room: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(bytes.length, start + room);
    // Back off over continuation bytes (10xxxxxx): a cut there would split a character.
    if (end < bytes.length) while (end > start && ((bytes[end] as number) & 0xc0) === 0x80) end--;
    pieces.push(bytes.toString('utf8', start, end));
    start = end;
  }
  return pieces;
}

/** A message being put back together from its frames. */
interface Partial {
  seq: number;
  parts: number;
  pieces: string[];
}

/** What a decoder remembers of one origin. */
interface OriginState {
  /** The newest seq delivered or dropped; older frames are duplicates. */
  lastSeq: number;
  partial: Partial | undefined;
}

/**
 * Turns frames back into messages: drops its own echoes, duplicates, malformed frames and
 * messages whose frames did not all arrive.
 *
 * @example
 * ```ts
 * const decoder = new FrameDecoder({ self: encoder.origin });
 * const message = decoder.accept(payload); // undefined until a whole message is in
 * ```
 */
export class FrameDecoder {
  readonly #self: string;
  readonly #origins = new Map<string, OriginState>();
  /** Frames that could not be read (for tests and metrics). */
  malformed = 0;

  constructor(options: { self: string }) {
    this.#self = options.self;
  }

  /**
   * Takes one frame.
   *
   * @returns the message once all its frames are in, else undefined.
   * @example
   * ```ts
   * const message = decoder.accept(notification.payload ?? '');
   * ```
   */
  accept(frame: string): ReceivedMessage | undefined {
    const newline = frame.indexOf('\n');
    if (newline === -1) return this.#bad();
    let header: unknown;
    try {
      header = JSON.parse(frame.slice(0, newline));
    } catch {
      return this.#bad();
    }
    if (!isHeader(header)) return this.#bad();
    const [, origin, seq, part, parts, kind, taskId, sentAt] = header;
    if (origin === this.#self) return undefined;
    const state = this.#stateOf(origin);
    if (seq < state.lastSeq || (seq === state.lastSeq && state.partial === undefined)) return undefined;
    let body: string;
    if (parts === 1) {
      state.partial = undefined;
      state.lastSeq = seq;
      body = frame.slice(newline + 1);
    } else {
      let partial = state.partial;
      if (part === 0) {
        partial = { seq, parts, pieces: [] };
        state.partial = partial;
        state.lastSeq = seq;
      } else if (partial === undefined || partial.seq !== seq || partial.pieces.length !== part) {
        // A frame of a message whose beginning was lost: nothing of it can be delivered.
        state.partial = undefined;
        state.lastSeq = seq;
        return undefined;
      }
      partial.pieces.push(frame.slice(newline + 1));
      if (partial.pieces.length < parts) return undefined;
      state.partial = undefined;
      body = partial.pieces.join('');
    }
    const message: ReceivedMessage = kind === 'c' ? { kind: 'cancel', taskId } : { kind: 'event', taskId, body };
    // Not a time (an older frame, or a bad one): the message is delivered, only not measured.
    if (Number.isSafeInteger(sentAt) && (sentAt as number) > 0) message.sentAt = sentAt as number;
    return message;
  }

  /**
   * Forgets the origins' partial messages: a frame lost while the connection was down would
   * otherwise leave one waiting for ever (the next frame of that origin would drop it anyway).
   *
   * @example
   * ```ts
   * transport.on('reconnected', () => decoder.reset());
   * ```
   */
  reset(): void {
    for (const state of this.#origins.values()) state.partial = undefined;
  }

  #stateOf(origin: string): OriginState {
    let state = this.#origins.get(origin);
    if (state === undefined) {
      // Bounded: origins of restarted replicas never come back, so forgetting them all is safe.
      if (this.#origins.size >= MAX_ORIGINS) this.#origins.clear();
      state = { lastSeq: 0, partial: undefined };
      this.#origins.set(origin, state);
    }
    return state;
  }

  /** Counts a frame (or a body) that could not be read. */
  #bad(): undefined {
    this.malformed++;
    return undefined;
  }

  /**
   * Parses a received event's body; undefined (and counted as malformed) if it is not JSON.
   *
   * @example
   * ```ts
   * const event = decoder.parseEvent(received.body);
   * ```
   */
  parseEvent(body: string): StreamEvent | undefined {
    try {
      return JSON.parse(body) as StreamEvent;
    } catch {
      return this.#bad();
    }
  }
}

/** The first seven elements are checked; `sent at` (and anything after it) is read leniently. */
type Header = [string, string, number, number, number, 'e' | 'c', string, unknown?];

function isHeader(value: unknown): value is Header {
  if (!Array.isArray(value) || value.length < 7 || value[0] !== VERSION) return false;
  const [, origin, seq, part, parts, kind, taskId] = value as unknown[];
  return (
    typeof origin === 'string' &&
    Number.isSafeInteger(seq) &&
    Number.isSafeInteger(parts) &&
    (parts as number) >= 1 &&
    Number.isSafeInteger(part) &&
    (part as number) >= 0 &&
    (part as number) < (parts as number) &&
    (kind === 'e' || kind === 'c') &&
    typeof taskId === 'string'
  );
}
