import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PinStore, parsePinFile } from './pins.js';

const D1 = '1'.repeat(64);
const D2 = '2'.repeat(64);
const D3 = 'a'.repeat(64);
const T0 = Date.parse('2026-10-24T12:00:00.000Z');

let root: string;
let counter = 0;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'airlock-pins-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A fresh pin file path in its own, not yet existing, directory. */
function freshPath(): string {
  counter += 1;
  return join(root, `case-${counter}`, '.airlock', 'pins.json');
}

describe('PinStore', () => {
  it('reads a missing file as no pins', async () => {
    const pins = new PinStore(freshPath());
    assert.equal(await pins.get('weather'), undefined);
    assert.equal(await pins.isDisabled('weather'), false);
    assert.equal((await pins.list()).size, 0);
  });

  it('persists a pin that another instance (another process) reads back', async () => {
    const path = freshPath();
    const record = await new PinStore(path, { now: () => T0 }).set('weather', D1, 'tofu');
    assert.deepEqual(record, { digest: D1, pinnedAt: '2026-10-24T12:00:00.000Z', source: 'tofu' });
    assert.deepEqual(await new PinStore(path).get('weather'), record);
    const file = JSON.parse(await readFile(path, 'utf8'));
    assert.deepEqual(file, { version: 1, pins: { weather: record } });
  });

  it('writes the file with mode 0600 and leaves no temp files behind', async () => {
    const path = freshPath();
    const pins = new PinStore(path);
    await pins.set('a', D1, 'tofu');
    await pins.set('b', D2, 'operator');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(join(path, '..')), ['pins.json']);
  });

  it('stores digests in lower case and refuses malformed ones', async () => {
    const pins = new PinStore(freshPath());
    await pins.set('a', D3.toUpperCase(), 'configured');
    assert.equal((await pins.get('a'))?.digest, D3);
    await assert.rejects(pins.set('a', 'abc', 'tofu'), TypeError);
    await assert.rejects(pins.markDrift('a', 'xyz'), TypeError);
  });

  it('disables an entry on drift and re-enables it when an operator pins again', async () => {
    const path = freshPath();
    let now = T0;
    const gateway = new PinStore(path, { now: () => now });
    await gateway.set('weather', D1, 'tofu');
    now += 60_000;
    await gateway.markDrift('weather', D2);
    assert.equal(await gateway.isDisabled('weather'), true);
    assert.deepEqual((await gateway.get('weather'))?.drift, { digest: D2, seenAt: '2026-10-24T12:01:00.000Z' });
    assert.equal((await gateway.get('weather'))?.digest, D1, 'the pin itself is unchanged');

    // `airlock registry pin weather` runs in another process with its own store object.
    await new PinStore(path).set('weather', D2, 'operator');
    assert.equal(await gateway.isDisabled('weather'), false, 'the gateway sees the re-pin without a restart');
    const record = await gateway.get('weather');
    assert.equal(record?.digest, D2);
    assert.equal(record?.source, 'operator');
    assert.equal(record?.drift, undefined);
  });

  it('refuses to mark drift for an entry that has no pin', async () => {
    await assert.rejects(new PinStore(freshPath()).markDrift('nobody', D1), /No pin is stored/);
  });

  it('keeps every change when writes overlap in one process', async () => {
    const path = freshPath();
    const pins = new PinStore(path);
    const names = Array.from({ length: 20 }, (_, i) => `entry-${i}`);
    await Promise.all(names.map((name) => pins.set(name, D1, 'tofu')));
    assert.deepEqual([...(await new PinStore(path).list()).keys()].sort(), [...names].sort());
  });

  it('keeps a later write going after an earlier one failed', async () => {
    const pins = new PinStore(freshPath());
    await assert.rejects(pins.markDrift('missing', D1));
    await pins.set('ok', D1, 'tofu');
    assert.equal((await pins.get('ok'))?.digest, D1);
  });

  it('deletes a pin', async () => {
    const pins = new PinStore(freshPath());
    await pins.set('a', D1, 'tofu');
    assert.equal(await pins.delete('a'), true);
    assert.equal(await pins.delete('a'), false);
    assert.equal(await pins.get('a'), undefined);
  });

  it('round-trips an entry named __proto__ as an ordinary name', async () => {
    const path = freshPath();
    await new PinStore(path).set('__proto__', D1, 'tofu');
    assert.equal((await new PinStore(path).get('__proto__'))?.digest, D1);
    assert.equal(await new PinStore(path).get('toString'), undefined);
  });

  it('fails closed on a corrupt file: reads throw and writes do not overwrite it', async () => {
    const path = freshPath();
    const pins = new PinStore(path);
    await pins.set('a', D1, 'tofu');
    await writeFile(path, '{"version":1,"pins":{"a":{"digest":"nope"}}}');
    await assert.rejects(pins.get('a'), /is not valid: the pin of "a" is malformed/);
    await assert.rejects(pins.set('b', D2, 'tofu'), /is not valid/);
    assert.equal(await readFile(path, 'utf8'), '{"version":1,"pins":{"a":{"digest":"nope"}}}');
  });
});

describe('parsePinFile', () => {
  it('refuses anything that is not a version 1 pin file', () => {
    for (const text of [
      '',
      'null',
      '[]',
      '{"pins":{}}',
      '{"version":2,"pins":{}}',
      '{"version":1,"pins":[]}',
      `{"version":1,"pins":{"a":{"digest":"${D1}","pinnedAt":"2026-10-24T12:00:00.000Z","source":"someone"}}}`,
      `{"version":1,"pins":{"a":{"digest":"${D1}","pinnedAt":"yesterday","source":"tofu"}}}`,
      `{"version":1,"pins":{"a":{"digest":"${D1}","pinnedAt":"2026-10-24T12:00:00.000Z","source":"tofu","drift":{"digest":"x"}}}}`,
      `{"version":1,"pins":{"a":{"digest":"${D3.toUpperCase()}","pinnedAt":"2026-10-24T12:00:00.000Z","source":"tofu"}}}`,
    ]) {
      assert.throws(() => parsePinFile(text, 'pins.json'), /The pin file pins\.json is not valid/, text);
    }
  });

  it('reads a valid file', () => {
    const text = `{"version":1,"pins":{"a":{"digest":"${D1}","pinnedAt":"2026-10-24T12:00:00.000Z","source":"tofu","drift":{"digest":"${D2}","seenAt":"2026-10-24T13:00:00.000Z"}}}}`;
    assert.deepEqual(parsePinFile(text, 'p').get('a'), {
      digest: D1,
      pinnedAt: '2026-10-24T12:00:00.000Z',
      source: 'tofu',
      drift: { digest: D2, seenAt: '2026-10-24T13:00:00.000Z' },
    });
  });
});
