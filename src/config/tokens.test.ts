import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveToken } from './tokens.js';

const TOKENS = new URL('./tokens.ts', import.meta.url).href;

const ROUNDS = 40;

/**
 * One process resolving the generated token of each round's file at that round's instant (a
 * busy wait, so that the processes race within microseconds); resolves to the tokens it got, or
 * the error it met, one line a round.
 */
function raceInChild(dir: string, start: number): Promise<string[]> {
  const script = `
    const { resolveToken } = await import(${JSON.stringify(TOKENS)});
    const lines = [];
    for (let round = 0; round < ${ROUNDS}; round += 1) {
      const at = ${start} + round * 25;
      while (Date.now() < at);
      try {
        lines.push(resolveToken({ file: ${JSON.stringify(dir)} + '/' + round + '/demo-token', generate: true }, {}, 'k').value);
      } catch (error) {
        lines.push('error: ' + error.message);
      }
    }
    process.stdout.write(lines.join('\\n'));`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((done, fail) =>
    child.once('exit', (code) => (code === 0 ? done(out.split('\n')) : fail(new Error(`exit ${code}: ${err}`)))),
  );
}

describe('generated token files', () => {
  it('processes started together from one folder agree on one token, never a half-written one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-token-race-'));
    try {
      const start = Date.now() + 3_000; // after every child has started
      const results = await Promise.all(Array.from({ length: 4 }, () => raceInChild(dir, start)));
      for (let round = 0; round < ROUNDS; round += 1) {
        const file = join(dir, String(round), 'demo-token');
        const written = readFileSync(file, 'utf8').trim();
        assert.equal(written.length, 43);
        for (const tokens of results) assert.equal(tokens[round], written, `round ${round}`);
        assert.equal(statSync(file).mode & 0o777, 0o600);
        assert.deepEqual(readdirSync(join(dir, String(round))), ['demo-token'], 'no temporary file left behind');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads an existing file rather than replacing it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-token-'));
    try {
      const file = join(dir, 'token');
      const first = resolveToken({ file, generate: true }, {}, 'k');
      assert.deepEqual(first.origin, { kind: 'file', path: file, generated: true });
      const second = resolveToken({ file, generate: true }, {}, 'k');
      assert.equal(second.value, first.value);
      assert.deepEqual(second.origin, { kind: 'file', path: file, generated: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
