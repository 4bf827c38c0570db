/**
 * What the inbound benches send and how they configure Airlock: the `message/send` body, the
 * request headers and the gateway's config, shared by bench/inbound.ts and bench/pair.ts so that
 * a paired run measures exactly the bench's every-guard row.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readServePid, serveFiles } from '../../src/server/reload/pid-file.js';
import { startChild, type ChildServer } from './children.js';
import { BENCH_DATABASE_URL, ECHO_AGENT_AND_CLIENT } from './common.js';

/** The v0.3 `message/send` every server is sent, with the text of `--text` ('hello' by default). */
export function messageSend(text: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: {
      message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text }] },
    },
  });
}

/**
 * The bench config. Every request passes the gate, auth, the rate limit and the per-client task
 * cap (both set high enough never to refuse), body and depth limits, message limits, content rules, suspicious-pattern counting
 * and the in-flight caps in both variants; `guarded` adds what is off by default: the audit file
 * (two rows per task, group-committed), reply scrubbing, X-Forwarded-For parsing for a trusted proxy,
 * the X-API-Key header and the REST routes.
 */
export function airlockConfig(guarded: boolean, workDir: string, store: string[] = []): string {
  return [
    ...store,
    'server:',
    '  host: 127.0.0.1',
    '  port: 0',
    ...(guarded ? ['  trustedProxies: [127.0.0.1]', '  apiKeyHeader: true', '  rest: true'] : []),
    'limits:',
    '  requestsPerMinute: 100000000',
    // Above the 50 connections of one client: a task holds its slot until its audit row is
    // written (group commit, one event-loop turn), so the default 16 would refuse requests.
    '  maxConcurrentTasksPerPrincipal: 64',
    ...(guarded
      ? [
          'content:',
          "  scrubSecrets: ['bench-secret-never-to-leave-0123456789']",
          'audit:',
          `  file: '${join(workDir, 'audit.jsonl')}'`,
        ]
      : []),
    ...ECHO_AGENT_AND_CLIENT,
    '',
  ].join('\n');
}

/** The bearer token and JSON content type every request carries. */
export function requestHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

/**
 * The every-guard row's headers: the token, and an `X-Forwarded-For` that the trusted-proxy
 * parsing reads on every request (the config trusts 127.0.0.1).
 */
export function guardedHeaders(token: string): Record<string, string> {
  return { ...requestHeaders(token), 'x-forwarded-for': '127.0.0.1' };
}

/**
 * Writes `config` to `workDir/airlock.yaml` and starts `airlock serve --gc auto` from
 * `buildDir`'s `dist/` on the servers' core, as a one-core host starts it (with `dataDir`, the
 * SQLite store there); the child's pid is the serving process's, read from its pid file.
 * `nodeFlags` go to node before the script (with `--single-threaded-gc` among them, `serve`
 * serves from the process started rather than relaunching it, so a profiler flag stays on it).
 *
 * @example
 * ```ts
 * const child = await startPinnedAirlock({ name: 'head', buildDir: '.', workDir, config: airlockConfig(true, workDir), token });
 * ```
 */
export function startPinnedAirlock(spec: {
  name: string;
  buildDir: string;
  workDir: string;
  config: string;
  dataDir?: string;
  token: string;
  nodeFlags?: readonly string[];
}): Promise<ChildServer> {
  const configPath = join(spec.workDir, 'airlock.yaml');
  writeFileSync(configPath, spec.config, { mode: 0o600 });
  const data = spec.dataDir === undefined ? [] : ['--data', spec.dataDir];
  return startChild({
    name: spec.name,
    script: join(spec.buildDir, 'dist', 'cli', 'main.js'),
    ...(spec.nodeFlags !== undefined && { nodeFlags: spec.nodeFlags }),
    args: ['serve', '--config', configPath, '--log-level', 'silent', '--gc', 'auto', ...data],
    env: { BENCH_TOKEN: spec.token },
    startOnCore: 0,
    servingPid: () => readServePid(serveFiles(configPath)),
  });
}

/**
 * The floor's environment for its tasks in a durable table, without audit rows (as the durable
 * rows run Airlock): SQLite in the directory `place`, or PostgreSQL in the schema `place`.
 *
 * @example
 * ```ts
 * startChild({ name: 'floor', script: 'bench/peers/floor-http.ts', env: { BENCH_TOKEN: token, ...floorStoreEnv('sqlite', dir) } });
 * ```
 */
export function floorStoreEnv(store: 'sqlite' | 'postgres', place: string): Record<string, string> {
  return store === 'sqlite'
    ? { FLOOR_AUDIT: '0', FLOOR_STORE: 'sqlite', FLOOR_DATA: place }
    : { FLOOR_AUDIT: '0', FLOOR_STORE: 'postgres', DATABASE_URL: BENCH_DATABASE_URL, FLOOR_SCHEMA: place };
}
