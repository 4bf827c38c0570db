import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StreamEvent } from '../../protocol/model.js';
import {
  BusMessageTooLargeError,
  FrameDecoder,
  FrameEncoder,
  POSTGRES_MAX_PAYLOAD_BYTES,
  splitUtf8,
  type BusMessage,
} from './frames.js';

function artifactEvent(text: string): StreamEvent {
  return {
    kind: 'artifact-update',
    taskId: 't-1',
    contextId: 'c-1',
    artifact: { artifactId: 'a-1', parts: [{ kind: 'text', text }] },
    append: true,
    lastChunk: false,
  };
}

/** Received messages with their events parsed, to compare with what was sent. */
function decode(decoder: FrameDecoder, frame: string): BusMessage | undefined {
  const received = decoder.accept(frame);
  if (received === undefined) return undefined;
  if (received.kind === 'cancel') return { kind: 'cancel', taskId: received.taskId };
  const event = decoder.parseEvent(received.body);
  return event === undefined ? undefined : { kind: 'event', taskId: received.taskId, event };
}

function roundTrip(encoder: FrameEncoder, decoder: FrameDecoder, message: BusMessage): BusMessage[] {
  const out: BusMessage[] = [];
  for (const frame of encoder.encode(message)) {
    const received = decode(decoder, frame);
    if (received !== undefined) out.push(received);
  }
  return out;
}

describe('bus frames', () => {
  it('carries a small event in one frame and a cancel request with no body', () => {
    const encoder = new FrameEncoder({ origin: 'a', maxFrameBytes: POSTGRES_MAX_PAYLOAD_BYTES });
    const decoder = new FrameDecoder({ self: 'b' });
    const event = artifactEvent('hello');
    assert.equal(encoder.encode({ kind: 'event', taskId: 't-1', event }).length, 1);
    assert.deepEqual(roundTrip(encoder, decoder, { kind: 'event', taskId: 't-1', event }), [
      { kind: 'event', taskId: 't-1', event },
    ]);
    assert.deepEqual(roundTrip(encoder, decoder, { kind: 'cancel', taskId: 't-2' }), [
      { kind: 'cancel', taskId: 't-2' },
    ]);
  });

  it('cuts a large event into frames under the NOTIFY limit, never inside a character', () => {
    const encoder = new FrameEncoder({ origin: 'a', maxFrameBytes: POSTGRES_MAX_PAYLOAD_BYTES });
    const decoder = new FrameDecoder({ self: 'b' });
    // Multi-byte characters of every width, so that cuts fall on every kind of boundary.
    const text = 'é€😀a'.repeat(20_000);
    const event = artifactEvent(text);
    const frames = encoder.encode({ kind: 'event', taskId: 't-1', event });
    assert.ok(frames.length > 10);
    for (const frame of frames) assert.ok(Buffer.byteLength(frame, 'utf8') <= POSTGRES_MAX_PAYLOAD_BYTES);
    let received: BusMessage | undefined;
    for (const frame of frames) received = decode(decoder, frame) ?? received;
    assert.deepEqual(received, { kind: 'event', taskId: 't-1', event });
  });

  it('splits UTF-8 only at character boundaries', () => {
    const bytes = Buffer.from('h😀é', 'utf8');
    const pieces = splitUtf8(bytes, 4);
    assert.deepEqual(pieces, ['h', '😀', 'é']);
    assert.equal(pieces.join(''), 'h😀é');
  });

  it('drops its own echoes, duplicates, and messages with a lost frame', () => {
    const encoder = new FrameEncoder({ origin: 'a', maxFrameBytes: 600 });
    const own = new FrameDecoder({ self: 'a' });
    const event = artifactEvent('x'.repeat(2_000));
    const frames = encoder.encode({ kind: 'event', taskId: 't-1', event });
    assert.ok(frames.length >= 4);
    for (const frame of frames) assert.equal(own.accept(frame), undefined);

    const other = new FrameDecoder({ self: 'b' });
    let delivered = 0;
    for (const frame of [...frames, ...frames]) if (other.accept(frame) !== undefined) delivered++;
    assert.equal(delivered, 1, 'a batch sent twice is delivered once');

    const lossy = new FrameDecoder({ self: 'b' });
    const next = encoder.encode({ kind: 'event', taskId: 't-1', event });
    const withHole = next.filter((_, index) => index !== 1);
    for (const frame of withHole) assert.equal(lossy.accept(frame), undefined);
    // The origin's next message still gets through.
    const after = encoder.encode({ kind: 'cancel', taskId: 't-9' });
    assert.deepEqual(decode(lossy, after[0] as string), { kind: 'cancel', taskId: 't-9' });
  });

  it('counts malformed frames and refuses events over the size limit', () => {
    const decoder = new FrameDecoder({ self: 'b' });
    assert.equal(decoder.accept('no header'), undefined);
    assert.equal(decoder.accept('["a1"]\n{}'), undefined);
    assert.equal(decoder.accept('{not json\n'), undefined);
    assert.equal(decoder.parseEvent('{not json'), undefined);
    assert.equal(decoder.malformed, 4);
    const encoder = new FrameEncoder({
      origin: 'a',
      maxFrameBytes: POSTGRES_MAX_PAYLOAD_BYTES,
      maxMessageBytes: 1_000,
    });
    assert.throws(
      () => encoder.encode({ kind: 'event', taskId: 't', event: artifactEvent('y'.repeat(2_000)) }),
      BusMessageTooLargeError,
    );
  });

  it('writes the publish time into every frame; reads frames without it, unmeasured', () => {
    const encoder = new FrameEncoder({ origin: 'a', maxFrameBytes: 600, now: () => 1_764_000_000_123.7 });
    const decoder = new FrameDecoder({ self: 'b' });
    const frames = encoder.encode({ kind: 'event', taskId: 't-1', event: artifactEvent('x'.repeat(2_000)) });
    assert.ok(frames.length > 1);
    let received;
    for (const frame of frames) {
      assert.equal((JSON.parse(frame.slice(0, frame.indexOf('\n'))) as unknown[])[7], 1_764_000_000_123);
      received = decoder.accept(frame) ?? received;
    }
    assert.equal(received?.sentAt, 1_764_000_000_123);
    // A frame of the first version: seven header elements, delivered with no time.
    const old = decoder.accept(`["a1","c",1,0,1,"c","t-2"]\n`);
    assert.deepEqual(old, { kind: 'cancel', taskId: 't-2' });
    // A time that is not one is ignored; elements after it too (room for later fields).
    assert.deepEqual(decoder.accept(`["a1","c",2,0,1,"c","t-3","soon"]\n`), { kind: 'cancel', taskId: 't-3' });
    assert.deepEqual(decoder.accept(`["a1","c",3,0,1,"c","t-4",5,"later"]\n`), {
      kind: 'cancel',
      taskId: 't-4',
      sentAt: 5,
    });
    assert.equal(decoder.accept(`["a1","c",4,0,1,"c"]\n`), undefined, 'six elements: malformed');
    assert.equal(decoder.malformed, 1);
  });
});
