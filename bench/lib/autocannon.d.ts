/**
 * The part of autocannon 8's programmatic API the benchmarks use (the package ships no
 * types and @types/autocannon is not a dependency).
 */
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      pipelining?: number;
      /** Seconds. */
      duration?: number;
      /** Stop after this many requests (instead of after `duration`). */
      amount?: number;
      /** Requests per second over all connections (a per-connection quota per second). */
      overallRate?: number;
      /** Per-request timeout, seconds. */
      timeout?: number;
      method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD';
      headers?: Record<string, string>;
      body?: string | Buffer;
    }

    /** Percentiles from an HDR histogram; latency values are milliseconds. */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }

    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }

    /** Returned when a callback is given; `stop()` ends the run early (the callback still fires). */
    interface Instance {
      stop(): void;
      /** Every response; `responseTime` is in milliseconds (fractional). */
      on(
        event: 'response',
        listener: (client: unknown, statusCode: number, responseBytes: number, responseTime: number) => void,
      ): this;
    }
  }

  function autocannon(
    options: autocannon.Options,
    callback: (error: Error | null, result: autocannon.Result) => void,
  ): autocannon.Instance;

  export default autocannon;
}
