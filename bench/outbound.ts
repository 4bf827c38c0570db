/**
 * Outbound: what Airlock's guarded client costs per call, next to a bare undici round trip and
 * to the official @a2a-js/sdk client, all calling the same loopback A2A server; and what
 * verifying a signed card costs, next to the SDK's verifier.
 *
 * Calls (all in this process, against bench/peers/raw-a2a.ts in a child process, which answers
 * every JSON-RPC call with one completed task):
 * - **Airlock client**: `createOutboundClient` with a one-entry registry (plain http to loopback,
 *   which the URL policy allows from a loopback card URL) and `send({ agent, message: 'hello' })`:
 *   the guarded transport, the card trusted and pinned once (TOFU) and then served from the
 *   cache (`card_refresh_s` 300), the v1.0 `SendMessage`, decoding, result shaping and framing,
 *   the in-memory ledger mirror. No audit file.
 * - **@a2a-js/sdk client**: `ClientFactory.createFromUrl` once, then `client.sendMessage(...)`.
 * - **bare undici**: `undici.request` POSTing the same JSON-RPC body to the same URL, the reply
 *   parsed with `body.json()`: the ceiling for a client.
 *
 * C calls in flight (closed loop), one warm-up each, R interleaved rounds, medians.
 *
 * Card verification: one v1.0 card signed with ES256 and one with EdDSA (`signCard`), verified
 * N times in a row from its bytes: `verifyCardSignatures(bytes, keys, { requireSigned: true })`
 * (parse, canonical payload, JWS check, coverage) against the SDK's
 * `verifyAgentCardSignature(...)` on `AgentCard.fromJSON(JSON.parse(bytes))` with the key
 * already imported. µs per verification (median of R passes).
 *
 * Usage: node --import tsx bench/outbound.ts [--duration S=3] [--rounds N=3] [--connections C=16] [--warmup S=1] [--iterations N=2000] [--json]
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentCard, Role, verifyAgentCardSignature } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Agent, request } from 'undici';
import { createOutboundClient } from '../src/client/index.js';
import {
  generateSigningKey,
  importKeySet,
  importSigningKey,
  signCard,
  verifyCardSignatures,
  type GeneratedAlgorithm,
} from '../src/trust/signing/index.js';
import { startChild } from './lib/children.js';
import {
  closedLoop,
  installShutdown,
  parseCommonFlags,
  printMachine,
  roundOrder,
  runMain,
  writeResult,
  type Headline,
  type LoopStats,
} from './lib/common.js';
import { formatInt, formatMs, formatRatio, median, renderTable } from './lib/report.js';

const PAUSE_BETWEEN_RUNS_MS = 250;
const ALGORITHMS: GeneratedAlgorithm[] = ['ES256', 'EdDSA'];

type Key = 'airlock' | 'sdk' | 'undici';

interface Caller {
  key: Key;
  label: string;
  call: () => Promise<void>;
}

function iterationsFrom(argv: string[]): { iterations: number; rest: string[] } {
  const rest = [...argv];
  const at = rest.indexOf('--iterations');
  if (at === -1) return { iterations: 2000, rest };
  const iterations = Number(rest[at + 1]);
  if (!Number.isInteger(iterations) || iterations <= 0) throw new Error('--iterations must be a positive integer');
  rest.splice(at, 2);
  return { iterations, rest };
}

function describe(stats: LoopStats): string {
  return (
    `${formatInt(stats.opsPerSec).padStart(7)} calls/s  p50 ${formatMs(stats.p50).padStart(6)} ms  ` +
    `p99 ${formatMs(stats.p99).padStart(6)} ms  errors ${stats.errors}` +
    (stats.firstError !== undefined ? ` (${stats.firstError})` : '')
  );
}

async function callers(baseUrl: string, dir: string): Promise<{ callers: Caller[]; close: () => Promise<void> }> {
  const rpcUrl = `${baseUrl}/rpc`;
  const registryPath = join(dir, 'registry.yaml');
  writeFileSync(
    registryPath,
    [
      'agents:',
      '  - name: bench',
      `    card_url: ${baseUrl}/.well-known/agent-card.json`,
      '    description: The raw A2A benchmark peer.',
      '    effect: read_only',
      '',
    ].join('\n'),
  );
  const airlock = createOutboundClient({ registryPath, pinsPath: join(dir, 'pins.json'), env: {} });
  const first = await airlock.send({ agent: 'bench', message: 'hello' });
  if (first.status !== 'success' || first.task_state !== 'completed' || !first.reply.includes('hello')) {
    throw new Error(`Airlock client: unexpected first result ${JSON.stringify(first).slice(0, 400)}`);
  }

  const sdk = await new ClientFactory().createFromUrl(baseUrl);
  const sdkMessage = (): Parameters<typeof sdk.sendMessage>[0] => ({
    tenant: '',
    message: {
      messageId: crypto.randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: 'hello' }, metadata: undefined, filename: '', mediaType: '' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  });
  const sdkFirst = (await sdk.sendMessage(sdkMessage())) as { status?: { state?: unknown } };
  if (sdkFirst.status === undefined)
    throw new Error(`SDK client: unexpected result ${JSON.stringify(sdkFirst).slice(0, 300)}`);

  const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
  const undiciCall = async (): Promise<void> => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: crypto.randomUUID(),
      method: 'SendMessage',
      params: {
        message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] },
        configuration: { returnImmediately: true },
      },
    });
    const response = await request(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body,
      dispatcher,
    });
    const reply = (await response.body.json()) as { result?: { task?: unknown } };
    if (response.statusCode !== 200 || reply.result?.task === undefined) throw new Error('undici: unexpected reply');
  };
  await undiciCall();

  return {
    callers: [
      {
        key: 'airlock',
        label: 'Airlock client (cached pinned card)',
        call: async () => {
          const result = await airlock.send({ agent: 'bench', message: 'hello' });
          if (result.status !== 'success') throw new Error(`${result.error_type}: ${result.error_message}`);
        },
      },
      {
        key: 'sdk',
        label: '@a2a-js/sdk client',
        call: async () => {
          await sdk.sendMessage(sdkMessage());
        },
      },
      { key: 'undici', label: 'bare undici request', call: undiciCall },
    ],
    close: async () => {
      await airlock.close();
      await dispatcher.close();
    },
  };
}

interface VerifyFigures {
  alg: GeneratedAlgorithm;
  airlockUs: number;
  sdkUs: number;
  cardBytes: number;
  airlockPasses: number[];
  sdkPasses: number[];
}

/** µs per verification of one signed card, Airlock's verifier and the SDK's, R passes each. */
async function measureVerification(
  cardJson: Record<string, unknown>,
  alg: GeneratedAlgorithm,
  iterations: number,
  passes: number,
): Promise<VerifyFigures> {
  const { privateJwk, publicJwk } = await generateSigningKey(alg);
  const signed = signCard(cardJson, [importSigningKey(privateJwk)]);
  const bytes = Buffer.from(JSON.stringify(signed), 'utf8');
  const keySet = importKeySet({ keys: [publicJwk] });
  const publicKey = createPublicKey({ key: publicJwk as unknown as JsonWebKey, format: 'jwk' });
  const sdkVerify = verifyAgentCardSignature(async () => publicKey);

  const airlockOnce = async (): Promise<void> => {
    const verdict = await verifyCardSignatures(bytes, keySet, { requireSigned: true });
    if (verdict.status !== 'verified') throw new Error('Airlock: card not verified');
  };
  const sdkOnce = async (): Promise<void> => {
    await sdkVerify(AgentCard.fromJSON(JSON.parse(bytes.toString('utf8'))));
  };
  // Both must accept the card (the signatures are byte-compatible) before anything is timed.
  await airlockOnce();
  await sdkOnce();
  const time = async (once: () => Promise<void>): Promise<number> => {
    for (let i = 0; i < Math.min(200, iterations); i++) await once();
    const started = performance.now();
    for (let i = 0; i < iterations; i++) await once();
    return ((performance.now() - started) * 1000) / iterations;
  };
  const airlockPasses: number[] = [];
  const sdkPasses: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    // Interleaved, alternating which goes first.
    if (pass % 2 === 0) {
      airlockPasses.push(await time(airlockOnce));
      sdkPasses.push(await time(sdkOnce));
    } else {
      sdkPasses.push(await time(sdkOnce));
      airlockPasses.push(await time(airlockOnce));
    }
  }
  return {
    alg,
    airlockUs: median(airlockPasses),
    sdkUs: median(sdkPasses),
    cardBytes: bytes.length,
    airlockPasses,
    sdkPasses,
  };
}

