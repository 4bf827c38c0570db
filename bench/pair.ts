/**
 * Paired rounds: the every-guard row of bench/inbound.ts (memory store, audit file, the same
 * config, body and headers) for two or more builds of the gateway, to tell a change of a few µs
 * from the machine's drift. Each round loads every build once, in an order that rotates, one
 * after the other within seconds; what is compared is each round's difference from the first
 * build, not the medians of separate runs. Give the first build twice (`--build a=DIR --build
 * a2=DIR`) for an A/A control: the spread two copies of one build show on this machine.
 *
 * A build is a directory holding a built gateway (`DIR/dist/cli/main.js`): a second checkout or
 * `git worktree add /tmp/base <commit>` with `npm run build` run there (node_modules may be a
 * symlink to this one's). Servers start on core 0 with `serve --gc auto`, as the inbound bench
 * starts them; the load runs here on the last core; CPU is the serving process's own (user +
 * system, every thread) per answered request.
 *
 * Usage: node --import tsx bench/pair.ts --build NAME=DIR --build NAME=DIR [...]
 *        [--rounds N=20] [--duration S=3] [--warmup S=2] [--connections C=50]
 *        [--text hello|ascii-4k|latin-4k|cyrillic-4k|chinese-4k] [--json]
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { installShutdown, printMachine, roundOrder, runMain, writeResult } from './lib/common.js';
import { startChild, stopAllChildren, type ChildServer } from './lib/children.js';
import { cpuMicros, pinGenerator, pinServer } from './lib/cpu.js';
import { airlockConfig, messageSend, requestHeaders } from './lib/inbound-config.js';
import { runLoad, verifyReply, type Target } from './lib/load.js';
import { median, renderTable } from './lib/report.js';
import { messageText, parseTextKind, TEXT_KINDS } from './lib/texts.js';
import { readServePid, serveFiles } from '../src/server/reload/pid-file.js';

const USAGE =
  'usage: node --import tsx bench/pair.ts --build NAME=DIR --build NAME=DIR [...] [--rounds N=20] [--duration S=3] [--warmup S=2] [--connections C=50] [--text KIND] [--json]';
const PAUSE_BETWEEN_RUNS_MS = 250;

interface Build {
  name: string;
  dir: string;
}

interface Started {
  build: Build;
  child: ChildServer;
  target: Target;
  workDir: string;
}

function parseBuild(value: string): Build {
  const at = value.indexOf('=');
  if (at <= 0) throw new Error(`--build must be NAME=DIR, not ${value}`);
  const dir = resolve(value.slice(at + 1));
  if (!existsSync(join(dir, 'dist', 'cli', 'main.js'))) {
    throw new Error(`--build ${value}: ${dir}/dist/cli/main.js not found (run npm run build there)`);
  }
  return { name: value.slice(0, at), dir };
}

function positive(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new Error(`${flag} must be a positive number, not ${value}`);
  return number;
}

async function start(build: Build, token: string, body: string): Promise<Started> {
  const workDir = mkdtempSync(join(tmpdir(), `airlock-pair-${build.name}-`));
  const configPath = join(workDir, 'airlock.yaml');
  writeFileSync(configPath, airlockConfig(true, workDir), { mode: 0o600 });
  const child = await startChild({
    name: build.name,
    script: join(build.dir, 'dist', 'cli', 'main.js'),
    args: ['serve', '--config', configPath, '--log-level', 'silent', '--gc', 'auto'],
    env: { BENCH_TOKEN: token },
    startOnCore: 0,
    servingPid: () => readServePid(serveFiles(configPath)),
  });
  const target = {
    url: `${child.baseUrl}/a2a/echo`,
    headers: { ...requestHeaders(token), 'x-forwarded-for': '127.0.0.1' },
    body,
  };
  return { build, child, target, workDir };
}

/** One load of one server: its CPU µs per answered request, and its failures. */
async function measure(
  server: Started,
  duration: number,
  connections: number,
): Promise<{ cpu: number; failed: number }> {
  server.child.assertAlive();
  const before = cpuMicros(server.child.pid);
  const stats = await runLoad(server.target, { connections, pipelining: 1, duration });
  const after = cpuMicros(server.child.pid);
  const answered = stats.requests - stats.non2xx - stats.errors - stats.timeouts;
  const cpu = before === undefined || after === undefined || answered <= 0 ? Number.NaN : (after - before) / answered;
  return { cpu, failed: stats.non2xx + stats.errors + stats.timeouts };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      build: { type: 'string', multiple: true },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      text: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  const builds = (values.build ?? []).map(parseBuild);
  if (builds.length < 2) throw new Error(`give at least two builds\n${USAGE}`);
  if (new Set(builds.map((build) => build.name)).size !== builds.length) throw new Error('build names must differ');
  const rounds = Math.round(positive(values.rounds, 20, '--rounds'));
  const duration = positive(values.duration, 3, '--duration');
  const warmup = positive(values.warmup, 2, '--warmup');
  const connections = Math.round(positive(values.connections, 50, '--connections'));
  const text = parseTextKind(values.text ?? 'hello');
  if (text === undefined) throw new Error(`--text must be one of ${TEXT_KINDS.join(', ')}`);

  const startedAt = new Date();
  printMachine();
  const plan = pinGenerator();
  console.log(
    plan.pinned
      ? `pinned: servers on core ${plan.server}, load generator on core ${plan.generator}`
      : 'not pinned (one core, or no taskset): the load generator shares the server cores',
  );
  console.log(`${rounds} rounds × ${duration} s per build, ${connections} connections, text ${text}\n`);

  const token = `tok-${randomBytes(16).toString('hex')}`;
  const body = messageSend(messageText(text));
  const servers: Started[] = [];
  try {
    for (const build of builds) {
      const server = await start(build, token, body);
      pinServer(server.child.pid, plan);
      await verifyReply(build.name, server.target);
      servers.push(server);
      console.log(`${build.name.padEnd(12)} pid ${server.child.pid}  ${build.dir}`);
    }
    for (const server of servers) await measure(server, warmup, connections);

    const cpu: number[][] = servers.map(() => []);
    let failed = 0;
    for (let round = 0; round < rounds; round++) {
      const line: string[] = [];
      for (const index of roundOrder(
        servers.map((_, i) => i),
        round,
      )) {
        const result = await measure(servers[index]!, duration, connections);
        cpu[index]!.push(result.cpu);
        failed += result.failed;
        line.push(`${servers[index]!.build.name} ${result.cpu.toFixed(1)}`);
        await sleep(PAUSE_BETWEEN_RUNS_MS);
      }
      console.log(`round ${String(round + 1).padStart(2)}/${rounds}  ${line.join('  ')}`);
    }

    const base = cpu[0]!;
    const rows = servers.map((server, index) => {
      const own = cpu[index]!;
      if (index === 0) return [server.build.name, median(own).toFixed(1), '', ''];
      const differences = own.map((value, round) => value - base[round]!).filter(Number.isFinite);
      const lower = differences.filter((difference) => difference < 0).length;
      return [
        server.build.name,
        median(own).toFixed(1),
        `${median(differences) >= 0 ? '+' : ''}${median(differences).toFixed(1)}`,
        `${lower} of ${differences.length}`,
      ];
    });
    console.log(
      `\n${renderTable(
        ['build', 'CPU µs/req (median)', `paired vs ${servers[0]!.build.name} (median)`, 'rounds lower'],
        rows,
      )}`,
    );
    if (failed > 0) console.log(`\nWARNING: ${failed} requests failed (non-2xx, errors or timeouts)`);
    if (values.json === true) {
      const path = writeResult('pair', startedAt, {
        builds,
        rounds,
        duration,
        connections,
        text,
        cpuPerRequest: Object.fromEntries(servers.map((server, index) => [server.build.name, cpu[index]])),
        failed,
      });
      console.log(`\nwrote ${path}`);
    }
    return failed > 0 ? 1 : 0;
  } finally {
    await stopAllChildren();
    for (const server of servers) rmSync(server.workDir, { recursive: true, force: true });
  }
}

runMain(main, installShutdown());
