import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from './errors.js';
import { parseConfig } from './load.js';

const AGENT = `agents:
  - { slug: a, name: A, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
`;
const LONG = 'x'.repeat(40);

function refuses(yaml: string, key: RegExp, env: Record<string, string> = {}): void {
  assert.throws(
    () => parseConfig(yaml, env),
    (error: unknown) => error instanceof ConfigError && key.test(error.message),
  );
}

describe('parseConfig', () => {
  it('accepts a minimal file and fills the defaults (loopback, port 41241, memory store)', () => {
    const config = parseConfig(AGENT, {});
    assert.equal(config.server.host, '127.0.0.1');
    assert.equal(config.server.port, 41241);
    assert.equal(config.store.type, 'memory');
    assert.deepEqual(config.clients, []);
  });

  it('refuses scrub secrets shorter than 8 characters (inline or from the environment), and a missing variable', () => {
    refuses(`${AGENT}content: { scrubSecrets: ['short'] }`, /content\.scrubSecrets\[0\]/);
    refuses(`${AGENT}content: { scrubSecrets: [{ env: S }] }`, /content\.scrubSecrets\[0\].*shorter than 8/, {
      S: 'abc',
    });
    refuses(`${AGENT}content: { scrubSecrets: [{ env: S }] }`, /content\.scrubSecrets\[0\].*not set/);
    const config = parseConfig(`${AGENT}content: { scrubSecrets: ['\${K}', { env: S }] }`, {
      K: 'sk-inline-secret-1',
      S: 'sk-env-secret-2',
    });
    assert.deepEqual(config.scrubSecrets, ['sk-inline-secret-1', 'sk-env-secret-2']);
  });

  it('refuses allowTools without an allow list, and a trusted proxy that is not an address or range', () => {
    refuses(AGENT.replace('backend: { type: echo } }', 'backend: { type: echo }, allowTools: true }'), /tools\.allow/);
    refuses(`${AGENT}server: { trustedProxies: ['10.0.0.0/33'] }`, /server\.trustedProxies\[0\]/);
    refuses(`${AGENT}auth: { jwt: { issuer: i, audience: a } }`, /auth\.jwt.*exactly one of jwksFile or publicKeyFile/);
  });

  it('server.allowedOrigins: none by default; origins normalized as browsers send them; a path or a bare host refused', () => {
    assert.deepEqual(parseConfig(AGENT, {}).server.allowedOrigins, []);
    const config = parseConfig(
      `${AGENT}server: { allowedOrigins: ['http://LocalHost:80', 'https://app.example:8443'] }`,
      {},
    );
    assert.deepEqual(config.server.allowedOrigins, ['http://localhost', 'https://app.example:8443']);
    refuses(`${AGENT}server: { allowedOrigins: ['https://app.example/path'] }`, /server\.allowedOrigins\/?\[?0/);
    refuses(`${AGENT}server: { allowedOrigins: ['app.example'] }`, /server\.allowedOrigins/);
    refuses(`${AGENT}server: { allowedOrigins: ['https://user@app.example'] }`, /server\.allowedOrigins/);
  });

  it('refuses a token shorter than 32 characters', () => {
    refuses(`${AGENT}clients: [{ id: c, token: "\${T}", agents: [a] }]`, /clients\[0\]\.token.*at least 32/, {
      T: 'short-token',
    });
  });

  it('refuses two clients that share a token', () => {
    refuses(
      `${AGENT}clients:\n  - { id: c, token: "\${T}", agents: [a] }\n  - { id: d, token: "\${T}", agents: [a] }`,
      /clients\[1\]\.token.*share a token/,
      { T: LONG },
    );
  });

  it('refuses a client for an unknown agent, a duplicate slug, an unknown setting, a missing variable', () => {
    refuses(`${AGENT}clients: [{ id: c, token: "${LONG}", agents: [b] }]`, /clients\[0\]\.agents\[0\]/);
    refuses(
      `${AGENT}  - { slug: a, name: B, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }`,
      /agents\[1\]\.slug/,
    );
    refuses(`${AGENT}server: { prot: 1 }`, /server\.prot: is not a known setting/);
    refuses(`${AGENT}clients: [{ id: c, token: "\${NOPE}", agents: [a] }]`, /NOPE is not set/);
  });

  it('refuses duplicate keys and never expands a variable into structure', () => {
    refuses(`${AGENT}server: {}\nserver: {}`, /unique/);
    const config = parseConfig(`${AGENT}server: { publicUrl: "\${U}" }`, { U: 'https://x.example' });
    assert.equal(config.server.publicUrl, 'https://x.example');
    refuses(`${AGENT}server: { publicUrl: "\${U}" }`, /server\.publicUrl/, { U: 'https://x.example\nport: 1' });
  });

  it('generates a missing token file with mode 0600 and reads it back next time', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-token-'));
    const file = join(dir, 'nested', 'token');
    const yaml = `${AGENT}clients: [{ id: c, token: { env: NOT_SET_HERE, file: "${file}", generate: true }, agents: [a] }]`;
    const first = parseConfig(yaml, {});
    assert.ok(existsSync(file));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(readFileSync(file, 'utf8').trim().length >= 32);
    const second = parseConfig(yaml, {});
    assert.deepEqual(second.clients[0]?.tokenDigest, first.clients[0]?.tokenDigest);
  });

  it('approvals: owners and acting levels need the section; people need their own tokens; owners must exist', () => {
    const client = (extra: string): string =>
      `${AGENT}clients:\n  - { id: bot, token: "${LONG}", agents: [a]${extra} }\n`;
    refuses(client(', owner: alice'), /clients\[0\]\.owner.*approvals section/);
    refuses(
      AGENT.replace('backend: { type: echo } }', 'backend: { type: echo }, actions: { maxLevel: L3 } }'),
      /agents\[0\]\.actions\.maxLevel.*approvals section/,
    );
    refuses(`${client(', owner: alice')}approvals: { people: [] }\n`, /clients\[0\]\.owner.*no person.*alice/);
    refuses(
      `${client('')}approvals: { people: [{ id: alice, token: "${LONG}" }] }\n`,
      /approvals\.people\[0\]\.token.*client's token/,
    );
    refuses(
      `${client('')}approvals: { people: [{ id: alice, token: "${'y'.repeat(40)}" }, { id: bob, token: "${'y'.repeat(40)}" }] }\n`,
      /approvals\.people\[1\]\.token.*share a token/,
    );
    refuses(`${client('')}approvals: { serviceMaxLevel: L3 }\n`, /approvals\.serviceMaxLevel/);
    const config = parseConfig(
      `${client(', owner: alice')}approvals: { ttlMinutes: 5, console: true, people: [{ id: alice, token: "${'z'.repeat(40)}" }] }\n`,
      {},
    );
    assert.equal(config.approvals?.ttlMs, 300_000);
    assert.equal(config.approvals?.console, true);
    assert.equal(config.approvals?.serviceMaxLevel, 'L2');
    assert.equal(config.clients[0]?.owner, 'alice');
    assert.equal(config.approvals?.people[0]?.id, 'alice');
    assert.ok(!JSON.stringify(config.approvals).includes('z'.repeat(40)), 'only the digest is kept');
  });
});

