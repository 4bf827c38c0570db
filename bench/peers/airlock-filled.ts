/**
 * Airlock's gateway over a task store filled before it listens: for the ListTasks benchmark,
 * which needs 100k tasks of one owner without sending 100k messages first. It does what
 * `airlock serve` does (load the config, open the store it names, prepare the backends, create
 * the gateway, listen), with one step added after the store is opened: BENCH_FILL tasks are put
 * through the store API (`TaskStore.put`, in concurrent batches, so the durable stores group
 * them into few transactions).
 *
 * Every task belongs to BENCH_OWNER (the owner key the gateway derives for the bench client at
 * its agent, `client:bench::bench@echo`), is completed, holds the user's message in its history
 * and has status timestamp BENCH_BASE_MS + i ms and id `bench-task-<i, 6 digits>`, so that the
 * bench can compute the page token of any position without asking the server.
 *
 * Prints `listening on http://127.0.0.1:PORT (filled N tasks in S s)` as its first line.
 * Args: --config FILE. Env: BENCH_FILL, BENCH_OWNER, BENCH_BASE_MS, BENCH_TOKEN (for the config).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { chooseTaskStore } from '../../src/cli/serve.js';
import { loadConfigFile } from '../../src/config/load.js';
import type { Task } from '../../src/protocol/model.js';
import { prepareBackends } from '../../src/server/backends.js';
import { createGateway } from '../../src/server/http.js';
import { createLogger } from '../../src/server/log.js';
import { storeShareOptions } from '../../src/server/store-shares.js';
import { openTaskStore } from '../../src/tasks/stores/index.js';

const BATCH = 2_000;

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.length === 0) throw new Error(`${name} is not set`);
  return value;
}

/** Task i of the fill: see the module comment. */
export function filledTask(index: number, baseMs: number): Task {
  const id = `bench-task-${String(index).padStart(6, '0')}`;
  const contextId = `bench-ctx-${String(index).padStart(6, '0')}`;
  return {
    id,
    contextId,
    status: { state: 'completed', timestamp: new Date(baseMs + index).toISOString() },
    artifacts: [{ artifactId: `${id}-a`, name: 'reply', parts: [{ kind: 'text', text: 'hello' }] }],
    history: [
      { messageId: `m-${index}`, role: 'user', parts: [{ kind: 'text', text: 'hello' }], contextId, taskId: id },
    ],
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { config: { type: 'string' } } });
  if (values.config === undefined) throw new Error('--config FILE is required');
  const count = Number(required('BENCH_FILL'));
  const owner = required('BENCH_OWNER');
  const baseMs = Number(required('BENCH_BASE_MS'));
  const config = loadConfigFile(values.config);
  const logger = createLogger('silent');
  const store = await openTaskStore(
    chooseTaskStore(config),
    storeShareOptions(config, () => undefined),
  );
  const started = performance.now();
  for (let first = 0; first < count; first += BATCH) {
    const puts: Promise<void>[] = [];
    for (let index = first; index < Math.min(count, first + BATCH); index++) {
      puts.push(store.put(owner, filledTask(index, baseMs)));
    }
    await Promise.all(puts);
  }
  const fillSeconds = (performance.now() - started) / 1000;
  if (config.store.type === 'postgres') {
    // What autovacuum does within a minute of a bulk load: without statistics the planner takes
    // the 100k rows for a handful and reads them all for every page.
    const client = new pg.Client({ connectionString: config.store.url });
    await client.connect();
    try {
      await client.query(`ANALYZE ${config.store.schema ?? 'public'}.tasks`);
    } finally {
      await client.end();
    }
  }
  const backends = await prepareBackends(config, { logger });
  const gateway = createGateway(config, { logger, backends: backends.bySlug, store });
  const url = await gateway.listen();
  process.stdout.write(`listening on ${url} (filled ${count} tasks in ${fillSeconds.toFixed(1)} s)\n`);

  const stop = (): void => {
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    gateway
      .close()
      .then(() => backends.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
