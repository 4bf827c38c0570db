import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { resolveToken, sameDigestHex, tokenDigestHex } from './tokens.js';

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

describe('sameDigestHex', () => {
  const digest = tokenDigestHex('tok-0123456789abcdef0123456789abcdef');

  it('is true for the same digest and false for one that differs in its last or first character', () => {
    assert.equal(sameDigestHex(digest, `${digest}`), true);
    const last = digest.at(-1) === '0' ? '1' : '0';
    assert.equal(sameDigestHex(digest, `${digest.slice(0, -1)}${last}`), false);
    const first = digest[0] === '0' ? '1' : '0';
    assert.equal(sameDigestHex(digest, `${first}${digest.slice(1)}`), false);
  });

  it('is false for a prefix, an extension or the empty string', () => {
    assert.equal(sameDigestHex(digest, digest.slice(0, 32)), false);
    assert.equal(sameDigestHex(digest, `${digest}0`), false);
    assert.equal(sameDigestHex(digest, ''), false);
    assert.equal(sameDigestHex('', ''), true);
  });

  it('property: agrees with string equality for any two hex strings', () => {
    const hex = fc.stringMatching(/^[0-9a-f]{0,8}$/);
    fc.assert(
      fc.property(hex, hex, (a, b) => sameDigestHex(a, b) === (a === b)),
      { numRuns: 2_000 },
    );
  });
});
