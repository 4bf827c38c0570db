/**
 * The floor: plain `node:http` doing, by hand and in one function, only the work a guarded
 * `message/send` cannot skip, with none of Airlock's structure (no admission chain, no task
 * service, no store indexes, no dialect codecs, no limits or content rules). It tells how much
 * of Airlock's cost per request is the work itself and how much is the way it is done.
 *
 * Per request:
 * 1. the body read to the end and parsed (`JSON.parse`), the JSON-RPC envelope and the message's
 *    text part checked by hand;
 * 2. the bearer token hashed (SHA-256) and compared in constant time with the client's digest;
 * 3. a task made (three UUIDs, the task's time-ordered by Airlock's own `newTaskId`, an ISO
 *    timestamp made once a millisecond, the history and one artifact) and kept in a `Map`
 *    capped at 1,000, the bench
 *    client's share in Airlock (`limits.maxTasksPerPrincipal`), the oldest dropped (found in a
 *    ring of ids);
 * 4. with `FLOOR_AUDIT=1` (the default): two audit rows (submitted, completed), each
 *    `JSON.stringify`d and SHA-256 chained as Airlock's rows are, written at the end of the
 *    event-loop turn in one `writeSync` to a file;
 * 5. the reply encoded with `JSON.stringify`, held to the end of the turn (after the audit write)
 *    and sent with one `end()`, the turn's replies in a burst as Airlock sends them.
 *
 * Written as tightly as the project knows how (it is the reference Airlock is judged against):
 * one-shot `crypto.hash` rather than a Hash object per digest, the ISO time made once a
 * millisecond, the rows' objects built as literals, the response head as a flat list. The four
 * took the floor from 0.45× to 0.49× of raw's CPU (paired, 12 rounds, 2026-12-06); a looser
 * floor flatters Airlock.
 *
 * With `FLOOR_STORE=sqlite` the tasks go to a SQLite table instead of the `Map`: one transaction
 * per turn (a turn longer when the turn queued more than one task, as Airlock's group commit
 * waits), the replies after its commit (bench/peers/floor-sqlite.ts). With `FLOOR_STORE=postgres`
 * to a PostgreSQL table: one batch in flight at a time, the turns' tasks meanwhile in the next,
 * the replies after its commit (bench/peers/floor-postgres.ts).
 *
 * With `FLOOR_GUARDS=1` it is the guarded floor: the same work plus Airlock's always-on checks,
 * each a call of the project's own guard (bench/peers/floor-guards.ts), and the message decoded
 * by the v0.3 codec rather than checked by hand; each task holds an in-flight slot until its
 * rows are written, as in Airlock.
 *
 * Run by bench/inbound.ts; prints `listening on http://127.0.0.1:PORT` first.
 * Env: PORT (default 0), BENCH_TOKEN (required), FLOOR_AUDIT (`0` for no audit rows),
 * FLOOR_AUDIT_FILE (default: a file in the system's temporary directory, removed on exit),
 * FLOOR_STORE (`sqlite` or `postgres`), FLOOR_DATA (SQLite: its directory; default a new temporary
 * one), DATABASE_URL and FLOOR_SCHEMA (PostgreSQL: default the local `test` database, schema
 * `airlock_floor`), FLOOR_GUARDS (`1` for the guarded floor).
 */
import { createHash, hash, randomUUID, timingSafeEqual } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newTaskId } from '../../src/tasks/ids.js';
import type { Release } from '../../src/server/limits/index.js';
import { createFloorGuards, type FloorGuards } from './floor-guards.js';
import { openFloorPostgres, type FloorPostgres } from './floor-postgres.js';
import { openFloorSqlite, type FloorStore, type TaskRow } from './floor-sqlite.js';

const HOST = '127.0.0.1';
/** The bench client's share in Airlock (`limits.maxTasksPerPrincipal`, default 1,000). */
const MAX_TASKS = 1_000;
const token = process.env.BENCH_TOKEN;
if (token === undefined || token.length === 0) throw new Error('floor-http: BENCH_TOKEN is required');
const digest = createHash('sha256').update(token).digest();
const audited = process.env.FLOOR_AUDIT !== '0';
const auditDir =
  audited && process.env.FLOOR_AUDIT_FILE === undefined ? mkdtempSync(join(tmpdir(), 'floor-')) : undefined;
const auditFd = audited ? openSync(process.env.FLOOR_AUDIT_FILE ?? join(auditDir!, 'audit.jsonl'), 'a') : -1;

