/**
 * `bench:pair --peers`: each build's targets read round by round against raw node:http, the floor
 * and the SDK (whichever of the last two the row has), each ratio taken within one round (the
 * loads seconds apart) so that the machine's drift between rounds cancels, then the median over the rounds and how many rounds reach the
 * target (the same targets as bench:inbound's summary).
 *
 * @example
 * ```ts
 * const raw = { cpu: [25, 26], reqPerSec: [38_000, 37_000] };
 * const floor = { cpu: [50, 52], reqPerSec: [18_000, 17_500] };
 * const reading = peerReading({ cpu: [70, 68], reqPerSec: [14_000, 14_500] }, { raw, floor });
 * reading.vsRaw.rounds; // [25 / 70, 26 / 68]: raw's CPU over the build's, round by round
 * ```
 */
import { FLAT_TARGET, GUARDED_CPU_TARGET, GUARDED_REQ_TARGET, SDK_MULTIPLE_TARGET } from './inbound-summary.js';
import { median, renderTable } from './report.js';

/** The guarded floor's name among the peers (bench/peers/floor-guards.ts). */
export const GUARDED_FLOOR = 'floor+guards';

/** One server's figures, a value a round, in round order. */
export interface RoundFigures {
  /** Server CPU µs a request. */
  cpu: readonly number[];
  reqPerSec: readonly number[];
}

/** Ratios a round, their median, and how many rounds reach the target. */
export interface RatioReading {
  rounds: number[];
  median: number;
  atTarget: number;
  target: number;
}

/** A build (or the floor) against the peers. */
export interface PeerReading {
  /** raw's CPU over its own: the row's CPU target (every guard ≥ 0.5×, SQLite ≥ 0.3×). */
  vsRaw: RatioReading;
  /** its req/s over raw's, the loads pinned as the CPU's: the every-guard row's req/s target (≥ 0.45×). */
  reqVsRaw: RatioReading;
  /**
   * the floor's CPU over its own (1.00× = no cost beyond the work by hand); undefined without a
   * floor among the peers (the PostgreSQL row has none).
   */
  vsFloor: RatioReading | undefined;
  /**
   * the guarded floor's CPU over its own (the floor with Airlock's always-on checks: what is left
   * above 1.00× is Airlock's structure); undefined without it among the peers.
   */
  vsGuardedFloor: RatioReading | undefined;
  /** its req/s over the SDK's: the SDK target (≥ 6×); undefined without the SDK among the peers. */
  overSdk: RatioReading | undefined;
  /** Whether its throughput holds over the run, read against raw's: see {@link flatness}. */
  flat: Flatness;
}

/** The flatness target read against raw: the late rounds' req/s over raw's, against the early rounds'. */
export interface Flatness {
  /** Rounds at each end (a fifth of the run, at least one). */
  rounds: number;
  /** The median of the first rounds' it/raw req/s, and of the last rounds'. */
  first: number;
  last: number;
  /** `last / first` (target ≥ 0.9×: throughput flat across rounds past the store's cap). */
  ratio: number;
  target: number;
}

/**
 * The flatness target (last round ≥ 0.9× the first) read so that the machine's drift cancels: each
 * round's req/s over raw's in the same round, the median of the last fifth of the rounds over the
 * median of the first fifth. One first round and one last round, as `bench:inbound` compares them,
 * swing with whichever round caught a slow spell.
 *
 * @example
 * ```ts
 * flatness([0.40, 0.41, 0.39, 0.40, 0.38]).ratio; // 0.38 / 0.40 = 0.95
 * ```
 */
export function flatness(reqVsRaw: readonly number[]): Flatness {
  const rounds = Math.max(1, Math.floor(reqVsRaw.length / 5));
  const first = median(reqVsRaw.slice(0, rounds));
  const last = median(reqVsRaw.slice(-rounds));
  return { rounds, first, last, ratio: last / first, target: FLAT_TARGET };
}

/**
 * `over[r] / under[r]` for each round where both are finite and `under[r]` is positive; a round
 * with a missing or failed reading (NaN) is left out rather than counted as a miss.
 *
 * @example
 * ```ts
 * roundRatios([20, 30], [40, 50]); // [0.5, 0.6]
 * ```
 */
export function roundRatios(over: readonly number[], under: readonly number[]): number[] {
  const ratios: number[] = [];
  const rounds = Math.min(over.length, under.length);
  for (let round = 0; round < rounds; round++) {
    const ratio = over[round]! / under[round]!;
    if (Number.isFinite(ratio) && under[round]! > 0) ratios.push(ratio);
  }
  return ratios;
}

function reading(rounds: number[], target: number): RatioReading {
  return { rounds, median: median(rounds), atTarget: rounds.filter((ratio) => ratio >= target).length, target };
}