describe('fair shares (issue 16)', () => {
  it('limits.maxStreams 1000 and maxStreamsPerPrincipal 16 by default; set values taken; bounds enforced', () => {
    const config = parseConfig(AGENT, {});
    assert.equal(config.limits.maxStreams, 1000);
    assert.equal(config.limits.maxStreamsPerPrincipal, 16);
    const set = parseConfig(`${AGENT}limits: { maxStreams: 50, maxStreamsPerPrincipal: 4 }\n`, {});
    assert.deepEqual([set.limits.maxStreams, set.limits.maxStreamsPerPrincipal], [50, 4]);
    for (const bad of [
      'limits: { maxStreams: 0 }',
      'limits: { maxStreamsPerPrincipal: 0 }',
      'limits: { maxStreams: 2000000 }',
    ]) {
      assert.throws(() => parseConfig(`${AGENT}${bad}\n`, {}), ConfigError, bad);
    }
  });

  it('limits.maxTasksPerPrincipal 1000, maxParkedTasksPerPrincipal 100, approvals.maxPendingPerPrincipal 100 by default; memory store maxBytes and parkedTtlMinutes taken, bounds enforced', () => {
    const config = parseConfig(AGENT, {});
    assert.equal(config.limits.maxTasksPerPrincipal, 1000);
    assert.equal(config.limits.maxParkedTasksPerPrincipal, 100);
    const set = parseConfig(
      `${AGENT}limits: { maxTasksPerPrincipal: 7, maxParkedTasksPerPrincipal: 3 }\nstore: { type: memory, maxBytes: 2097152, parkedTtlMinutes: 5 }\n`,
      {},
    );
    assert.equal(set.limits.maxTasksPerPrincipal, 7);
    assert.equal(set.limits.maxParkedTasksPerPrincipal, 3);
    assert.deepEqual([set.store.type, (set.store as { maxBytes?: number }).maxBytes], ['memory', 2097152]);
    assert.equal((set.store as { parkedTtlMinutes?: number }).parkedTtlMinutes, 5);
    for (const bad of [
      'limits: { maxTasksPerPrincipal: 0 }',
      'limits: { maxParkedTasksPerPrincipal: 0 }',
      'store: { type: memory, maxBytes: 1000 }',
      'store: { type: memory, parkedTtlMinutes: 0 }',
      'store: { type: sqlite, path: x.db, maxBytes: 2097152 }',
    ]) {
      assert.throws(() => parseConfig(`${AGENT}${bad}\n`, {}), ConfigError, bad);
    }
    const approvals = parseConfig(`${AGENT}approvals: { people: [] }\n`, {});
    assert.equal(approvals.approvals?.maxPendingPerPrincipal, 100);
    const capped = parseConfig(`${AGENT}approvals: { maxPendingPerPrincipal: 5 }\n`, {});
    assert.equal(capped.approvals?.maxPendingPerPrincipal, 5);
  });
});
