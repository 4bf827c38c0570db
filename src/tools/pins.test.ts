import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ToolServerError } from './errors.js';
import { pinStates, ToolPinStore } from './pins.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const S = 'c'.repeat(64);

describe('tool pins', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-tool-pins-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('stores a pin per server atomically, mode 0600, and reads it back', async () => {
    const path = join(dir, 'state', 'tool-pins.json');
    const store = new ToolPinStore(path, { now: () => Date.parse('2026-12-02T00:00:00Z') });
    await store.set('files', { digest: S, tools: { read_file: A } }, 'tofu');
    await store.set('web', { digest: S, tools: { search: B } }, 'operator');
    const files = await store.get('files');
    assert.deepEqual(files, {
      digest: S,
      pinnedAt: '2026-12-02T00:00:00.000Z',
      source: 'tofu',
      tools: { read_file: A },
    });
    assert.equal([...(await store.list()).keys()].join(), 'files,web');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.equal(JSON.parse(await readFile(path, 'utf8')).version, 1);
  });

  it('a file that is not a pin file is an error, never "no pins"', async () => {
    const path = join(dir, 'broken.json');
    await writeFile(path, '{"version":1,"servers":{"x":{"digest":"nope"}}}');
    await assert.rejects(
      new ToolPinStore(path).get('x'),
      (error: unknown) => error instanceof ToolServerError && error.code === 'tool_pins_invalid',
    );
  });

  it('judges each listed tool: pinned, changed, or new (unpinned)', () => {
    const states = pinStates(
      new Map([
        ['read_file', A],
        ['write_file', B],
        ['move_file', A],
      ]),
      { tools: { read_file: A, write_file: A } },
      undefined,
      S,
    );
    assert.deepEqual(Object.fromEntries(states), { read_file: 'pinned', write_file: 'changed', move_file: 'unpinned' });
  });

  it('a configured digest holds the whole list', () => {
    const digests = new Map([['read_file', A]]);
    assert.equal(pinStates(digests, undefined, S, S).get('read_file'), 'pinned');
    assert.equal(pinStates(digests, { tools: { read_file: A } }, S, B).get('read_file'), 'changed');
  });
});
