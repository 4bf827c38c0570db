import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { parseConfig, type AirlockConfig } from '../../config/load.js';
import { diffConfigs } from './diff.js';

const TOKENS = { TOKEN_A: 'a'.repeat(40), TOKEN_B: 'b'.repeat(40), TOKEN_C: 'c'.repeat(40), PERSON: 'p'.repeat(40) };
const AGENTS = `agents:
  - { slug: echo, name: Echo, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
  - { slug: two, name: Two, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
`;
const CLIENT_A = `  - { id: a, token: "\${TOKEN_A}", agents: [echo] }\n`;
const CLIENT_B = `  - { id: b, token: "\${TOKEN_B}", agents: [echo, two] }\n`;
const TOOLS = `tools:
  servers:
    - name: files
      stdio: { command: node, args: [server.js] }
      tools: { read_file: { level: L1 }, list_dir: { level: L1 } }
`;

function load(yaml: string): AirlockConfig {
  return parseConfig(yaml, TOKENS);
}

function diff(before: string, after: string, sharedLimits = false): { changed: string[]; restart: string[] } {
  return diffConfigs(load(before), load(after), { sharedLimits });
}

const base = `${AGENTS}clients:\n${CLIENT_A}`;

describe('diffConfigs', () => {
  it('the same file, loaded twice: nothing changed', () => {
    assert.deepEqual(diff(base, base), { changed: [], restart: [] });
    assert.deepEqual(diff(`${base}${TOOLS}`, `${base}${TOOLS}`), { changed: [], restart: [] });
  });

  it('clients added, removed, their tokens and allow lists: live, named by id, never by value', () => {
    const added = diff(base, `${AGENTS}clients:\n${CLIENT_A}${CLIENT_B}`);
    assert.deepEqual(added, { changed: ['clients[b]'], restart: [] });
    assert.deepEqual(diff(`${AGENTS}clients:\n${CLIENT_A}${CLIENT_B}`, `${AGENTS}clients:\n${CLIENT_B}`), {
      changed: ['clients[a]'],
      restart: [],
    });
    assert.deepEqual(diff(base, `${AGENTS}clients:\n  - { id: a, token: "\${TOKEN_C}", agents: [echo] }\n`), {
      changed: ['clients[a].token'],
      restart: [],
    });
    assert.deepEqual(diff(base, `${AGENTS}clients:\n  - { id: a, token: "\${TOKEN_A}", agents: [two, echo] }\n`), {
      changed: ['clients[a].agents'],
      restart: [],
    });
    // Reordering clients or an allow list changes nothing.
    const ab = `${AGENTS}clients:\n${CLIENT_A}${CLIENT_B}`;
    assert.deepEqual(diff(ab, `${AGENTS}clients:\n${CLIENT_B}${CLIENT_A}`).changed, []);
    const text = JSON.stringify(diff(base, `${AGENTS}clients:\n  - { id: a, token: "\${TOKEN_C}", agents: [echo] }\n`));
    assert.ok(!text.includes('c'.repeat(8)) && !text.includes('a'.repeat(8)), 'no token in the diff');
  });

  it('from no client to one, and back', () => {
    assert.deepEqual(diff(AGENTS, `${AGENTS}clients:\n${CLIENT_A}`), { changed: ['clients[a]'], restart: [] });
    assert.deepEqual(diff(`${AGENTS}clients:\n${CLIENT_A}`, AGENTS), { changed: ['clients[a]'], restart: [] });
  });

  it('a client owner (the approvals desk) needs a restart, also on a new client', () => {
    const approvals = `approvals: { people: [{ id: alice, token: "\${PERSON}" }] }\n`;
    const before = `${AGENTS}clients:\n${CLIENT_A}${approvals}`;
    assert.deepEqual(
      diff(
        before,
        `${AGENTS}clients:\n  - { id: a, token: "\${TOKEN_A}", agents: [echo], owner: alice }\n${approvals}`,
      ),
      {
        changed: ['clients[a].owner'],
        restart: ['clients[a].owner'],
      },
    );
    const withOwner = `  - { id: b, token: "\${TOKEN_B}", agents: [echo], owner: alice }\n`;
    assert.deepEqual(diff(before, `${AGENTS}clients:\n${CLIENT_A}${withOwner}${approvals}`), {
      changed: ['clients[b]', 'clients[b].owner'],
      restart: ['clients[b].owner'],
    });
  });

  it('limits: per-request ones live; rate, lockout and in-flight caps live unless shared by replicas', () => {
    const limits = (body: string): string => `${base}limits: { ${body} }\n`;
    for (const key of [
      'maxParts: 3',
      'maxInputChars: 100',
      'maxMetadataBytes: 100',
      'maxMetadataKeys: 3',
      'maxMetadataDepth: 2',
    ]) {
      const name = `limits.${key.split(':')[0] as string}`;
      assert.deepEqual(diff(base, limits(key)), { changed: [name], restart: [] }, key);
      assert.deepEqual(diff(base, limits(key), true), { changed: [name], restart: [] }, key);
    }
    for (const key of [
      'requestsPerMinute: 5',
      'authFailuresPerMinute: 3',
      'maxConcurrentTasks: 2',
      'maxConcurrentTasksPerPrincipal: 1',
    ]) {
      const name = `limits.${key.split(':')[0] as string}`;
      assert.deepEqual(diff(base, limits(key)), { changed: [name], restart: [] }, key);
      assert.deepEqual(diff(base, limits(key), true), { changed: [name], restart: [name] }, key);
    }
    for (const key of [
      'maxHops: 2',
      'maxJsonDepth: 8',
      'maxStreams: 3',
      'maxStreamsPerPrincipal: 1',
      'maxHistoryMessages: 5',
      'maxTaskOutputBytes: 2000',
      'maxTasksPerPrincipal: 5',
    ]) {
      const name = `limits.${key.split(':')[0] as string}`;
      assert.deepEqual(diff(base, limits(key)), { changed: [name], restart: [name] }, key);
    }
  });

  it('server, store, audit, content.scrubSecrets: restart, named', () => {
    const cases: [string, string[]][] = [
      ['server: { port: 9999 }\n', ['server.port']],
      ['server: { host: 127.0.0.2 }\n', ['server.host']],
      ['server: { basePath: /x }\n', ['server.basePath']],
      ['server: { apiKeyHeader: true }\n', ['server.apiKeyHeader']],
      ['server: { port: 9999, drainSeconds: 3 }\n', ['server.drainSeconds', 'server.port']],
      ['store: { type: sqlite, path: /tmp/x.db }\n', ['store.path', 'store.type']],
      ['store: { maxTasks: 5 }\n', ['store.maxTasks']],
      ['audit: { stdout: true }\n', ['audit.stdout']],
      ['content: { scrubSecrets: ["${TOKEN_C}"] }\n', ['content.scrubSecrets']],
    ];
    for (const [extra, keys] of cases) {
      assert.deepEqual(diff(base, `${base}${extra}`), { changed: keys, restart: keys }, extra);
    }
  });

  it('agents: added, removed or changed need a restart; allowTools and tools.allow are live', () => {
    const one = `agents:\n  - { slug: echo, name: Echo, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }\nclients:\n${CLIENT_A}`;
    assert.deepEqual(diff(one, base), { changed: ['agents[two]'], restart: ['agents[two]'] });
    assert.deepEqual(diff(base, one), { changed: ['agents[two]'], restart: ['agents[two]'] });
    assert.deepEqual(diff(base, base.replace('name: Two, description: d', 'name: Two, description: other')), {
      changed: ['agents[two].description'],
      restart: ['agents[two].description'],
    });
    assert.deepEqual(
      diff(
        base,
        base.replace('backend: { type: echo } }\n  - { slug: two', 'backend: { type: writer } }\n  - { slug: two'),
      ).restart,
      ['agents[echo].backend.type'],
    );
    const tools = (allow: string): string =>
      `${AGENTS.replace('backend: { type: echo } }\n  - { slug: two', `backend: { type: echo }, ${allow} }\n  - { slug: two`)}clients:\n${CLIENT_A}${TOOLS}`;
    const without = tools('allowTools: false');
    const read = tools('allowTools: true, tools: { allow: [files.read_file] }');
    const both = tools('allowTools: true, tools: { allow: [files.read_file, files.list_dir] }');
    assert.deepEqual(diff(without, read), { changed: ['agents[echo].allowTools', 'agents[echo].tools'], restart: [] });
    assert.deepEqual(diff(read, both), { changed: ['agents[echo].tools.allow'], restart: [] });
    assert.deepEqual(diff(both, without).restart, []);
    // The tool servers themselves need a restart.
    assert.deepEqual(diff(read, read.replace('list_dir: { level: L1 }', 'list_dir: { level: L2 }')).restart, [
      'tools.servers[files].tools.list_dir.level',
    ]);
  });

  describe('auth.jwt', () => {
    let dir: string;
    let jwt: (issuer: string, audience?: string) => string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'airlock-reload-diff-'));
      const pair = await generateKeyPair('ES256');
      const file = join(dir, 'jwks.json');
      writeFileSync(file, JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1' }] }));
      jwt = (issuer, audience = 'airlock') =>
        `auth:\n  jwt: { issuer: '${issuer}', audience: ${audience}, algorithms: [ES256], jwksFile: '${file}' }\n`;
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('settings change live; adding or removing the section needs a restart', () => {
      assert.deepEqual(diff(`${base}${jwt('https://a')}`, `${base}${jwt('https://a', 'other')}`), {
        changed: ['auth.jwt.audience'],
        restart: [],
      });
      assert.deepEqual(diff(`${base}${jwt('https://a')}`, `${base}${jwt('https://b')}`), {
        changed: ['auth.jwt.issuer'],
        restart: [],
      });
      assert.deepEqual(diff(base, `${base}${jwt('https://a')}`), { changed: ['auth.jwt'], restart: ['auth.jwt'] });
      assert.deepEqual(diff(`${base}${jwt('https://a')}`, base), { changed: ['auth.jwt'], restart: ['auth.jwt'] });
    });

    it('with approvals, the issuer (what marks a person) needs a restart', () => {
      const approvals = 'approvals: {}\n';
      const changed = diff(`${base}${jwt('https://a')}${approvals}`, `${base}${jwt('https://b')}${approvals}`);
      assert.ok(changed.restart.includes('auth.jwt.issuer'), JSON.stringify(changed));
    });
  });
});
