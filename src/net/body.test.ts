import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { capBody, checkDeclaredLength, readCapped } from './body.js';
import { OutboundError } from './errors.js';

function source(chunks: Buffer[]): Readable {
  return Readable.from(chunks, { objectMode: false });
}

describe('byte-capped bodies', () => {
  test('a body up to the cap is returned whole; one byte more is response_too_large', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 10 }),
        fc.nat(300),
        async (sizes, cap) => {
          const chunks = sizes.map((size) => Buffer.alloc(size, 1));
          const total = sizes.reduce((a, b) => a + b, 0);
          try {
            const body = await readCapped(source(chunks), cap, 'https://agent.example');
            assert.ok(total <= cap);
            assert.equal(body.length, total);
          } catch (error) {
            assert.ok(total > cap, `refused ${total} bytes under cap ${cap}`);
            assert.ok(error instanceof OutboundError && error.code === 'response_too_large');
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  test('hands on exactly the bytes up to the cap before refusing the rest', async () => {
    const seen: Buffer[] = [];
    const reading = (async () => {
      for await (const chunk of capBody(source([Buffer.from('abc'), Buffer.from('defgh')]), 5, 'https://a.example')) {
        seen.push(chunk);
      }
    })();
    await assert.rejects(reading, { code: 'response_too_large' });
    assert.equal(Buffer.concat(seen).toString(), 'abcde');
  });

  test('stops reading at the cap and destroys the source (an endless body is not drained)', async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1024;
        this.push(Buffer.alloc(1024));
      },
    });
    await assert.rejects(readCapped(endless, 10_000, 'https://agent.example'), { code: 'response_too_large' });
    assert.ok(endless.destroyed);
    assert.ok(produced < 100_000, `produced ${produced} bytes`);
  });

  test('runs onDone once on every ending and maps source errors', async () => {
    let done = 0;
    const failing = new Readable({
      read() {
        this.destroy(Object.assign(new Error('boom'), { code: 'ECONNRESET' }));
      },
    });
    await assert.rejects(
      readCapped(
        failing,
        10,
        'o',
        () => new OutboundError('network_error', 'mapped'),
        () => done++,
      ),
      { code: 'network_error', message: 'mapped' },
    );
    const iterable = capBody(source([Buffer.from('abc'), Buffer.from('def')]), 10, 'o', undefined, () => done++);
    for await (const chunk of iterable) {
      assert.equal(chunk.toString(), 'abc');
      break;
    }
    assert.equal(done, 2);
    assert.throws(() => iterable[Symbol.asyncIterator](), /only once/);
  });

  test('a declared content-length above the cap is refused before reading', () => {
    assert.throws(() => checkDeclaredLength({ 'content-length': '1001' }, 1000, 'o'), { code: 'response_too_large' });
    assert.doesNotThrow(() => checkDeclaredLength({ 'content-length': '1000' }, 1000, 'o'));
    assert.doesNotThrow(() => checkDeclaredLength({}, 1000, 'o'));
  });
});
