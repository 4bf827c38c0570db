import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { ConfigError } from './errors.js';
import { parseConfig } from './load.js';

const AGENTS = `agents:
  - { slug: ops, name: Ops, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
`;

describe('approvals.persons (which JWTs are people)', () => {
  let dir: string;
  let jwt: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-persons-config-'));
    const pair = await generateKeyPair('ES256');
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1' }] }));
    jwt = `auth:\n  jwt: { issuer: 'https://idp.example', audience: airlock, algorithms: [ES256], jwksFile: '${file}' }\n`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function refuses(yaml: string, key: RegExp): void {
    assert.throws(
      () => parseConfig(yaml, {}),
      (error: unknown) => error instanceof ConfigError && key.test(error.message),
    );
  }

  it('defaults: the marker scope airlock:person, any client, the issuer of auth.jwt', () => {
    const config = parseConfig(`${AGENTS}${jwt}approvals: {}\n`, {});
    assert.deepEqual(config.approvals?.persons, { issuer: 'https://idp.example', requiredScope: 'airlock:person' });
    // Without JWT auth there is no issuer (only person tokens sign in).
    assert.deepEqual(parseConfig(`${AGENTS}approvals: {}\n`, {}).approvals?.persons, {
      requiredScope: 'airlock:person',
    });
  });

  it('takes a marker scope and the clients people sign in through', () => {
    const config = parseConfig(
      `${AGENTS}${jwt}approvals:\n  persons: { issuer: 'https://idp.example', requiredScope: 'approve:actions', allowedAzp: [console-login] }\n`,
      {},
    );
    assert.deepEqual(config.approvals?.persons, {
      issuer: 'https://idp.example',
      requiredScope: 'approve:actions',
      allowedAzp: ['console-login'],
    });
  });

  it('refuses another issuer, a marker that grants an agent, a marker with spaces, an empty client list', () => {
    refuses(
      `${AGENTS}${jwt}approvals:\n  persons: { issuer: 'https://other.example' }\n`,
      /approvals\.persons\.issuer.*auth\.jwt\.issuer/,
    );
    refuses(
      `${AGENTS}approvals:\n  persons: { issuer: 'https://idp.example' }\n`,
      /approvals\.persons\.issuer.*auth\.jwt/,
    );
    refuses(
      `${AGENTS}${jwt}approvals:\n  persons: { requiredScope: 'a2a:ops' }\n`,
      /requiredScope.*grants agent "ops"/,
    );
    refuses(`${AGENTS}${jwt}approvals:\n  persons: { requiredScope: 'a b' }\n`, /approvals\.persons\.requiredScope/);
    refuses(`${AGENTS}${jwt}approvals:\n  persons: { allowedAzp: [] }\n`, /approvals\.persons\.allowedAzp/);
    refuses(`${AGENTS}${jwt}approvals:\n  persons: { requiredScope: x, extra: 1 }\n`, /approvals\.persons/);
  });
});
