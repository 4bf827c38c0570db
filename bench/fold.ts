/**
 * In-process costs on the outbound reply path, no servers:
 * - **stream fold**: 100k streamed artifact chunks (`append: true`) folded into one task by
 *   `StreamFold` (src/client/stream-fold.ts) — all on one artifact, and spread over 10k
 *   artifacts. Issue 16, item 8: the fold used to copy the parts so far and scan the artifacts on
 *   every event (quadratic: 100k chunks on one artifact took minutes);
 * - **SSE read + fold**: the same 100k events as SSE bytes (64 KiB chunks) through
 *   `readSseEvents` (src/client/sse-reader.ts), `JSON.parse` and the fold;
 * - **framing**: `frameUntrusted` (src/content/frame.ts, marker neutralisation on the UTS #39
 *   confusables skeleton) on an 8 KiB ASCII text and an 8 KiB mixed-script text, µs per frame;
 * - **reply filter**: an upstream agent's 64 KiB streamed reply through `ReplyFilter`
 *   (src/agents/upstream/reply.ts: the upstream's token redacted in every form, marker look-alikes
 *   neutralised across chunks, email addresses redacted), in 16-character chunks (a model's
 *   tokens) and in 4 KiB chunks, µs per chunk.
 *
 * Medians over R rounds; the events are built before the timed part.
 *
 * Usage: node --import tsx bench/fold.ts [--rounds N=5] [--events N=100000] [--json]
 */
import { parseArgs } from 'node:util';
import type { Artifact, StreamEvent } from '../src/protocol/model.js';
import { readSseEvents } from '../src/client/sse-reader.js';
import { StreamFold, type TaskStreamEvent } from '../src/client/stream-fold.js';
import { frameUntrusted } from '../src/content/index.js';
import { ReplyFilter } from '../src/agents/upstream/reply.js';
import { printMachine, writeResult, type Headline } from './lib/common.js';
import { median, renderTable } from './lib/report.js';

const USAGE = 'usage: node --import tsx bench/fold.ts [--rounds N=5] [--events N=100000] [--json]';
const SPREAD_ARTIFACTS = 10_000;
const FRAME_ITERATIONS = 2_000;

function parse(argv: string[]): { rounds: number; events: number; json: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: 'string', default: '5' },
      events: { type: 'string', default: '100000' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
      // Forwarded by bench/all.ts to every section; nothing here runs for a duration or a load.
      duration: { type: 'string' },
      connections: { type: 'string' },
      warmup: { type: 'string' },
      'no-postgres': { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const rounds = Number(values.rounds);
  const events = Number(values.events);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  if (!Number.isInteger(events) || events < SPREAD_ARTIFACTS) {
    throw new Error(`--events must be an integer ≥ ${SPREAD_ARTIFACTS}, got ${values.events}`);
  }
  return { rounds, events, json: values.json };
}

function chunk(artifactId: string, text: string, append: boolean): TaskStreamEvent {
  const artifact: Artifact = { artifactId, parts: [{ kind: 'text', text }] };
  return { kind: 'artifact-update', taskId: 'task-1', contextId: 'context-1', artifact, append };
}

function oneArtifact(n: number): TaskStreamEvent[] {
  return Array.from({ length: n }, (_, i) => chunk('reply', 'chunk of text ', i > 0));
}

function spread(n: number): TaskStreamEvent[] {
  const ids = Array.from({ length: SPREAD_ARTIFACTS }, (_, i) => `artifact-${i.toString(16).padStart(8, '0')}`);
  return Array.from({ length: n }, (_, i) =>
    i < ids.length ? chunk(ids[i]!, 'x', false) : chunk(ids[(i * 7919) % ids.length]!, 'x', true),
  );
}

/** ms to fold the events. */
function timeFold(events: readonly TaskStreamEvent[]): number {
  const started = performance.now();
  const fold = new StreamFold(undefined, false);
  for (const event of events) fold.add(event);
  const ms = performance.now() - started;
  if (fold.task === undefined) throw new Error('nothing folded');
  return ms;
}

/** The events as the SSE bytes of v1.0-shaped JSON-RPC results (decoded here by JSON.parse only). */
function sseBytes(events: readonly TaskStreamEvent[]): Uint8Array[] {
  const text = events
    .map((event, i) => `id: ${i}\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: event })}\n\n`)
    .join('');
  const bytes = new TextEncoder().encode(text);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += 65_536) chunks.push(bytes.subarray(at, at + 65_536));
  return chunks;
}

async function timeReadAndFold(chunks: readonly Uint8Array[]): Promise<number> {
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const c of chunks) yield c;
  }
  const started = performance.now();
  const fold = new StreamFold(undefined, false);
  for await (const event of readSseEvents(body())) {
    const decoded = (JSON.parse(event.data) as { result: StreamEvent }).result;
    if (decoded.kind !== 'message') fold.add(decoded);
  }
  return performance.now() - started;
}

/** µs per frame of the text. */
function timeFrame(text: string): number {
  for (let i = 0; i < 200; i++) frameUntrusted(text, { source: 'bench' });
  const started = performance.now();
  for (let i = 0; i < FRAME_ITERATIONS; i++) frameUntrusted(text, { source: 'bench' });
  return ((performance.now() - started) * 1000) / FRAME_ITERATIONS;
}

