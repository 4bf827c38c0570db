/**
 * The SQLite store on its own, in process, no HTTP: what a task costs Airlock's `SqliteTaskStore`
 * against the floor's table (bench/peers/floor-sqlite.ts: the same guarantees by hand), both
 * WAL and `synchronous=FULL`, one principal at its share of 1,000 tasks, in batches of 25 puts
 * per event-loop turn (about what the inbound bench's 50 connections make). CPU µs per task
 * (user + system of this process, `process.cpuUsage`), medians over interleaved rounds. Without
 * the HTTP path's noise the figures hold to about a microsecond, where the inbound rows move by
 * ten: this is where a change to the store is judged.
 *
 * Then, on the file Airlock's store wrote, what its share of 1,000 costs each time the principal
 * reaches it (once per tenth of the share): the count of its tasks, and the eviction of its
 * oldest finished tenth (the select alone, in the window of the store's oldest finished tasks and
 * from the principal's own entries, then select and delete in a rolled-back transaction).
 *
 * `--principals N` spreads the puts over N principals in turn (each its own client), so that the
 * store fills to its cap of 10,000 tasks, as a gateway with many clients does; Airlock's store is
 * then swept once per 1,000 tasks (its timer would do it once a minute), the floor's table keeps
 * each principal's share only.
 *
 * Usage: node --import tsx bench/store.ts [--rounds N=5] [--tasks N=30000] [--principals N=1] [--json]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type { Task } from '../src/protocol/model.js';
import { CREATED } from '../src/tasks/store.js';
import { newTaskId } from '../src/tasks/ids.js';
import { SqliteTaskStore } from '../src/tasks/stores/sqlite.js';
import { ownerRangeOf } from '../src/tasks/stores/fair-shares.js';
import {
  OWN_OLDEST_FINISHED_SQL,
  OWN_OLDEST_IN_WINDOW_SQL,
  prepareShareStatements,
  WINDOW_PER_EVICTED,
} from '../src/tasks/stores/sqlite/shares.js';
import { pinGenerator } from './lib/cpu.js';
import { printMachine, writeResult, type Headline } from './lib/common.js';
import { median, renderTable } from './lib/report.js';
import { openFloorSqlite } from './peers/floor-sqlite.js';

const USAGE = 'usage: node --import tsx bench/store.ts [--rounds N=5] [--tasks N=30000] [--principals N=1] [--json]';
const BATCH = 25;
/** Puts before the timed part: past the share of 1,000, so that every round evicts. */
const WARM_TASKS = 3_000;
const PRINCIPAL = 'client:bench::bench';
const OWNER = `${PRINCIPAL}@echo`;
/** Tasks between two sweeps of Airlock's store when several principals fill it past its cap. */
const SWEEP_EVERY = 1_000;

/** The owner of the `n`th put: the bench principal, or one of `principals` in turn. */
function ownerOf(n: number, principals: number): string {
  const k = n % principals;
  return k === 0 ? OWNER : `client:bench${k}::bench${k}@echo`;
}

function parse(argv: string[]): { rounds: number; tasks: number; principals: number; json: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: 'string', default: '5' },
      tasks: { type: 'string', default: '30000' },
      principals: { type: 'string', default: '1' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const rounds = Number(values.rounds);
  const tasks = Number(values.tasks);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  if (!Number.isInteger(tasks) || tasks < 3_000)
    throw new Error(`--tasks must be an integer ≥ 3000, got ${values.tasks}`);
  const principals = Number(values.principals);
  if (!Number.isInteger(principals) || principals < 1)
    throw new Error(`--principals must be a positive integer, got ${values.principals}`);
  return { rounds, tasks, principals, json: values.json };
}

