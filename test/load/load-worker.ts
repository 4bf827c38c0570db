/**
 * One autocannon run in a process of its own, so that a flood's load generator never shares an
 * event loop with the client whose latency is being measured (test/load/flood.test.ts).
 *
 * Usage: node --import tsx test/load/load-worker.ts <url> <connections> <seconds>
 * The bearer token comes from LOAD_TOKEN. Prints `started` when the first response arrives (the
 * load is on), then one JSON line: the run's summary with p50/p99 instead of every latency.
 */
import { load, percentile } from './soak-lib.js';

const [url, connections, seconds] = process.argv.slice(2);
const token = process.env.LOAD_TOKEN;
if (url === undefined || token === undefined || !(Number(connections) > 0) || !(Number(seconds) > 0)) {
  console.error('usage: LOAD_TOKEN=… node --import tsx test/load/load-worker.ts <url> <connections> <seconds>');
  process.exit(2);
}
let started = false;
const { latencies, ...run } = await load({
  url,
  token,
  connections: Number(connections),
  duration: Number(seconds),
  onResponse: () => {
    if (started) return;
    started = true;
    console.log('started');
  },
});
console.log(JSON.stringify({ ...run, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }));