/** µs per chunk of a 64 KiB reply cut into `size`-character chunks, the upstream's token as the secret. */
function timeReplyFilter(size: number): number {
  const chunks: string[] = [];
  for (let at = 0; at < REPLY_64K.length; at += size) chunks.push(REPLY_64K.slice(at, at + size));
  const once = (): void => {
    const filter = new ReplyFilter({ maxReplyChars: 1_000_000, secrets: [UPSTREAM_TOKEN] });
    for (const chunk of chunks) filter.chunk(chunk, false);
    filter.flush();
  };
  once();
  const started = performance.now();
  for (let i = 0; i < REPLY_ITERATIONS; i++) once();
  return ((performance.now() - started) * 1000) / (REPLY_ITERATIONS * chunks.length);
}

const UPSTREAM_TOKEN = 'upstream-token-0123456789abcdef';
const REPLY_ITERATIONS = 5;
const REPLY_64K = 'Here is what I found — the forecast says 18 °C, light rain after noon; see the table below. '
  .repeat(720)
  .slice(0, 65_536);

const ASCII_8K = 'The quarterly report: revenue up 4%, costs | margins steady; see $42 items. '
  .repeat(120)
  .slice(0, 8192);
const MIXED_8K = 'Отчёт — ünïcödé, 中文字符, émoji 🙂, ℮ ᎬNᎠ ꓰ ⲉ, ordinary words. '.repeat(160).slice(0, 8192);

async function main(): Promise<void> {
  const { rounds, events: n, json } = parse(process.argv.slice(2));
  const startedAt = new Date();
  printMachine();
  console.log(`${n} events per fold, ${rounds} rounds; framing: ${FRAME_ITERATIONS} frames of 8 KiB per round\n`);
  const one = oneArtifact(n);
  const many = spread(n);
  const bytes = sseBytes(one);
  const samples = {
    one: [] as number[],
    many: [] as number[],
    sse: [] as number[],
    ascii: [] as number[],
    mixed: [] as number[],
    filterSmall: [] as number[],
    filterLarge: [] as number[],
  };
  for (let round = 0; round < rounds; round++) {
    samples.one.push(timeFold(one));
    samples.many.push(timeFold(many));
    samples.sse.push(await timeReadAndFold(bytes));
    samples.ascii.push(timeFrame(ASCII_8K));
    samples.mixed.push(timeFrame(MIXED_8K));
    samples.filterSmall.push(timeReplyFilter(16));
    samples.filterLarge.push(timeReplyFilter(4096));
    console.log(
      `round ${round + 1}/${rounds}: fold ${samples.one.at(-1)!.toFixed(0)} ms / ${samples.many.at(-1)!.toFixed(0)} ms, ` +
        `SSE+fold ${samples.sse.at(-1)!.toFixed(0)} ms, frame ${samples.ascii.at(-1)!.toFixed(0)} µs / ${samples.mixed.at(-1)!.toFixed(0)} µs, ` +
        `reply filter ${samples.filterSmall.at(-1)!.toFixed(1)} / ${samples.filterLarge.at(-1)!.toFixed(1)} µs a chunk`,
    );
  }
  const k = `${n / 1000}k`;
  const headlines: Headline[] = [
    {
      figure: `stream fold, ${k} chunks, one artifact`,
      unit: 'ms',
      higherIsBetter: false,
      airlock: median(samples.one),
    },
    {
      figure: `stream fold, ${k} chunks, ${SPREAD_ARTIFACTS / 1000}k artifacts`,
      unit: 'ms',
      higherIsBetter: false,
      airlock: median(samples.many),
    },
    { figure: `SSE read + fold, ${k} events`, unit: 'ms', higherIsBetter: false, airlock: median(samples.sse) },
    { figure: 'frameUntrusted, 8 KiB ASCII', unit: 'µs', higherIsBetter: false, airlock: median(samples.ascii) },
    {
      figure: 'frameUntrusted, 8 KiB mixed scripts',
      unit: 'µs',
      higherIsBetter: false,
      airlock: median(samples.mixed),
    },
    {
      figure: 'reply filter, 16-character chunks',
      unit: 'µs a chunk',
      higherIsBetter: false,
      airlock: median(samples.filterSmall),
    },
    {
      figure: 'reply filter, 4 KiB chunks',
      unit: 'µs a chunk',
      higherIsBetter: false,
      airlock: median(samples.filterLarge),
    },
  ];
  console.log(
    `\n${renderTable(
      ['figure', 'median', 'unit'],
      headlines.map((h) => [h.figure, h.airlock.toFixed(1), h.unit]),
    )}`,
  );
  if (json) {
    const path = writeResult('fold', startedAt, {
      benchmark: 'fold: stream fold, SSE read, framing (in process)',
      settings: {
        events: n,
        rounds,
        spreadArtifacts: SPREAD_ARTIFACTS,
        frameIterations: FRAME_ITERATIONS,
        replyIterations: REPLY_ITERATIONS,
      },
      samples,
      headlines,
    });
    console.log(`\nwrote ${path}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
