/**
 * Restart safety with the embedded durable store: `airlock serve --data DIR` is killed with
 * SIGKILL in the middle of a bounded load and started again on the same directory. Every task id
 * any client received must be retrievable afterwards, in a sensible state: finished tasks as they
 * finished, tasks the dead process left running failed with a clear reason and an audit row.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RESTART_FAILURE_TEXT } from '../src/tasks/service.js';
import { TOKEN_A, TOKEN_B, rpc, v03Message, v10Message } from './helpers/gateway.js';
import { killHard, startServe, type ServeProcess } from './helpers/serve-process.js';

const CONFIG = `
server: { host: 127.0.0.1, port: 0 }
limits: { requestsPerMinute: 1000000, maxConcurrentTasks: 10000, maxConcurrentTasksPerPrincipal: 10000 }
audit: { file: AUDIT_FILE }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes }]
    backend: { type: echo }
  - slug: writer
    name: Writer
    description: Writes slowly.
    skills: [{ id: write, name: Write, description: Writes }]
    backend: { type: writer, chunkDelayMs: 400 }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, writer] }
  - { id: b, token: "\${TOKEN_B}", agents: [echo, writer] }
`;

describe('restart safety: kill -9 under load, restart on the same --data directory', () => {
  let dir: string;
  let configPath: string;
  let auditPath: string;
  const received = new Map<string, { token: string; agent: string }>();
  let restarted: ServeProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-restart-'));
    auditPath = join(dir, 'audit.jsonl');
    configPath = join(dir, 'airlock.yaml');
    writeFileSync(configPath, CONFIG.replace('AUDIT_FILE', JSON.stringify(auditPath)));
  });

  after(async () => {
    if (restarted !== undefined) await killHard(restarted);
    rmSync(dir, { recursive: true, force: true });
  });

  it('loses no acknowledged task: every id a client received is there after the restart', async (t) => {
    const first = await startServe(configPath, join(dir, 'data'), { TOKEN_A, TOKEN_B });
    let stop = false;
    let errors = 0;
    // Bounded load: 8 callers, each alternating a blocking echo and a non-blocking slow writer,
    // in both dialects, until the kill (at most ~1.2 s of load, at most 400 requests each).
    const worker = async (index: number): Promise<void> => {
      const token = index % 2 === 0 ? TOKEN_A : TOKEN_B;
      for (let round = 0; !stop && round < 400; round += 1) {
        const agent = round % 2 === 0 ? 'echo' : 'writer';
        const v10 = (round + index) % 3 === 0;
        try {
          const { body } = v10
            ? await rpc(
                `${first.url}/a2a/${agent}`,
                'SendMessage',
                {
                  message: v10Message(`load ${index}.${round}`),
                  configuration: { returnImmediately: agent === 'writer' },
                },
                { token, version: '1.0' },
              )
            : await rpc(
                `${first.url}/a2a/${agent}`,
                'message/send',
                { message: v03Message(`load ${index}.${round}`), configuration: { blocking: agent !== 'writer' } },
                { token },
              );
          const id: unknown = v10 ? body?.result?.task?.id : body?.result?.id;
          if (typeof id === 'string') received.set(id, { token, agent });
          else errors += 1;
        } catch {
          // The kill cuts requests in flight: their callers never got an id.
          if (stop) return;
          errors += 1;
        }
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, (_, index) => worker(index)));
    await new Promise((resolve) => setTimeout(resolve, 1200));
    // No new request after this point; the ones in flight are cut by the kill.
    stop = true;
    await killHard(first);
    await load;
    assert.equal(errors, 0, 'no request failed before the kill');
    assert.ok(received.size >= 50, `a real load ran before the kill (${received.size} tasks acknowledged)`);

    restarted = await startServe(configPath, join(dir, 'data'), { TOKEN_A, TOKEN_B });
    const states = new Map<string, number>();
    const failedIds: string[] = [];
    let lost = 0;
    for (const [id, { token, agent }] of received) {
      const { body } = await rpc(`${restarted.url}/a2a/${agent}`, 'tasks/get', { id }, { token });
      const task = body?.result;
      if (task === undefined) {
        lost += 1;
        continue;
      }
      const state: string = task.status.state;
      states.set(state, (states.get(state) ?? 0) + 1);
      if (state === 'failed') {
        assert.equal(task.status.message.parts[0].text, RESTART_FAILURE_TEXT);
        failedIds.push(id);
      } else assert.equal(state, 'completed', `task ${id} of ${agent} is ${state}`);
    }
    t.diagnostic(`acknowledged ${received.size}, lost ${lost}, states ${JSON.stringify(Object.fromEntries(states))}`);
    assert.equal(lost, 0, `lost ${lost} of ${received.size} acknowledged tasks`);
    const failed = states.get('failed') ?? 0;
    assert.ok(failed > 0, `some slow tasks were running at the kill: ${JSON.stringify([...states])}`);

    // One audit row per task failed at startup, with the restart reason.
    const rows = readFileSync(auditPath, 'utf8')
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as { type: string; reason?: string; client?: string; agent?: string; taskId?: string },
      );
    const restartRows = rows.filter((row) => row.type === 'a2a.task.failed' && row.reason === 'gateway_restart');
    // A task stored just before the kill cut its reply is failed too, though no client saw its id.
    const rowIds = new Set(restartRows.map((row) => row.taskId));
    for (const id of failedIds) assert.ok(rowIds.has(id), `an audit row for task ${id}`);
    assert.ok(restartRows.length >= failed);
    assert.ok(restartRows.every((row) => (row.client === 'a' || row.client === 'b') && row.agent === 'writer'));
  });
});
