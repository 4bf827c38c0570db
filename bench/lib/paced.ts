/**
 * Open-loop load at a fixed offered rate: request i is due at start + i / rate, whatever the
 * server does, over a pool of keep-alive connections (undici). Latency is taken two ways:
 * from the request's scheduled time (what a client on that schedule sees: queueing behind a slow
 * answer counts, so no coordinated omission) and from the moment it was handed to the socket
 * (what autocannon reports).
 *
 * Why not autocannon's `overallRate` alone: autocannon gives each connection a quota per second,
 * resets it on a one-second interval and sends the quota back to back as fast as answers come,
 * so a "1,000 req/s" run is a burst at saturation at the start of every second followed by
 * silence, and its latencies are timed from the send. bench/inbound.ts `--rate` prints both.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { percentile, type Target } from './load.js';

/** What one paced run measured; latencies in ms. */
export interface PacedStats {
  offered: number;
  completed: number;
  failures: number;
  /** Completed per second over the run. */
  achieved: number;
  p50: number;
  p99: number;
  /** The same, timed from the send rather than from the schedule. */
  p50FromSend: number;
  p99FromSend: number;
}

/** Offers `rate` requests per second for `durationS` seconds over `connections` connections. */
export async function runPaced(
  target: Target,
  rate: number,
  durationS: number,
  connections: number,
): Promise<PacedStats> {
  const url = new URL(target.url);
  const pool = new Pool(url.origin, { connections, pipelining: 1 });
  const total = Math.round(rate * durationS);
  const fromSchedule: number[] = [];
  const fromSend: number[] = [];
  let failures = 0;
  const inFlight: Promise<void>[] = [];
  const start = performance.now() + 5;
  const send = async (due: number): Promise<void> => {
    const sentAt = performance.now();
    try {
      const answer = await pool.request({
        path: url.pathname,
        method: 'POST',
        headers: target.headers,
        body: target.body,
      });
      await answer.body.dump();
      const end = performance.now();
      if (answer.statusCode !== 200) failures++;
      fromSchedule.push(end - due);
      fromSend.push(end - sentAt);
    } catch {
      failures++;
    }
  };
  let next = 0;
  while (next < total) {
    const now = performance.now();
    while (next < total && start + (next * 1000) / rate <= now) {
      inFlight.push(send(start + (next * 1000) / rate));
      next++;
    }
    // setImmediate, not a 1 ms timer: timers fire late by up to a millisecond or more.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();
  fromSchedule.sort((a, b) => a - b);
  fromSend.sort((a, b) => a - b);
  return {
    offered: total,
    completed: fromSchedule.length,
    failures,
    achieved: fromSchedule.length / elapsed,
    p50: percentile(fromSchedule, 50),
    p99: percentile(fromSchedule, 99),
    p50FromSend: percentile(fromSend, 50),
    p99FromSend: percentile(fromSend, 99),
  };
}