/** The echo row's task: completed at its only write. */
function echoTask(): Task {
  const id = newTaskId();
  const contextId = randomUUID();
  const timestamp = new Date().toISOString();
  return {
    id,
    contextId,
    status: { state: 'completed', timestamp },
    artifacts: [{ artifactId: randomUUID(), name: 'reply', parts: [{ kind: 'text', text: 'hello' }] }],
    history: [{ messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hello' }], contextId, taskId: id }],
  };
}

const cpuMicros = (): number => {
  const used = process.cpuUsage();
  return used.user + used.system;
};

/** Untimed puts before a round: past every principal's share and, with several, the store's cap. */
function warmTasks(principals: number): number {
  return principals === 1 ? WARM_TASKS : WARM_TASKS + Math.min(principals * 1_000, 10_000);
}

/** CPU µs per task of `timed` tasks put by `turn` (`BATCH` a call), after `warm` untimed. */
async function cpuPerTask(turn: () => Promise<void>, timed: number, warm: number): Promise<number> {
  for (let done = 0; done < warm; done += BATCH) await turn();
  const before = cpuMicros();
  for (let done = 0; done < timed; done += BATCH) await turn();
  return (cpuMicros() - before) / timed;
}

/** Through Airlock's store: `BATCH` puts in one turn, awaited together (the group commit). */
async function airlockRound(dir: string, timed: number, principals: number): Promise<number> {
  const store = await SqliteTaskStore.open({ path: join(dir, 'airlock.db') });
  let put = 0;
  try {
    return await cpuPerTask(
      async () => {
        await Promise.all(
          Array.from({ length: BATCH }, () => store.put(ownerOf(put++, principals), echoTask(), CREATED)),
        );
        if (principals > 1 && put % SWEEP_EVERY === 0) store.sweep();
      },
      timed,
      warmTasks(principals),
    );
  } finally {
    await store.close();
  }
}

/** The same through the floor's table: one transaction a turn, then the next turn. */
async function floorRound(dir: string, timed: number, principals: number): Promise<number> {
  const store = openFloorSqlite(join(dir, 'floor'));
  let put = 0;
  try {
    return await cpuPerTask(
      async () => {
        store.commit(
          Array.from({ length: BATCH }, () => {
            const task = echoTask();
            return { id: task.id, owner: ownerOf(put++, principals), statusMs: Date.now(), body: JSON.stringify(task) };
          }),
        );
        await new Promise((resolve) => setImmediate(resolve));
      },
      timed,
      warmTasks(principals),
    );
  } finally {
    store.close();
  }
}

/** µs per call of `call`, after a few untimed ones. */
function timeCall(call: () => void, times: number): number {
  for (let i = 0; i < 5; i++) call();
  const started = process.hrtime.bigint();
  for (let i = 0; i < times; i++) call();
  return Number(process.hrtime.bigint() - started) / 1_000 / times;
}

interface ShareCosts {
  count: number;
  /** The eviction's select in the window of the store's oldest finished tasks (what it runs here). */
  window: number;
  /** The same from the principal's own entries (what it runs when the window comes up short). */
  select: number;
  evict: number;
}

/** The share's statements on the file Airlock's store left (the principal at its 1,000 tasks). */
function shareCosts(file: string): ShareCosts {
  const db = new Database(file);
  try {
    const shares = prepareShareStatements(db);
    const range = ownerRangeOf(PRINCIPAL);
    const params = { low: range.low, high: range.high, tail: range.tail, expiredBefore: 0 };
    const select = db.prepare(OWN_OLDEST_FINISHED_SQL);
    const inWindow = db.prepare(OWN_OLDEST_IN_WINDOW_SQL);
    const evictRolledBack = db.transaction(() => {
      shares.evictOwnFinished({ ...params, count: 100 });
      throw new RangeError('rolled back');
    });
    return {
      count: timeCall(() => shares.counts.get(params), 100),
      window: timeCall(() => inWindow.all({ ...params, count: 100, window: 100 * WINDOW_PER_EVICTED }), 100),
      select: timeCall(() => select.all({ ...params, count: 100 }), 100),
      evict: timeCall(() => {
        try {
          evictRolledBack();
        } catch (error) {
          if (!(error instanceof RangeError)) throw error;
        }
      }, 30),
    };
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  const settings = parse(process.argv.slice(2));
  const startedAt = new Date();
  const plan = pinGenerator();
  printMachine();
  console.log(
    `${settings.rounds} interleaved rounds × ${settings.tasks} tasks (after ${warmTasks(settings.principals)}), ${BATCH} puts a turn, ` +
      `${settings.principals === 1 ? 'one principal at its share of 1,000' : `${settings.principals} principals in turn, the store at its cap of 10,000`}; ${plan.pinned ? `pinned to core ${plan.generator}` : 'not pinned'}\n`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'airlock-bench-store-'));
  const airlock: number[] = [];
  const floor: number[] = [];
  let costs: ShareCosts | undefined;
  try {
    // One untimed round of each first: the first store to run would otherwise pay the JIT's warm-up.
    const warmDir = mkdtempSync(join(dir, 'warm-'));
    await airlockRound(warmDir, WARM_TASKS, settings.principals);
    await floorRound(warmDir, WARM_TASKS, settings.principals);
    for (let round = 0; round < settings.rounds; round++) {
      const roundDir = mkdtempSync(join(dir, 'round-'));
      const runs = [
        async () => airlock.push(await airlockRound(roundDir, settings.tasks, settings.principals)),
        async () => floor.push(await floorRound(roundDir, settings.tasks, settings.principals)),
      ];
      for (const run of round % 2 === 0 ? runs : runs.reverse()) await run();
      console.log(
        `round ${round + 1}/${settings.rounds}: Airlock ${airlock.at(-1)!.toFixed(1)} µs/task, floor ${floor.at(-1)!.toFixed(1)}`,
      );
      if (round === settings.rounds - 1) costs = shareCosts(join(roundDir, 'airlock.db'));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const a = median(airlock);
  const f = median(floor);
  console.log(
    `\n${renderTable(
      ['store', 'CPU µs/task (median)', 'rounds'],
      [
        ['Airlock SqliteTaskStore', a.toFixed(1), airlock.map((v) => v.toFixed(1)).join(' / ')],
        ['floor table (by hand)', f.toFixed(1), floor.map((v) => v.toFixed(1)).join(' / ')],
      ],
    )}`,
  );
  console.log(`Airlock over its floor: ${(a - f).toFixed(1)} µs a task (floor/Airlock ${(f / a).toFixed(2)}×)`);
  if (costs !== undefined) {
    console.log(
      `at the share, once per 100 tasks: the count ${costs.count.toFixed(0)} µs, the eviction's select ` +
        `${costs.window.toFixed(0)} µs in the window (${costs.select.toFixed(0)} µs from the principal's own entries), ` +
        `select and delete of 100 ${costs.evict.toFixed(0)} µs ` +
        `(${((costs.count + costs.evict) / 100).toFixed(1)} µs a task)`,
    );
  }
  const headlines: Headline[] = [
    {
      figure:
        settings.principals === 1
          ? 'SQLite store, CPU per task (in process)'
          : `SQLite store, CPU per task, ${settings.principals} principals (in process)`,
      unit: 'µs',
      higherIsBetter: false,
      airlock: a,
      note: `floor table ${f.toFixed(1)} µs`,
    },
  ];
  const path = writeResult('store', startedAt, { settings, airlock, floor, costs, headlines });
  if (settings.json) console.log(JSON.stringify({ airlock, floor, costs, headlines }));
  console.log(`\nresults: ${path}`);
}

await main();
