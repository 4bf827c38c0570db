import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CardFetcher, CardRequestOptions } from '../card.js';
import { fetchKeySet } from './fetch-keys.js';
import { generateSigningKey } from './generate.js';

const timeouts = { connectMs: 1000, readMs: 1000, totalMs: 1000 };

function fetcher(status: number, body: unknown, seen: CardRequestOptions[] = []): CardFetcher {
  return {
    request: async (options) => {
      seen.push(options);
      return { status, headers: {}, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) };
    },
  };
}

describe('fetchKeySet', () => {
  it('fetches the operator’s jwks_url through the given client, capped, and imports it', async () => {
    const { kid, publicJwk } = await generateSigningKey('ES256');
    const seen: CardRequestOptions[] = [];
    const keySet = await fetchKeySet(fetcher(200, { keys: [publicJwk] }, seen), {
      url: 'https://keys.example/jwks.json',
      timeouts,
    });
    assert.ok(keySet.get(kid));
    assert.equal(seen[0]!.method, 'GET');
    assert.equal(seen[0]!.maxResponseBytes, 64 * 1024);
    assert.equal(seen[0]!.privateNetwork, false);
  });

  it('refuses a non-200 answer, private keys and garbage', async () => {
    const { privateJwk } = await generateSigningKey('EdDSA');
    await assert.rejects(fetchKeySet(fetcher(404, ''), { url: 'https://k.example/j', timeouts }), {
      code: 'key_unreadable',
      message: 'the key set at https://k.example/j answered HTTP 404',
    });
    await assert.rejects(fetchKeySet(fetcher(200, { keys: [privateJwk] }), { url: 'https://k.example/j', timeouts }), {
      code: 'key_private_in_public_set',
    });
    await assert.rejects(fetchKeySet(fetcher(200, 'nope'), { url: 'https://k.example/j', timeouts }), {
      code: 'key_malformed',
    });
  });

  it('lets transport errors through unchanged', async () => {
    const failing: CardFetcher = {
      request: () => Promise.reject(Object.assign(new Error('refused'), { code: 'address_refused' })),
    };
    await assert.rejects(fetchKeySet(failing, { url: 'https://k.example/j', timeouts }), { code: 'address_refused' });
  });
});
