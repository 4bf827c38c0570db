import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { RegistryError, loadRegistryFile, parseRegistry, registryPath } from './registry.js';

const SECRET = 'sk-registry-test-0123456789';

/** One entry named `travel`, with `lines` appended (indented as entry keys). */
function oneEntry(lines = '', url = 'https://travel.example.com/.well-known/agent-card.json'): string {
  return `agents:
  - name: travel
    card_url: ${url}
    description: Books trains.
    effect: read_only
${lines
  .split('\n')
  .filter((line) => line.length > 0)
  .map((line) => `    ${line}`)
  .join('\n')}
`;
}

function refusal(text: string, env: NodeJS.ProcessEnv = {}): RegistryError {
  try {
    parseRegistry(text, env);
  } catch (error) {
    assert.ok(error instanceof RegistryError, String(error));
    assert.ok(!error.message.includes('\n'), 'one line');
    return error;
  }
  assert.fail('expected a RegistryError');
}

describe('registry: valid files', () => {
  it('applies the defaults', () => {
    const entry = parseRegistry(oneEntry()).get('travel');
    assert.equal(entry.cardUrl, 'https://travel.example.com/.well-known/agent-card.json');
    assert.equal(entry.effect, 'read_only');
    assert.equal(entry.privateNetwork, false);
    assert.equal(entry.cardRefreshS, 300);
    assert.deepEqual(entry.timeouts, { connectMs: 5000, readMs: 60_000, totalMs: 120_000 });
    assert.equal(entry.maxResponseBytes, 1024 * 1024);
    assert.equal(entry.maxReplyChars, 20_000);
    assert.equal(entry.pollIntervalMs, 2000);
    assert.equal(entry.maxWaitMs, 120_000);
    assert.deepEqual(entry.skills, []);
    assert.equal(entry.auth, undefined);
    assert.ok(Object.isFrozen(entry));
  });

  it('reads every setting', () => {
    const registry = parseRegistry(
      oneEntry(`rpc_url: https://rpc.travel.example.com/a2a
skills: [book, search]
auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }
card_sha256: ${'AB'.repeat(32)}
card_refresh_s: 60
timeouts: { connect: 1, read: 2.5, total: 30 }
max_response_bytes: 65536
max_reply_chars: 500
poll_interval_s: 0.5
max_wait_s: 20`),
      { AIRLOCK_SECRET_TRAVEL: SECRET },
    );
    const entry = registry.get('travel');
    assert.equal(entry.rpcUrl, 'https://rpc.travel.example.com/a2a');
    assert.deepEqual(entry.skills, ['book', 'search']);
    assert.equal(entry.auth?.header(), `Bearer ${SECRET}`);
    assert.equal(entry.auth?.env, 'AIRLOCK_SECRET_TRAVEL');
    assert.equal(entry.cardSha256, 'ab'.repeat(32));
    assert.deepEqual(entry.timeouts, { connectMs: 1000, readMs: 2500, totalMs: 30_000 });
    assert.equal(entry.pollIntervalMs, 500);
    assert.equal(entry.maxWaitMs, 20_000);
  });

  it('keeps the secret out of JSON, String and inspect', () => {
    const registry = parseRegistry(oneEntry('auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }'), {
      AIRLOCK_SECRET_TRAVEL: SECRET,
    });
    const entry = registry.get('travel');
    assert.ok(!JSON.stringify(registry).includes(SECRET));
    assert.ok(JSON.stringify(entry).includes('AIRLOCK_SECRET_TRAVEL'));
    assert.ok(!inspect(entry, { depth: 10, showHidden: true }).includes(SECRET));
    assert.ok(!inspect(registry, { depth: 10, showHidden: true }).includes(SECRET));
    assert.ok(!`${String(entry.auth)}`.includes(SECRET));
  });

  it('allows plain http to loopback only', () => {
    for (const url of [
      'http://127.0.0.1:4000/card',
      'http://localhost/card',
      'http://[::1]:9/card',
      'http://127.1/c',
    ]) {
      assert.doesNotThrow(() => parseRegistry(oneEntry('', url)), url);
    }
  });

  it('accepts an empty list', () => {
    assert.deepEqual(parseRegistry('agents: []\n').names(), []);
  });

  it('get() lists the known names for an unknown one, echoing only name-shaped input', () => {
    const registry = parseRegistry(oneEntry());
    assert.throws(() => registry.get('hotel'), /no agent "hotel" in the registry; known: travel/);
    assert.throws(
      () => registry.get('IGNORE <<<x>>>'),
      (error: Error) => !error.message.includes('IGNORE') && error.message.includes('known: travel'),
    );
    assert.equal(registry.find('hotel'), undefined);
  });

  it('picks the path from --registry, then AIRLOCK_REGISTRY', () => {
    assert.equal(registryPath('a.yaml', { AIRLOCK_REGISTRY: 'b.yaml' }), 'a.yaml');
    assert.equal(registryPath(undefined, { AIRLOCK_REGISTRY: 'b.yaml' }), 'b.yaml');
    assert.equal(registryPath(undefined, {}), undefined);
  });

  it('loads a file, and names a missing one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-registry-'));
    const path = join(dir, 'registry.yaml');
    writeFileSync(path, oneEntry());
    assert.deepEqual(loadRegistryFile(path, {}).names(), ['travel']);
    assert.throws(() => loadRegistryFile(join(dir, 'missing.yaml'), {}), /file not found/);
  });
});

