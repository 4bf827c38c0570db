import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_ANSWERS, resolveChecked } from './connector.js';
import type { Resolver } from './connector.js';

const policy = { privateNetwork: false, privateAllow: [] as string[], proxyConfigured: false };

/** A resolver that answers from a script, one entry per call, and counts the calls. */
function scripted(...answers: string[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const next = answers[Math.min(calls.length - 1, answers.length - 1)] ?? [];
    return next.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
  return Object.assign(resolve, { calls });
}

describe('resolveChecked', () => {
  test('resolves once and returns exactly the answers it checked (a later, different answer is never seen)', async () => {
    const resolve = scripted(['93.184.216.34'], ['10.0.0.5']);
    assert.deepEqual(await resolveChecked('rebind.example', policy, resolve), ['93.184.216.34']);
    assert.deepEqual(resolve.calls, ['rebind.example']);
    // The next connection resolves afresh and is judged on its own answer.
    await assert.rejects(resolveChecked('rebind.example', policy, resolve), { code: 'address_blocked' });
  });

  test('one bad answer among good ones refuses the host', async () => {
    for (const bad of [
      '10.0.0.5',
      '127.0.0.1',
      '169.254.169.254',
      '::ffff:10.0.0.5',
      '64:ff9b::a9fe:a9fe',
      'nonsense',
    ]) {
      await assert.rejects(resolveChecked('mixed.example', policy, scripted(['93.184.216.34', bad])), {
        code: 'address_blocked',
      });
    }
  });

  test('a name resolving to loopback is refused; localhost is pinned to loopback without asking the resolver', async () => {
    await assert.rejects(resolveChecked('evil.test', policy, scripted(['127.0.0.1'])), {
      code: 'address_blocked',
      message: /evil\.test refused: 127\.0\.0\.1 is a loopback address/,
    });
    const resolve = scripted(['93.184.216.34']);
    assert.deepEqual(await resolveChecked('localhost', policy, resolve), ['127.0.0.1', '::1']);
    assert.deepEqual(await resolveChecked('LOCALHOST', policy, resolve), ['127.0.0.1', '::1']);
    assert.equal(resolve.calls.length, 0);
  });

  test('IP literals are checked without a lookup', async () => {
    const resolve = scripted(['93.184.216.34']);
    assert.deepEqual(await resolveChecked('93.184.216.34', policy, resolve), ['93.184.216.34']);
    await assert.rejects(resolveChecked('169.254.169.254', policy, resolve), { code: 'address_blocked' });
    await assert.rejects(resolveChecked('::ffff:a9fe:a9fe', policy, resolve), { code: 'address_blocked' });
    assert.equal(resolve.calls.length, 0);
  });

  test('private answers pass only for a private_network entry whose allowlist covers them', async () => {
    const resolve = scripted(['10.20.0.5']);
    await assert.rejects(resolveChecked('w.corp', policy, resolve), { code: 'address_blocked' });
    await assert.rejects(resolveChecked('w.corp', { ...policy, privateNetwork: true }, resolve), {
      code: 'address_blocked',
    });
    assert.deepEqual(
      await resolveChecked('w.corp', { ...policy, privateNetwork: true, privateAllow: ['10.20.0.0/16'] }, resolve),
      ['10.20.0.5'],
    );
    await assert.rejects(
      resolveChecked(
        'w.corp',
        { privateNetwork: true, privateAllow: ['w.corp'], proxyConfigured: true },
        scripted(['93.184.216.34']),
      ),
      { code: 'address_blocked', message: /egress proxy/ },
    );
  });

  test('resolver failures, empty answers and answer floods are errors', async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await assert.rejects(resolveChecked('nx.example', policy, failing), {
      code: 'network_error',
      message: 'cannot resolve nx.example (ENOTFOUND)',
    });
    await assert.rejects(resolveChecked('empty.example', policy, scripted([])), { code: 'network_error' });
    const flood = Array.from({ length: MAX_ANSWERS + 1 }, (_, i) => `93.184.${Math.floor(i / 250)}.${(i % 250) + 1}`);
    await assert.rejects(resolveChecked('flood.example', policy, scripted(flood)), { code: 'address_blocked' });
    assert.deepEqual(await resolveChecked('dup.example', policy, scripted(['8.8.8.8', '8.8.8.8'])), ['8.8.8.8']);
  });
});