/**
 * A server's figures read against the peers', round by round; `cpuTarget` is the row's raw/it
 * CPU target (the every-guard row's by default).
 *
 * @example
 * ```ts
 * const { vsRaw, overSdk } = peerReading(build, peers);
 * console.log(`${vsRaw.median.toFixed(2)}× raw's CPU, ${vsRaw.atTarget} of ${vsRaw.rounds.length} rounds at 0.5×`);
 * ```
 */
export function peerReading(
  own: RoundFigures,
  peers: {
    raw: RoundFigures;
    floor?: RoundFigures | undefined;
    guardedFloor?: RoundFigures | undefined;
    sdk?: RoundFigures | undefined;
  },
  cpuTarget: number = GUARDED_CPU_TARGET,
): PeerReading {
  const reqVsRaw = roundRatios(own.reqPerSec, peers.raw.reqPerSec);
  return {
    vsRaw: reading(roundRatios(peers.raw.cpu, own.cpu), cpuTarget),
    reqVsRaw: reading(reqVsRaw, GUARDED_REQ_TARGET),
    flat: flatness(reqVsRaw),
    vsFloor: peers.floor === undefined ? undefined : reading(roundRatios(peers.floor.cpu, own.cpu), 1),
    vsGuardedFloor:
      peers.guardedFloor === undefined ? undefined : reading(roundRatios(peers.guardedFloor.cpu, own.cpu), 1),
    overSdk:
      peers.sdk === undefined
        ? undefined
        : reading(roundRatios(own.reqPerSec, peers.sdk.reqPerSec), SDK_MULTIPLE_TARGET),
  };
}

/** One server's name (`raw`, `floor`, `floor+guards` and `sdk` are the peers) and its figures. */
export interface NamedFigures {
  name: string;
  figures: RoundFigures;
}

/**
 * The peers table: each build and the floors against raw (CPU; with `readsReqTarget`, the
 * every-guard row's, req/s too), the floor, the guarded floor and the SDK, whichever of the last
 * three ran, each the median of the rounds' ratios with how many rounds reach the target.
 *
 * With `fresh` (every load a new process, `bench:pair --fresh`) the flatness cell says so instead
 * of a figure: the target is about one process serving on past the store's cap, and each round of
 * such a run is a process of its own, so its late rounds over its early ones are only the host's
 * drift.
 *
 * @example
 * ```ts
 * console.log(renderPeerTable([{ name: 'head', figures: head }, { name: 'raw', figures: raw }], 0.3, false));
 * ```
 */
export function renderPeerTable(
  servers: readonly NamedFigures[],
  cpuTarget: number,
  readsReqTarget: boolean,
  options: { fresh?: boolean } = {},
): string {
  const of = (name: string): RoundFigures | undefined => servers.find((server) => server.name === name)?.figures;
  const raw = of('raw');
  if (raw === undefined) throw new Error('renderPeerTable: raw is not among the servers');
  const peers = { raw, floor: of('floor'), guardedFloor: of(GUARDED_FLOOR), sdk: of('sdk') };
  const range = (values: readonly number[]): string =>
    `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}×`;
  const shown = (ratio: RatioReading): string => `${ratio.median.toFixed(2)}× (${range(ratio.rounds)})`;
  const reached = (ratio: RatioReading): string => `${ratio.atTarget} of ${ratio.rounds.length}`;
  const rows = servers
    .filter((server) => server.name !== 'raw' && server.name !== 'sdk')
    .map((server) => {
      const reading = peerReading(server.figures, peers, cpuTarget);
      return [
        server.name,
        shown(reading.vsRaw),
        reached(reading.vsRaw),
        ...(readsReqTarget
          ? [
              shown(reading.reqVsRaw),
              reached(reading.reqVsRaw),
              options.fresh === true ? '— (fresh processes)' : `${reading.flat.ratio.toFixed(2)}×`,
            ]
          : []),
        ...(reading.vsFloor === undefined
          ? []
          : [server.name === 'floor' ? '' : `${reading.vsFloor.median.toFixed(2)}×`]),
        ...(reading.vsGuardedFloor === undefined
          ? []
          : [
              server.name === 'floor' || server.name === GUARDED_FLOOR
                ? ''
                : `${reading.vsGuardedFloor.median.toFixed(2)}×`,
            ]),
        ...(reading.overSdk === undefined ? [] : [shown(reading.overSdk), reached(reading.overSdk)]),
      ];
    });
  return renderTable(
    [
      'against the peers',
      'raw/it CPU (median of rounds)',
      `rounds ≥ ${cpuTarget}×`,
      ...(readsReqTarget
        ? ['it/raw req/s', `rounds ≥ ${GUARDED_REQ_TARGET}×`, `last/first fifth (≥ ${FLAT_TARGET}×)`]
        : []),
      ...(peers.floor === undefined ? [] : ['floor/it CPU']),
      ...(peers.guardedFloor === undefined ? [] : ['guarded floor/it CPU']),
      ...(peers.sdk === undefined ? [] : ['req/s over the SDK', `rounds ≥ ${SDK_MULTIPLE_TARGET}×`]),
    ],
    rows,
  );
}