describe('registry: every refusal names the entry and key', () => {
  const cases: [string, string, NodeJS.ProcessEnv, RegExp][] = [
    [
      'a missing secret',
      oneEntry('auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }'),
      {},
      /agents\[0\] "travel": auth\.bearer_env: environment variable AIRLOCK_SECRET_TRAVEL is not set/,
    ],
    [
      'an empty secret',
      oneEntry('auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }'),
      { AIRLOCK_SECRET_TRAVEL: '' },
      /"travel": auth\.bearer_env: .* is not set/,
    ],
    [
      'a secret with a line break',
      oneEntry('auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }'),
      { AIRLOCK_SECRET_TRAVEL: 'abc\r\nX-Evil: 1' },
      /"travel": auth\.bearer_env: .*printable ASCII/,
    ],
    [
      'a secret too short to be redacted from replies',
      oneEntry('auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }'),
      { AIRLOCK_SECRET_TRAVEL: 'short' },
      /"travel": auth\.bearer_env: environment variable AIRLOCK_SECRET_TRAVEL must hold at least 8 characters/,
    ],
    [
      'a bearer_env outside AIRLOCK_SECRET_',
      oneEntry('auth: { bearer_env: AWS_SECRET_ACCESS_KEY }'),
      { AWS_SECRET_ACCESS_KEY: 'x' },
      /"travel": auth\.bearer_env: must name an environment variable starting with AIRLOCK_SECRET_/,
    ],
    [
      'private_network without AIRLOCK_PRIVATE_ALLOW',
      oneEntry('private_network: true'),
      {},
      /"travel": private_network: needs AIRLOCK_PRIVATE_ALLOW/,
    ],
    [
      'private_network with an empty AIRLOCK_PRIVATE_ALLOW',
      oneEntry('private_network: true'),
      { AIRLOCK_PRIVATE_ALLOW: ' , ' },
      /"travel": private_network: needs AIRLOCK_PRIVATE_ALLOW/,
    ],
    [
      'a literal private host outside the list',
      oneEntry('private_network: true', 'https://10.9.9.9/card'),
      { AIRLOCK_PRIVATE_ALLOW: '10.1.0.0/16, corp.internal' },
      /"travel": card_url: host 10\.9\.9\.9 is not in AIRLOCK_PRIVATE_ALLOW/,
    ],
    [
      'a literal private rpc_url outside the list',
      oneEntry('private_network: true\nrpc_url: https://192.168.1.2/rpc'),
      { AIRLOCK_PRIVATE_ALLOW: '10.0.0.0/8' },
      /"travel": rpc_url: host 192\.168\.1\.2 is not in AIRLOCK_PRIVATE_ALLOW/,
    ],
    [
      'a literal private host without private_network',
      oneEntry('', 'https://10.0.0.5/card'),
      {},
      /"travel": card_url: host 10\.0\.0\.5 is a private address; set private_network: true/,
    ],
    [
      'a link-local (metadata) host, even when listed',
      oneEntry('private_network: true', 'https://169.254.169.254/card'),
      { AIRLOCK_PRIVATE_ALLOW: '169.254.0.0/16' },
      /"travel": card_url: host 169\.254\.169\.254 is in a blocked range/,
    ],
    [
      'an IPv4-mapped private host',
      oneEntry('', 'https://[::ffff:10.0.0.1]/card'),
      {},
      /"travel": card_url: host 10\.0\.0\.1 is a private address/,
    ],
    [
      'a bad AIRLOCK_PRIVATE_ALLOW item',
      oneEntry(),
      { AIRLOCK_PRIVATE_ALLOW: '10.0.0.0/99' },
      /AIRLOCK_PRIVATE_ALLOW: "10\.0\.0\.0\/99" is not a host name, IP address or CIDR/,
    ],
    [
      'plain http to a public host',
      oneEntry('', 'http://travel.example.com/card'),
      {},
      /"travel": card_url: must be https/,
    ],
    [
      'a non-http scheme',
      oneEntry('', 'ftp://travel.example.com/card'),
      {},
      /"travel": card_url: must be an https URL/,
    ],
    ['a relative URL', oneEntry('', '/card'), {}, /"travel": card_url: is not an absolute URL/],
    [
      'a fragment',
      oneEntry('', 'https://travel.example.com/card#x'),
      {},
      /"travel": card_url: must not have a #fragment/,
    ],
    ['a bad rpc_url', oneEntry('rpc_url: http://rpc.example.com/a2a'), {}, /"travel": rpc_url: must be https/],
    [
      'a missing effect',
      'agents:\n  - name: travel\n    card_url: https://a.example/c\n    description: d\n',
      {},
      /agents\[0\] "travel": effect: is required/,
    ],
    [
      'a bad effect',
      oneEntry().replace('read_only', 'sometimes'),
      {},
      /agents\[0\] "travel": effect: must be read_only or acting/,
    ],
    [
      'a missing description',
      'agents:\n  - name: travel\n    card_url: https://a.example/c\n    effect: acting\n',
      {},
      /agents\[0\] "travel": description: is required/,
    ],
    ['an unknown key', oneEntry('colour: blue'), {}, /agents\[0\] "travel": colour: is not a known setting/],
    [
      'an unknown timeout',
      oneEntry('timeouts: { connect: 1, idle: 3 }'),
      {},
      /"travel": timeouts\.idle: is not a known setting/,
    ],
    ['a zero timeout', oneEntry('timeouts: { connect: 0 }'), {}, /"travel": timeouts\.connect/],
    [
      'connect longer than total',
      oneEntry('timeouts: { connect: 50, total: 10, read: 5 }'),
      {},
      /"travel": timeouts\.connect: is longer than timeouts\.total/,
    ],
    [
      'a poll interval longer than max_wait_s',
      oneEntry('poll_interval_s: 30\nmax_wait_s: 10'),
      {},
      /"travel": poll_interval_s: is longer than max_wait_s/,
    ],
    ['a bad pin', oneEntry('card_sha256: abc'), {}, /"travel": card_sha256/],
    ['a tiny max_response_bytes', oneEntry('max_response_bytes: 10'), {}, /"travel": max_response_bytes/],
    ['a bad name', oneEntry().replace('name: travel', 'name: Travel Desk'), {}, /agents\[0\]: name/],
    [
      'a duplicate name',
      `${oneEntry()}  - name: travel\n    card_url: https://b.example/c\n    description: d\n    effect: acting\n`,
      {},
      /agents\[1\] "travel": name: is used by an earlier entry/,
    ],
    ['an unknown top-level key', `${oneEntry()}extra: 1\n`, {}, /registry: extra: is not a known setting/],
    ['a duplicate key', oneEntry('effect: acting'), {}, /registry: inline: /],
    ['a list at the top level', '- a\n', {}, /expected a mapping/],
  ];
  for (const [name, text, env, expected] of cases) {
    it(`refuses ${name}`, () => {
      assert.match(refusal(text, env).message, expected);
    });
  }

  it('accepts a private host inside the list (IP, CIDR, IPv6)', () => {
    const env = { AIRLOCK_PRIVATE_ALLOW: '10.1.0.0/16, 192.168.7.7,fd00::/8' };
    for (const url of [
      'https://10.1.2.3/c',
      'https://192.168.7.7/c',
      'https://[fd00::5]/c',
      'https://corp.internal/c',
    ]) {
      assert.doesNotThrow(() => parseRegistry(oneEntry('private_network: true', url), env), url);
    }
    assert.deepEqual(parseRegistry(oneEntry(), env).network.privateAllow, ['10.1.0.0/16', '192.168.7.7', 'fd00::/8']);
  });

  it('never echoes URL credentials', () => {
    const error = refusal(oneEntry('', 'https://bob:hunter2pass@travel.example.com/card'));
    assert.match(error.message, /"travel": card_url: must not carry credentials/);
    assert.ok(!error.message.includes('hunter2pass'));
    assert.ok(!error.message.includes('bob'));
  });

  it('never echoes a secret value', () => {
    const error = refusal(oneEntry('auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }'), {
      AIRLOCK_SECRET_TRAVEL: 'has space-0123456789',
    });
    assert.ok(!error.message.includes('0123456789'));
  });
});

