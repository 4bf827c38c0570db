import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenCache, issuedTokensFor, subjectKey, tokenCacheKey } from './cache.js';

describe('tokenCacheKey', () => {
  it('separates entry, subject, audience and scopes; scope order and repeats do not matter', () => {
    const key = tokenCacheKey('a', 'client', 'https://r', ['y', 'x', 'x']);
    assert.equal(key, tokenCacheKey('a', 'client', 'https://r', ['x', 'y']));
    assert.notEqual(key, tokenCacheKey('b', 'client', 'https://r', ['x', 'y']));
    assert.notEqual(key, tokenCacheKey('a', subjectKey('user-token-1'), 'https://r', ['x', 'y']));
    assert.notEqual(key, tokenCacheKey('a', 'client', 'https://s', ['x', 'y']));
    assert.notEqual(key, tokenCacheKey('a', 'client', 'https://r', ['x']));
  });

  it('holds a digest of the subject token, never the token', () => {
    const key = subjectKey('eyJhbGciOi.secret-subject.sig');
    assert.match(key, /^sub:[0-9a-f]{64}$/);
    assert.notEqual(subjectKey('other-token-123'), key);
  });
});

describe('TokenCache', () => {
  const clock = () => {
    let now = 1_000_000;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  it('reuses a token until shortly before it expires, then asks again', async () => {
    const time = clock();
    const cache = new TokenCache({ now: time.now, skewMs: 30_000 });
    let asked = 0;
    const fetch = async () => ({ accessToken: `token-number-${++asked}`, expiresAt: time.now() + 3_600_000 });
    assert.equal((await cache.get('k', fetch)).accessToken, 'token-number-1');
    time.advance(3_600_000 - 30_001);
    assert.equal((await cache.get('k', fetch)).accessToken, 'token-number-1');
    time.advance(2);
    assert.equal((await cache.get('k', fetch)).accessToken, 'token-number-2');
  });

  it('a short-lived token is dropped a tenth of its lifetime early', async () => {
    const time = clock();
    const cache = new TokenCache({ now: time.now });
    let asked = 0;
    const fetch = async () => ({ accessToken: `short-token-${++asked}`, expiresAt: time.now() + 10_000 });
    await cache.get('k', fetch);
    time.advance(8_999);
    assert.equal((await cache.get('k', fetch)).accessToken, 'short-token-1');
    time.advance(2);
    assert.equal((await cache.get('k', fetch)).accessToken, 'short-token-2');
  });

  it('a token without a lifetime is kept defaultTtlMs', async () => {
    const time = clock();
    const cache = new TokenCache({ now: time.now, defaultTtlMs: 5_000 });
    let asked = 0;
    const fetch = async () => ({ accessToken: `no-expiry-${++asked}` });
    await cache.get('k', fetch);
    time.advance(4_999);
    assert.equal(asked, 1);
    await cache.get('k', fetch);
    time.advance(2);
    await cache.get('k', fetch);
    assert.equal(asked, 2);
  });

  it('concurrent callers share one request; a failure is not cached', async () => {
    const cache = new TokenCache();
    let asked = 0;
    let release!: () => void;
    const gate = new Promise<void>((done) => (release = done));
    const fetch = async () => {
      asked += 1;
      await gate;
      return { accessToken: 'shared-token-1', expiresAt: Date.now() + 60_000 };
    };
    const both = Promise.all([cache.get('k', fetch), cache.get('k', fetch)]);
    release();
    assert.deepEqual(
      (await both).map((t) => t.accessToken),
      ['shared-token-1', 'shared-token-1'],
    );
    assert.equal(asked, 1);
    const failing = async () => {
      throw new Error('endpoint down');
    };
    await assert.rejects(cache.get('f', failing), /endpoint down/);
    assert.equal((await cache.get('f', fetch)).accessToken, 'shared-token-1');
  });

  it('drop() forgets a token (after a 401), so the next get asks again', async () => {
    const cache = new TokenCache();
    let asked = 0;
    const fetch = async () => ({ accessToken: `dropped-token-${++asked}`, expiresAt: Date.now() + 60_000 });
    await cache.get('k', fetch);
    cache.drop('k');
    assert.equal((await cache.get('k', fetch)).accessToken, 'dropped-token-2');
    assert.equal(cache.size, 1);
  });

  it('remembers the tokens handed out per entry for redaction, the newest 32', async () => {
    const cache = new TokenCache();
    for (let i = 0; i < 40; i++) {
      await cache.get(tokenCacheKey('redact-entry', 'client', `aud-${i}`, []), async () => ({
        accessToken: `redact-token-${i}`,
      }));
    }
    const remembered = issuedTokensFor('redact-entry');
    assert.equal(remembered.length, 32);
    assert.ok(remembered.includes('redact-token-39'));
    assert.ok(!remembered.includes('redact-token-0'));
    assert.deepEqual(issuedTokensFor('no-such-entry'), []);
  });
});
