/**
 * Read-only outbound commands leave the audit file alone (issue 16): `airlock agents` and
 * `airlock registry pin` neither open nor lock `AIRLOCK_AUDIT_FILE`, so they run beside a gateway
 * or an `airlock mcp` that holds it; `airlock send`, which writes rows, still refuses a file
 * another process holds, naming it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { JsonlAuditSink } from '../src/audit/index.js';
import { CLI } from './helpers/cli.js';

function airlock(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

describe('read-only outbound commands and the audit lock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-audit-ro-'));
  const auditFile = join(dir, 'audit.jsonl');
  const registry = join(dir, 'registry.yaml');
  // Port 9 (discard) on loopback: nothing listens, so the card fetch fails fast and locally.
  writeFileSync(
    registry,
    'agents:\n  - name: weather\n    card_url: http://127.0.0.1:9/.well-known/agent-card.json\n    description: test\n    effect: read_only\n',
  );
  const holder = new JsonlAuditSink(auditFile);
  after(() => {
    holder.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = { AIRLOCK_AUDIT_FILE: auditFile, AIRLOCK_PINS: join(dir, 'pins.json') };

  it('airlock agents and registry pin run while another process holds the audit file', async () => {
    for (const args of [
      ['agents', '--registry', registry],
      ['registry', 'pin', 'weather', '--registry', registry],
    ]) {
      const run = await airlock(args, env);
      assert.doesNotMatch(run.out, /in use by another process/, `${args.join(' ')}: ${run.out}`);
      assert.match(run.out, /ECONNREFUSED|cannot connect/, `${args.join(' ')} got as far as the card: ${run.out}`);
    }
  });

  it('airlock send, which writes rows, still refuses the held file with one line naming it', async () => {
    const run = await airlock(['send', 'weather', 'hi', '--registry', registry], env);
    assert.equal(run.code, 1);
    assert.match(run.out, new RegExp(`audit file ${auditFile.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is in use`));
  });
});