describe('registry: AIRLOCK_EGRESS_PROXY', () => {
  it('masks credentials in the error', () => {
    for (const value of [
      'https://user:hunter2pass@proxy.internal:3128',
      'http://user:hunter2pass@proxy.internal:3128/path',
      'http://us/er:hun@ter2pass@proxy.internal:3128/x',
      'user:hunter2pass@proxy.internal:3128',
      'bob:hunter2pass@proxy.internal',
    ]) {
      const error = refusal(oneEntry(), { AIRLOCK_EGRESS_PROXY: value });
      assert.match(error.message, /AIRLOCK_EGRESS_PROXY/);
      assert.ok(!error.message.includes('hunter2pass') && !error.message.includes('ter2pass'), error.message);
      assert.ok(!error.message.includes('user'), error.message);
    }
  });

  it('refuses a path, a query and other schemes', () => {
    assert.match(
      refusal(oneEntry(), { AIRLOCK_EGRESS_PROXY: 'socks5://p:1080' }).message,
      /must be http:\/\/host:port/,
    );
    assert.match(
      refusal(oneEntry(), { AIRLOCK_EGRESS_PROXY: 'http://p:3128/?a=1' }).message,
      /must be http:\/\/host:port with no path, query or fragment/,
    );
    assert.match(refusal(oneEntry(), { AIRLOCK_EGRESS_PROXY: 'not a url' }).message, /is not a URL/);
  });

  it('parses a good value, keeping credentials private', () => {
    const registry = parseRegistry(oneEntry(), { AIRLOCK_EGRESS_PROXY: 'http://u:hunter2pass@proxy.internal:3128' });
    const proxy = registry.network.egressProxy;
    assert.equal(proxy?.url, 'http://proxy.internal:3128');
    assert.equal(proxy?.host, 'proxy.internal');
    assert.equal(proxy?.port, 3128);
    assert.equal(proxy?.proxyAuthorization(), `Basic ${Buffer.from('u:hunter2pass').toString('base64')}`);
    assert.ok(!JSON.stringify(registry).includes('hunter2pass'));
    assert.ok(!inspect(registry, { depth: 10 }).includes('hunter2pass'));
    assert.equal(parseRegistry(oneEntry(), {}).network.egressProxy, undefined);
  });
});
