/**
 * How many cases each fuzz property runs: `AIRLOCK_FUZZ_RUNS` when it is a positive integer,
 * else 1 000 (what `npm test` and CI run). `npm run fuzz -- --long` sets 100 000.
 *
 * fast-check prints the seed and the shrunk counterexample of a failing property; re-run one
 * with `fc.assert(..., { seed, path })` to reproduce it.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(arb, check), { numRuns: fuzzRuns() });
 * ```
 */
export function fuzzRuns(): number {
  const raw = process.env.AIRLOCK_FUZZ_RUNS;
  if (raw === undefined || raw.trim() === '') return 1000;
  const runs = Number(raw);
  return Number.isSafeInteger(runs) && runs > 0 ? runs : 1000;
}

/**
 * A test timeout that grows with the number of runs: `msPer1k` per thousand cases, at least
 * `floorMs`.
 *
 * @example
 * ```ts
 * it('…', { timeout: fuzzTimeout(5_000) }, () => { … });
 * ```
 */
export function fuzzTimeout(msPer1k: number, floorMs = 60_000): number {
  return Math.max(floorMs, Math.ceil((fuzzRuns() / 1000) * msPer1k));
}
