/** `airlock audit verify`: the command's output and exit codes on a good, a tampered and a missing file. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { auditTime } from '../audit/events.js';
import { JsonlAuditSink } from '../audit/jsonl.js';
import { auditVerifyCommand } from './audit.js';

async function run(path: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await auditVerifyCommand(path, {
    stdout: (line) => (stdout += line),
    stderr: (line) => (stderr += line),
  });
  return { code, stdout, stderr };
}

describe('airlock audit verify', () => {
  let dir: string;
  let path: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-audit-cli-'));
    path = join(dir, 'audit.jsonl');
    const sink = new JsonlAuditSink(path);
    for (let i = 0; i < 3; i += 1) {
      sink.write({
        type: 'a2a.server.rate_limited',
        time: auditTime(),
        outcome: 'denied',
        reason: 'client_rate_limit',
      });
    }
    sink.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints ok: N rows and exits 0', async () => {
    assert.deepEqual(await run(path), { code: 0, stdout: 'ok: 3 rows\n', stderr: '' });
  });

  it('prints the first broken line on stderr and exits 1', async () => {
    const tampered = join(dir, 'tampered.jsonl');
    writeFileSync(tampered, readFileSync(path, 'utf8').replace('"seq":2,', '"seq":2 ,'));
    assert.deepEqual(await run(tampered), {
      code: 1,
      stdout: '',
      stderr: 'broken at line 2: bad_hash (1 rows checked)\n',
    });
  });

  it('reports an empty file as empty (exit 3), never as ok: the file alone cannot tell emptied from new', async () => {
    const emptied = join(dir, 'emptied.jsonl');
    writeFileSync(emptied, readFileSync(path));
    assert.equal((await run(emptied)).code, 0);
    truncateSync(emptied, 0);
    assert.deepEqual(await run(emptied), {
      code: 3,
      stdout: '',
      stderr: 'empty: 0 rows — the file has no rows; if it had rows before, it was emptied\n',
    });
  });

  it('exits 2 when the file cannot be read', async () => {
    const missing = join(dir, 'missing.jsonl');
    assert.deepEqual(await run(missing), { code: 2, stdout: '', stderr: `cannot read ${missing}: ENOENT\n` });
  });
});