async function main(): Promise<number> {
  const { iterations, rest } = iterationsFrom(process.argv.slice(2));
  const flags = parseCommonFlags(
    rest,
    { duration: 3, rounds: 3, connections: 16, warmup: 1 },
    'usage: node --import tsx bench/outbound.ts [--duration S=3] [--rounds N=3] [--connections C=16] [--warmup S=1] [--iterations N=2000] [--json]',
  );
  const startedAt = new Date();
  console.log(
    'Airlock outbound benchmark: guarded client vs @a2a-js/sdk client vs bare undici; card signature verification',
  );
  printMachine();
  console.log(
    `${flags.connections} calls in flight (closed loop, in this process), ${flags.warmup} s warm-up per client, ` +
      `${flags.rounds} interleaved rounds × ${flags.duration} s; the remote is a raw node:http A2A server in a child process`,
  );
  console.log('');
  workDir = mkdtempSync(join(tmpdir(), 'airlock-bench-outbound-'));
  const peer = await startChild({ name: 'raw-a2a', script: 'bench/peers/raw-a2a.ts' });
  console.log(`raw A2A peer pid ${peer.pid}  ${peer.baseUrl}`);
  const made = await callers(peer.baseUrl, workDir);
  closeCallers = made.close;
  console.log('every client checked: one completed task each\n');

  const measure = async (caller: Caller, duration: number): Promise<LoopStats> => {
    peer.assertAlive();
    const stats = await closedLoop(caller.call, { concurrency: flags.connections, duration });
    await sleep(PAUSE_BETWEEN_RUNS_MS);
    return stats;
  };
  if (flags.warmup > 0) {
    for (const caller of made.callers)
      console.log(`warm-up   ${caller.key.padEnd(8)} ${describe(await measure(caller, flags.warmup))}`);
    console.log('');
  }
  const runs: { round: number; client: Key; stats: LoopStats }[] = [];
  for (let round = 0; round < flags.rounds; round++) {
    for (const caller of roundOrder(made.callers, round)) {
      const stats = await measure(caller, flags.duration);
      runs.push({ round: round + 1, client: caller.key, stats });
      console.log(`round ${round + 1}/${flags.rounds} ${caller.key.padEnd(8)} ${describe(stats)}`);
    }
  }
  console.log('');
  const summaries = made.callers.map((caller) => {
    const mine = runs.filter((run) => run.client === caller.key).map((run) => run.stats);
    return {
      client: caller.key,
      label: caller.label,
      callsPerSec: median(mine.map((stats) => stats.opsPerSec)),
      p50: median(mine.map((stats) => stats.p50)),
      p99: median(mine.map((stats) => stats.p99)),
      roundsCallsPerSec: mine.map((stats) => stats.opsPerSec),
      errors: mine.reduce((total, stats) => total + stats.errors, 0),
    };
  });
  const of = (key: Key): (typeof summaries)[number] => summaries.find((summary) => summary.client === key)!;
  const bare = of('undici');
  console.log(`Median of ${flags.rounds} round(s), ${flags.connections} calls in flight:`);
  console.log(
    renderTable(
      ['client', 'calls/s', 'vs undici', 'p50 ms', 'p99 ms', 'calls/s per round', 'errors'],
      summaries.map((summary) => [
        summary.label,
        formatInt(summary.callsPerSec),
        formatRatio(summary.callsPerSec / bare.callsPerSec),
        formatMs(summary.p50),
        formatMs(summary.p99),
        summary.roundsCallsPerSec.map(formatInt).join(' / '),
        String(summary.errors),
      ]),
    ),
  );
  const callRatios = {
    airlockToUndici: of('airlock').callsPerSec / bare.callsPerSec,
    airlockToSdk: of('airlock').callsPerSec / of('sdk').callsPerSec,
    sdkToUndici: of('sdk').callsPerSec / bare.callsPerSec,
  };
  console.log('');
  console.log(
    `calls/s   Airlock / undici ${formatRatio(callRatios.airlockToUndici)}   Airlock / SDK ${formatRatio(callRatios.airlockToSdk)}   SDK / undici ${formatRatio(callRatios.sdkToUndici)}`,
  );
  console.log('');

  // Card signature verification.
  const cardResponse = await fetch(`${peer.baseUrl}/.well-known/agent-card.json`);
  const cardJson = (await cardResponse.json()) as Record<string, unknown>;
  const verification: VerifyFigures[] = [];
  for (const alg of ALGORITHMS) verification.push(await measureVerification(cardJson, alg, iterations, flags.rounds));
  console.log(`Card signature verification, ${iterations} in a row, median of ${flags.rounds} pass(es):`);
  console.log(
    renderTable(
      ['alg', 'card bytes', 'Airlock µs', 'SDK µs', 'Airlock / SDK', 'Airlock verifications/s'],
      verification.map((figures) => [
        figures.alg,
        String(figures.cardBytes),
        formatMs(figures.airlockUs),
        formatMs(figures.sdkUs),
        formatRatio(figures.airlockUs / figures.sdkUs),
        formatInt(1e6 / figures.airlockUs),
      ]),
    ),
  );
  console.log('(Airlock / SDK in time: above 1× means Airlock takes longer per verification)');
  const failed = summaries.filter((summary) => summary.errors > 0);
  for (const summary of failed)
    console.log(`WARNING: ${summary.label}: ${summary.errors} failed calls; not comparable`);

  const headlines: Headline[] = [
    {
      figure: 'outbound call, cached pinned card',
      unit: 'calls/s',
      higherIsBetter: true,
      airlock: of('airlock').callsPerSec,
      raw: bare.callsPerSec,
      sdk: of('sdk').callsPerSec,
      note: `raw = bare undici; p99 ${formatMs(of('airlock').p99)} ms`,
    },
    ...verification.map((figures) => ({
      figure: `card signature verification ${figures.alg}`,
      unit: 'µs',
      higherIsBetter: false,
      airlock: figures.airlockUs,
      sdk: figures.sdkUs,
    })),
  ];
  if (flags.json) {
    const path = writeResult('outbound', startedAt, {
      benchmark: 'outbound call and card verification',
      settings: { ...flags, iterations },
      summary: summaries,
      ratios: callRatios,
      verification,
      headlines,
      runs,
    });
    console.log(`\nwrote ${path}`);
  }
  return failed.length === 0 ? 0 : 1;
}

let workDir: string | undefined;
let closeCallers: (() => Promise<void>) | undefined;
const shutdown = installShutdown(async () => {
  await closeCallers?.().catch(() => undefined);
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});
runMain(main, shutdown);