const tasks = new Map<string, object>();
/** Ids in arrival order, a ring: `keys().next()` on a Map with many deletions walks the holes. */
const order: string[] = new Array<string>(MAX_TASKS);
let oldest = 0;
let seq = 0;
let prev = '0'.repeat(64);
let lines: string[] = [];
let held: (() => void)[] = [];
/** The turn's in-flight slots (guarded floor), given back once its rows are written. */
let slots: Release[] = [];
const guards: FloorGuards | undefined = process.env.FLOOR_GUARDS === '1' ? createFloorGuards({ audited }) : undefined;
let flushing = false;
/** The turn's tasks, for a durable store. */
let pending: TaskRow[] = [];
/** The SQLite directory made here (no FLOOR_DATA), removed on exit. */
let dataDir: string | undefined;
const durable: FloorStore | undefined = openStore(process.env.FLOOR_STORE);
const postgres: FloorPostgres | undefined =
  process.env.FLOOR_STORE === 'postgres'
    ? await openFloorPostgres(
        process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
        process.env.FLOOR_SCHEMA ?? 'airlock_floor',
      )
    : undefined;
/** PostgreSQL: the tasks and replies waiting for the batch in flight to be committed. */
let queuedRows: TaskRow[] = [];
let queuedReplies: (() => void)[] = [];
let committing = false;

function openStore(kind: string | undefined): FloorStore | undefined {
  if (kind === undefined || kind === '' || kind === 'postgres') return undefined;
  if (kind === 'sqlite')
    return openFloorSqlite(process.env.FLOOR_DATA ?? (dataDir = mkdtempSync(join(tmpdir(), 'floor-data-'))));
  throw new Error(`floor-http: FLOOR_STORE must be sqlite or postgres, not ${kind}`);
}

/**
 * As Airlock's PostgreSQL group commit: one batch at a time; what arrives meanwhile goes in the
 * next, sent at the end of the turn in which the batch before it was committed.
 */
function commitQueued(store: FloorPostgres): void {
  committing = true;
  const rows = queuedRows;
  const replies = queuedReplies;
  queuedRows = [];
  queuedReplies = [];
  void store.commit(rows).then(() => {
    for (const reply of replies) reply();
    if (queuedRows.length > 0) setImmediate(commitQueued, store);
    else committing = false;
  });
}

let lastMs = 0;
let lastIso = '';
/** The ISO time, made once a millisecond (requests of one turn mostly share it). */
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

function auditRow(event: Record<string, unknown>): void {
  guards?.checkRow(event);
  const fields = JSON.stringify(event);
  const body = `{"seq":${++seq},"prev":"${prev}",${fields.slice(1)}`;
  prev = hash('sha256', body, 'hex');
  lines.push(`${body.slice(0, -1)},"hash":"${prev}"}`);
}

/**
 * One write for the turn's rows, then (with a durable store) one transaction for the turn's
 * tasks, then the turn's replies, in a burst as Airlock sends them.
 */
function flush(): void {
  flushing = false;
  const replies = held;
  held = [];
  if (lines.length > 0) {
    const bytes = Buffer.from(`${lines.join('\n')}\n`);
    lines = [];
    for (let written = 0; written < bytes.length;) written += writeSync(auditFd, bytes, written);
  }
  if (slots.length > 0) {
    for (const release of slots) release();
    slots = [];
  }
  if (durable !== undefined && pending.length > 0) {
    durable.commit(pending);
    pending = [];
  }
  if (postgres !== undefined && pending.length > 0) {
    for (const row of pending) queuedRows.push(row);
    for (const reply of replies) queuedReplies.push(reply);
    pending = [];
    if (!committing) commitQueued(postgres);
    return;
  }
  for (const reply of replies) reply();
}

function fail(res: ServerResponse, status: number, id: unknown, code: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function authorised(req: IncomingMessage): boolean {
  const header = req.headers.authorization;
  if (header === undefined || !header.startsWith('Bearer ')) return false;
  return timingSafeEqual(hash('sha256', header.slice(7), 'buffer'), digest);
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') return fail(res, 405, null, -32600, 'POST only');
  if (guards !== undefined) return handleGuarded(req, res, guards);
  if (!authorised(req)) return fail(res, 401, null, -32001, 'unauthorised');
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => answer(res, Buffer.concat(chunks).toString('utf8')));
}

