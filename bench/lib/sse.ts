/**
 * A small SSE load client on undici: autocannon cannot time the events inside one response.
 *
 * `streamLoop` keeps N streams running for a while (each worker opens a stream, reads it to its
 * end, opens the next) and reports events relayed per second and time to the first event.
 * `openHeldStreams` opens N streams at once and keeps them open until told to close them.
 *
 * An event is counted at each blank line (`\n\n`) in the body, which is how every server here
 * ends an SSE event.
 *
 * @example
 * ```ts
 * const stats = await streamLoop(target, { concurrency: 20, duration: 5, expectEvents: 9 });
 * stats.eventsPerSec; stats.ttfcP99;
 * ```
 */
import { setMaxListeners } from 'node:events';
import { Agent, request } from 'undici';
import { percentile } from './load.js';
import type { Target } from './load.js';

const LF = 0x0a;

export interface StreamLoopStats {
  /** SSE events received per second, all streams together. */
  eventsPerSec: number;
  /** Streams completed per second. */
  streamsPerSec: number;
  /** Time from sending the request to the first event, ms. */
  ttfcP50: number;
  ttfcP99: number;
  /** Whole stream, ms. */
  streamP50: number;
  streams: number;
  events: number;
  /** Streams that failed or ended with fewer events than expected. */
  errors: number;
  firstError?: string;
}

interface OneStream {
  ttfc: number;
  total: number;
  events: number;
}

/** Counts event ends (`\n\n`) in a chunk; `previousLf` carries a trailing `\n` across chunks. */
function countEvents(chunk: Buffer, state: { previousLf: boolean }): number {
  let count = 0;
  let previous = state.previousLf;
  for (let index = 0; index < chunk.length; index++) {
    const isLf = chunk[index] === LF;
    if (isLf && previous) {
      count++;
      previous = false;
      continue;
    }
    if (chunk[index] !== 0x0d) previous = isLf;
  }
  state.previousLf = previous;
  return count;
}

async function oneStream(target: Target, dispatcher: Agent, signal?: AbortSignal): Promise<OneStream> {
  const started = performance.now();
  const response = await request(target.url, {
    method: 'POST',
    headers: { ...target.headers, accept: 'text/event-stream' },
    body: target.body,
    dispatcher,
    ...(signal !== undefined && { signal }),
  });
  if (response.statusCode !== 200) {
    const text = await response.body.text();
    throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
  }
  const state = { previousLf: false };
  let events = 0;
  let ttfc = Number.NaN;
  for await (const chunk of response.body) {
    const found = countEvents(chunk as Buffer, state);
    if (found > 0 && events === 0) ttfc = performance.now() - started;
    events += found;
  }
  return { ttfc, total: performance.now() - started, events };
}

/** One dispatcher per run, with enough connections for every stream. */
export function streamDispatcher(connections: number): Agent {
  return new Agent({ connections, pipelining: 1, keepAliveTimeout: 10_000, headersTimeout: 0, bodyTimeout: 0 });
}

/** `concurrency` workers, each reading one whole stream after another, for `duration` s. */
export async function streamLoop(
  target: Target,
  options: { concurrency: number; duration: number; expectEvents: number },
): Promise<StreamLoopStats> {
  const dispatcher = streamDispatcher(options.concurrency);
  const ttfcs: number[] = [];
  const totals: number[] = [];
  let events = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + options.duration * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      try {
        const stream = await oneStream(target, dispatcher);
        events += stream.events;
        if (stream.events < options.expectEvents) {
          errors++;
          firstError ??= `stream ended after ${stream.events} of ${options.expectEvents} events`;
          continue;
        }
        ttfcs.push(stream.ttfc);
        totals.push(stream.total);
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    await dispatcher.close();
  }
  const elapsed = (performance.now() - started) / 1000;
  ttfcs.sort((a, b) => a - b);
  totals.sort((a, b) => a - b);
  return {
    eventsPerSec: events / elapsed,
    streamsPerSec: totals.length / elapsed,
    ttfcP50: percentile(ttfcs, 50),
    ttfcP99: percentile(ttfcs, 99),
    streamP50: percentile(totals, 50),
    streams: totals.length,
    events,
    errors,
    ...(firstError !== undefined && { firstError }),
  };
}

/** Reads one stream and returns its events' `data:` payloads (to replay them elsewhere). */
export async function captureStream(target: Target): Promise<string[]> {
  const response = await request(target.url, {
    method: 'POST',
    headers: { ...target.headers, accept: 'text/event-stream' },
    body: target.body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
  return text
    .split('\n\n')
    .map((block) => block.trim())
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length));
}

export interface HeldStreams {
  /** How many streams got their first event. */
  readonly open: number;
  readonly failed: number;
  readonly firstError?: string;
  close(): Promise<void>;
}

/**
 * Opens `count` streams (in batches, so the server is not flooded with connects) and resolves
 * once every one has its first event or failed. The streams stay open until `close()`.
 */
export async function openHeldStreams(
  count: number,
  makeTarget: (index: number) => Target,
  options: { batch?: number; timeoutMs?: number } = {},
): Promise<HeldStreams> {
  const dispatcher = streamDispatcher(count);
  const controller = new AbortController();
  // One signal for every stream: each request adds a listener.
  setMaxListeners(0, controller.signal);
  const batch = options.batch ?? 100;
  let open = 0;
  let failed = 0;
  let firstError: string | undefined;
  const reading: Promise<void>[] = [];
  const fail = (error: unknown): void => {
    failed++;
    firstError ??= error instanceof Error ? error.message : String(error);
  };
  const start = (index: number): Promise<void> =>
    new Promise<void>((resolveFirst) => {
      const target = makeTarget(index);
      const run = async (): Promise<void> => {
        const response = await request(target.url, {
          method: 'POST',
          headers: { ...target.headers, accept: 'text/event-stream' },
          body: target.body,
          dispatcher,
          signal: controller.signal,
        });
        if (response.statusCode !== 200) {
          const text = await response.body.text();
          throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
        }
        const state = { previousLf: false };
        let counted = false;
        for await (const chunk of response.body) {
          if (!counted && countEvents(chunk as Buffer, state) > 0) {
            counted = true;
            open++;
            resolveFirst();
          }
        }
        if (!counted) throw new Error('stream ended before its first event');
      };
      reading.push(
        run().catch((error: unknown) => {
          if (!controller.signal.aborted) fail(error);
          resolveFirst();
        }),
      );
    });
  const timeout = options.timeoutMs ?? 60_000;
  const deadline = AbortSignal.timeout(timeout);
  for (let first = 0; first < count; first += batch) {
    if (deadline.aborted) throw new Error(`held streams: not all ${count} opened within ${timeout} ms`);
    const indices = Array.from({ length: Math.min(batch, count - first) }, (_, offset) => first + offset);
    await Promise.all(indices.map(start));
  }
  return {
    get open() {
      return open;
    },
    get failed() {
      return failed;
    },
    get firstError() {
      return firstError;
    },
    async close() {
      controller.abort();
      await Promise.allSettled(reading);
      await dispatcher.destroy().catch(() => undefined);
    },
  };
}
