/**
 * Group commit of the audit file, end to end: no response before its rows are written
 * (respond/committed.ts), the chain intact under concurrent load with rows grouped into few
 * writes, and a gateway SIGKILLed right after answering has the answered task's rows on disk.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { JsonlAuditSink, verifyAuditFile } from '../src/audit/index.js';
import { committedResponses } from '../src/server/respond/committed.js';
import { DEFAULT_YAML, rpc, startGateway, TOKEN_A, v03Message } from './helpers/gateway.js';
import { killHard, startServe } from './helpers/serve-process.js';

/** The task ids of the file's rows, by row type. */
function rowsOf(path: string): { type: string; taskId?: string }[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as { type: string; taskId?: string });
}

function hasTaskRows(path: string, taskId: string): boolean {
  const types = rowsOf(path)
    .filter((row) => row.taskId === taskId)
    .map((row) => row.type);
  return types.includes('a2a.task.submitted') && types.includes('a2a.task.completed');
}

/** One GET on a loopback server: the status, or the error's code when the connection broke. */
function get(port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    req.end();
  });
}

describe('audit group commit', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-group-commit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a response is held until its commit point settles; a failed write is reported and the response still sent', async () => {
    let settle: { resolve: () => void; reject: (error: Error) => void } | undefined;
    let pending: Promise<void> | undefined;
    const failures: unknown[] = [];
    const ServerResponse = committedResponses(
      () => pending,
      (error) => failures.push(error),
    );
    const server: Server = createServer({ ServerResponse }, (_req, res) => {
      pending = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('held ');
      res.end('answer');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      let answered = false;
      const first = get(port).then((status) => {
        answered = true;
        return status;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(answered, false, 'nothing is sent while the rows are not written');
      pending = undefined;
      settle?.resolve();
      assert.equal(await first, 200);

      const second = get(port);
      await new Promise((resolve) => setTimeout(resolve, 100));
      pending = undefined;
      settle?.reject(new Error('disk full'));
      assert.equal(await second, 200, 'held output is released after a failed write, as before group commit');
      assert.equal(failures.length, 1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('under 200 concurrent tasks: every answer finds its rows in the file, the rows go in few writes, and the chain verifies', async () => {
    const path = join(dir, 'audit.jsonl');
    const sink = new JsonlAuditSink(path, { groupCommit: true });
    const gw = await startGateway(DEFAULT_YAML, { auditSink: sink });
    try {
      const tasks = await Promise.all(
        Array.from({ length: 200 }, async (_, index) => {
          const sent = await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message(`hello ${index}`) });
          const id = sent.body.result.id as string;
          // Read at once, when the answer arrives: its rows must be in the file already.
          assert.ok(hasTaskRows(path, id), `rows of ${id} written before its answer`);
          return id;
        }),
      );
      assert.equal(new Set(tasks).size, 200);
      const { batches, rows } = sink.commitStats;
      assert.equal(rows, 400);
      // In process, fetch's requests reach the server spread over turns; the bench (a separate
      // load generator) sees tens of rows per write. Here: fewer writes than rows.
      assert.ok(batches < rows, `${rows} rows in ${batches} writes`);
    } finally {
      await gw.close();
    }
    const verified = await verifyAuditFile(path);
    assert.ok(verified.ok && verified.rows === 400, JSON.stringify(verified));
  });

  it('a gateway SIGKILLed as soon as a caller has its answer has that task’s rows on disk, the chain intact', async () => {
    const path = join(dir, 'audit.jsonl');
    const configPath = join(dir, 'airlock.yaml');
    writeFileSync(configPath, `${DEFAULT_YAML}\naudit:\n  file: '${path}'\n`, { mode: 0o600 });
    const server = await startServe(configPath, undefined, {
      TOKEN_A,
      TOKEN_B: `${TOKEN_A}-b`,
      TOKEN_C: `${TOKEN_A}-c`,
    });
    let answered: string | undefined;
    try {
      const calls = Array.from({ length: 30 }, async () => {
        const sent = await rpc(`${server.url}/a2a/echo`, 'message/send', { message: v03Message('hello') }).catch(
          () => undefined,
        );
        if (answered === undefined && sent?.body?.result?.id !== undefined) {
          answered = sent.body.result.id as string;
          server.child.kill('SIGKILL');
        }
      });
      await Promise.all(calls);
    } finally {
      await killHard(server);
    }
    assert.ok(answered !== undefined, 'one call was answered');
    const verified = await verifyAuditFile(path);
    assert.ok(verified.ok, JSON.stringify(verified));
    assert.ok(hasTaskRows(path, answered), `rows of the answered task ${answered} are on disk`);
  });
});