function answer(res: ServerResponse, text: string): void {
  let request: { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { message?: Record<string, unknown> } };
  try {
    request = JSON.parse(text) as typeof request;
  } catch {
    return fail(res, 200, null, -32700, 'parse error');
  }
  const message = request.params?.message;
  const parts = message?.parts;
  const part = Array.isArray(parts) ? (parts[0] as { kind?: unknown; text?: unknown }) : undefined;
  if (request.jsonrpc !== '2.0' || request.method !== 'message/send' || typeof part?.text !== 'string') {
    return fail(res, 200, request.id, -32602, 'invalid params');
  }
  complete(res, request.id, message!, part.text);
}

/** The guarded floor's request: each check a call of the project's own guard (floor-guards.ts). */
function handleGuarded(req: IncomingMessage, res: ServerResponse, guards: FloorGuards): void {
  const refused = guards.admitCaller(req, authorised(req)) ?? guards.admitBodyType(req);
  if (refused !== undefined) {
    req.resume();
    return fail(res, refused.status, null, refused.code, refused.message);
  }
  guards.readBody(
    req,
    res,
    (body) => {
      let frame: { id?: unknown; params?: { message?: Record<string, unknown> } };
      try {
        frame = JSON.parse(body.toString('utf8')) as typeof frame;
      } catch {
        return fail(res, 200, null, -32700, 'parse error');
      }
      const decoded = guards.decode(frame);
      if ('status' in decoded) return fail(res, decoded.status, frame.id, decoded.code, decoded.message);
      const turn = guards.admitTurn(decoded.message);
      if ('status' in turn) return fail(res, turn.status, decoded.id, turn.code, turn.message);
      slots.push(turn.release);
      // The reply's history holds the message as it came (the wire form), as the plain floor's does.
      complete(res, decoded.id, frame.params!.message!, turn.text);
    },
    (refusal) => fail(res, refusal.status, null, refusal.code, refusal.message),
  );
}

/** The task, its two rows and the reply, held to the end of the turn. */
function complete(res: ServerResponse, requestId: unknown, message: Record<string, unknown>, text: string): void {
  const id = newTaskId();
  const contextId = randomUUID();
  const time = isoNow();
  const inputChars = text.length;
  if (audited) {
    auditRow({
      type: 'a2a.task.submitted',
      time,
      outcome: 'ok',
      client: 'bench',
      agent: 'echo',
      taskId: id,
      contextId,
      inputChars,
    });
  }
  const task = {
    kind: 'task',
    id,
    contextId,
    status: { state: 'completed', timestamp: time },
    artifacts: [{ artifactId: randomUUID(), name: 'reply', parts: [{ kind: 'text', text }] }],
    history: [{ ...message, contextId, taskId: id }],
  };
  if (durable === undefined) {
    tasks.set(id, task);
    if (tasks.size > MAX_TASKS) tasks.delete(order[oldest]!);
    order[oldest] = id;
    oldest = (oldest + 1) % MAX_TASKS;
  }
  if (audited) {
    auditRow({
      type: 'a2a.task.completed',
      time,
      outcome: 'ok',
      client: 'bench',
      agent: 'echo',
      taskId: id,
      contextId,
      inputChars,
      outputChars: inputChars,
    });
  }
  if (durable !== undefined || postgres !== undefined)
    pending.push({ id, owner: 'bench', statusMs: Date.parse(time), body: JSON.stringify(task) });
  const body = JSON.stringify({ jsonrpc: '2.0', id: requestId, result: task });
  const reply = (): void => {
    res.writeHead(200, ['content-type', 'application/json', 'content-length', Buffer.byteLength(body)]);
    res.end(body);
  };
  held.push(reply);
  if (!flushing) {
    flushing = true;
    setImmediate(endOfTurn);
  }
}

/** As Airlock's SQLite group commit: a turn that queued more than one task keeps its batch a turn longer. */
function endOfTurn(): void {
  if (durable !== undefined && pending.length > 1) setImmediate(flush);
  else flush();
}

const server = createServer(handle);
server.listen(Number(process.env.PORT ?? 0), HOST, () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`listening on http://${HOST}:${port}\n`);
});

function stop(): void {
  server.close(() => {
    if (auditFd !== -1) closeSync(auditFd);
    durable?.close();
    void postgres?.close();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
    if (auditDir !== undefined) rmSync(auditDir, { recursive: true, force: true });
    process.exit(0);
  });
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
