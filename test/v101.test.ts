/**
 * v1.0.1 details on the JSON-RPC endpoint and the shared header parsing: `A2A-Version` as a
 * query parameter (§3.6), an empty header read as 0.3, and the extensions headers
 * (`A2A-Extensions`, v0.3's `X-A2A-Extensions`) with the -32008 rule. The changed HTTP status
 * mappings are tested with the binding that has HTTP statuses (test/http-json.test.ts and
 * src/protocol/http-json/http-json.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { activateExtensions, parseExtensions } from '../src/protocol/headers.js';
import { parseA2AVersion, requestedVersion } from '../src/protocol/version.js';
import { rpc, startGateway, v10Message, type TestGateway } from './helpers/gateway.js';

let gw: TestGateway;
before(async () => {
  gw = await startGateway();
});
after(() => gw.close());

/** v1.0 errors carry an ErrorInfo list in `data`; v0.3 errors do not. */
function isV10Error(error: { data?: unknown }): boolean {
  return Array.isArray(error.data);
}

describe('A2A-Version on the JSON-RPC endpoint', () => {
  it('is read from the query when the header is absent', async () => {
    const viaQuery = await rpc(`${gw.url}/a2a/echo?A2A-Version=1.0`, 'NoSuchMethod', {});
    assert.equal(viaQuery.body.error.code, -32601);
    assert.ok(isV10Error(viaQuery.body.error), 'shaped for v1.0');
    const none = await rpc(`${gw.url}/a2a/echo`, 'NoSuchMethod', {});
    assert.ok(!isV10Error(none.body.error), 'shaped for v0.3 without it');
  });

  it('an unsupported version in the query is -32009', async () => {
    const answer = await rpc(`${gw.url}/a2a/echo?A2A-Version=2.0`, 'SendMessage', { message: v10Message('x') });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.error.code, -32009);
  });

  it('an empty header is 0.3 and wins over the query', async () => {
    const answer = await rpc(`${gw.url}/a2a/echo?A2A-Version=2.0`, 'NoSuchMethod', {}, { version: '' });
    assert.equal(answer.body.error.code, -32601, 'no -32009: the empty header means 0.3');
    assert.ok(!isV10Error(answer.body.error));
  });

  it('a v1.0 call works with the version in the query only', async () => {
    const answer = await rpc(`${gw.url}/a2a/echo?A2A-Version=1.0`, 'SendMessage', { message: v10Message('q') });
    assert.equal(answer.body.result.task.status.state, 'TASK_STATE_COMPLETED');
  });
});

describe('requestedVersion', () => {
  const cases: [string | undefined, string | undefined, string | undefined][] = [
    [undefined, '/a2a/echo', undefined],
    [undefined, '/a2a/echo?A2A-Version=1.0', '1.0'],
    [undefined, '/a2a/echo?a2a-version=1.0', undefined],
    ['', '/a2a/echo?A2A-Version=1.0', ''],
    ['0.3', '/a2a/echo?A2A-Version=1.0', '0.3'],
    [undefined, undefined, undefined],
  ];
  for (const [header, url, expected] of cases) {
    it(`header ${JSON.stringify(header)}, url ${String(url)} → ${String(expected)}`, () => {
      assert.equal(requestedVersion(header, url), expected);
    });
  }
  it('an empty or blank value is 0.3', () => {
    assert.equal(parseA2AVersion(''), '0.3');
    assert.equal(parseA2AVersion('  '), '0.3');
  });
});

describe('extensions headers', () => {
  it('reads both spellings, comma-separated, trimmed, without duplicates or empty items', () => {
    assert.deepEqual(parseExtensions(['https://a.example/e/v1, ,https://b.example/x', 'https://a.example/e/v1']), [
      'https://a.example/e/v1',
      'https://b.example/x',
    ]);
    assert.deepEqual(parseExtensions([undefined, ['https://c.example/1', 'https://d.example/2']]), [
      'https://c.example/1',
      'https://d.example/2',
    ]);
  });
  it('caps what it reads: 32 URIs, none over 512 characters', () => {
    const many = Array.from({ length: 40 }, (_, i) => `https://x.example/${i}`).join(',');
    assert.equal(parseExtensions([many]).length, 32);
    assert.deepEqual(parseExtensions([`https://x.example/${'a'.repeat(600)}`]), []);
  });
  it('activates only declared extensions; a required one not requested is missing (-32008)', () => {
    const declared = [
      { uri: 'https://a.example/e/v1', required: false },
      { uri: 'https://r.example/must', required: true },
    ];
    assert.deepEqual(
      activateExtensions(['https://a.example/e/v1', 'https://r.example/must', 'https://u.example'], declared),
      {
        activated: ['https://a.example/e/v1', 'https://r.example/must'],
      },
    );
    assert.deepEqual(activateExtensions(['https://a.example/e/v1'], declared), { missing: 'https://r.example/must' });
    assert.deepEqual(activateExtensions(['https://u.example'], []), { activated: [] });
  });
});
