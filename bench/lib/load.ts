/**
 * Load generation with autocannon (in this process) and the one-off reply check that runs
 * before a server is loaded.
 *
 * Latency percentiles are computed here from every response's own timing (fractional
 * milliseconds) rather than from autocannon's histogram, which has 1 ms resolution: too
 * coarse when the fastest server answers in about a millisecond.
 */
import autocannon from 'autocannon';

/** One HTTP request, repeated: where to send it and what to send. */
export interface Target {
  url: string;
  headers: Readonly<Record<string, string>>;
  body: string;
}

export interface LoadOptions {
  connections: number;
  pipelining: number;
  /** Seconds. */
  duration: number;
  /** autocannon `overallRate`: a per-connection quota each second, sent back to back (bursts). */
  overallRate?: number;
}

export interface RunStats {
  /** Mean of autocannon's per-second request counts. */
  reqPerSec: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/**
 * Sends exactly `amount` requests over `connections` connections and resolves with the count of
 * answers that were not 2xx, errors and timeouts (the memory bench's fill: no timing).
 */
export function sendAmount(target: Target, amount: number, connections: number): Promise<{ failures: number }> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: target.url,
        method: 'POST',
        headers: { ...target.headers },
        body: target.body,
        connections,
        amount,
        timeout: REQUEST_TIMEOUT_S,
      },
      (error, result) => {
        if (error !== null) return reject(error);
        resolve({ failures: result.non2xx + result.errors + result.timeouts });
      },
    );
  });
}

/** Seconds to wait past the planned duration before stopping a run that did not end. */
const OVERRUN_GRACE_S = 30;
const REQUEST_TIMEOUT_S = 10;
const VERIFY_TIMEOUT_MS = 10_000;

/** Runs autocannon against `target` and summarises the run. */
export function runLoad(target: Target, options: LoadOptions): Promise<RunStats> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        method: 'POST',
        headers: { ...target.headers },
        body: target.body,
        connections: options.connections,
        pipelining: options.pipelining,
        duration: options.duration,
        timeout: REQUEST_TIMEOUT_S,
        ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
      },
      (error, result) => {
        clearTimeout(watchdog);
        if (error !== null) return reject(error);
        resolve(summarise(result, latencies));
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      latencies.push(responseTime);
    });
    const watchdog = setTimeout(() => instance.stop(), (options.duration + OVERRUN_GRACE_S) * 1000);
  });
}

function summarise(result: autocannon.Result, latencies: number[]): RunStats {
  latencies.sort((a, b) => a - b);
  return {
    reqPerSec: result.requests.average,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/**
 * Sends the request once and checks the answer: HTTP 200 and a JSON-RPC `result` holding a
 * completed task. Throws with what came back otherwise.
 */
export async function verifyReply(name: string, target: Target): Promise<void> {
  const response = await fetch(target.url, {
    method: 'POST',
    headers: target.headers,
    body: target.body,
    signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
  });
  const text = await response.text();
  const problem = replyProblem(response.status, text);
  if (problem !== undefined) throw new Error(`${name}: ${problem}; got HTTP ${response.status}: ${text.slice(0, 500)}`);
}

function replyProblem(status: number, text: string): string | undefined {
  if (status !== 200) return 'expected HTTP 200';
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    return 'reply is not JSON';
  }
  if (!isRecord(reply) || reply.jsonrpc !== '2.0' || !isRecord(reply.result)) return 'no JSON-RPC result';
  const task = reply.result;
  if (task.kind !== 'task' || !isRecord(task.status) || task.status.state !== 'completed') {
    return 'result is not a completed task';
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
