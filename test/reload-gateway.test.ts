/**
 * Reload in a gateway built in code (`gateway.reload`): the parts a reload swaps, each checked
 * over loopback HTTP. A JWT key rotation refuses tokens signed with the old key at once; the
 * in-flight cap is resized with the running turn's slot still counted; a message limit applies
 * to the next message; a limiter whose limit did not change keeps its window.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { parseConfig } from '../src/config/load.js';
import { DEFAULT_YAML, TOKEN_A, TOKEN_B, TOKEN_C, rpc, startGateway, type TestGateway } from './helpers/gateway.js';

const v1 = (token: string) => ({ token, version: '1.0' }) as const;
const ISSUER = 'https://idp.example';

function message(parts = 1): unknown {
  return {
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: Array.from({ length: parts }, (_, index) => ({ text: `part ${index}` })),
  };
}

describe('gateway.reload', () => {
  let dir: string;
  let keys: { k1: CryptoKey; k2: CryptoKey };
  let files: { k1: string; k2: string };
  let gw: TestGateway;
  const yaml = (keyFile: string, limits: string): string =>
    `${DEFAULT_YAML.replace('chunkDelayMs: 5', 'chunkDelayMs: 150')}
limits: { authFailuresPerMinute: 1000, ${limits} }
metrics: { port: 0 }
auth:
  jwt: { issuer: '${ISSUER}', audience: airlock, algorithms: [ES256], jwksFile: '${keyFile}' }
`;
  const load = (text: string) => parseConfig(text, { TOKEN_A, TOKEN_B, TOKEN_C });
  const mint = (key: CryptoKey, kid: string): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: ISSUER, aud: 'airlock', sub: 'svc', iat: now, exp: now + 300, scope: 'a2a:echo' })
      .setProtectedHeader({ alg: 'ES256', kid })
      .sign(key);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-reload-gw-'));
    const one = await generateKeyPair('ES256');
    const two = await generateKeyPair('ES256');
    keys = { k1: one.privateKey, k2: two.privateKey };
    files = { k1: join(dir, 'k1.json'), k2: join(dir, 'k2.json') };
    writeFileSync(files.k1, JSON.stringify({ keys: [{ ...(await exportJWK(one.publicKey)), kid: 'k1' }] }));
    writeFileSync(files.k2, JSON.stringify({ keys: [{ ...(await exportJWK(two.publicKey)), kid: 'k2' }] }));
    gw = await startGateway(yaml(files.k1, 'requestsPerMinute: 3, maxConcurrentTasksPerPrincipal: 4'));
  });
  after(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('JWT keys rotated: the old key is refused at once, the new one admitted', async () => {
    const echo = `${gw.url}/a2a/echo`;
    const old = await mint(keys.k1, 'k1');
    assert.equal((await rpc(echo, 'GetTask', { id: 'x' }, v1(old))).status, 200);
    const outcome = gw.gateway.reload(() =>
      load(yaml(files.k2, 'requestsPerMinute: 3, maxConcurrentTasksPerPrincipal: 4')),
    );
    assert.deepEqual(outcome, { outcome: 'applied', changed: ['auth.jwt.keys.jwks.keys'] });
    assert.equal((await rpc(echo, 'GetTask', { id: 'x' }, v1(old))).status, 401, 'a token of the removed key');
    assert.equal((await rpc(echo, 'GetTask', { id: 'x' }, v1(await mint(keys.k2, 'k2')))).status, 200);
  });

  it('the in-flight cap shrinks with the running turn counted; maxParts applies; an unchanged rate keeps its window', async () => {
    const writer = `${gw.url}/a2a/writer`;
    const echo = `${gw.url}/a2a/echo`;
    // Client c: two of its three requests a minute, before the reload.
    assert.equal((await rpc(echo, 'GetTask', { id: 'x' }, v1(TOKEN_C))).status, 200);
    assert.equal((await rpc(echo, 'GetTask', { id: 'x' }, v1(TOKEN_C))).status, 200);
    const running = await rpc(
      writer,
      'SendMessage',
      { message: message(), configuration: { returnImmediately: true } },
      v1(TOKEN_B),
    );
    assert.equal(typeof running.body.result?.task?.id, 'string', JSON.stringify(running.body));

    const outcome = gw.gateway.reload(() =>
      load(yaml(files.k2, 'requestsPerMinute: 3, maxConcurrentTasksPerPrincipal: 1, maxParts: 1')),
    );
    assert.deepEqual(outcome, {
      outcome: 'applied',
      changed: ['limits.maxConcurrentTasksPerPrincipal', 'limits.maxParts'],
    });
    // b's running turn holds its one slot: a second turn of b is refused, a's is not.
    const second = await rpc(writer, 'SendMessage', { message: message() }, v1(TOKEN_B));
    assert.match(JSON.stringify(second.body), /concurren|capacity|busy|Too many/i, JSON.stringify(second.body));
    assert.equal(second.body.result, undefined);
    const other = await rpc(echo, 'SendMessage', { message: message() }, v1(TOKEN_A));
    assert.ok(other.body.result !== undefined, JSON.stringify(other.body));
    // Two parts: over the new maxParts.
    const parts = await rpc(echo, 'SendMessage', { message: message(2) }, v1(TOKEN_A));
    assert.equal(parts.body.result, undefined, JSON.stringify(parts.body));
    // c's rate window survived (the limit did not change): one request left, then 429.
    assert.equal((await rpc(echo, 'GetTask', { id: 'x' }, v1(TOKEN_C))).status, 200);
    assert.equal((await rpc(echo, 'GetTask', { id: 'x' }, v1(TOKEN_C))).status, 429);
  });

  it('every outcome is counted in airlock_config_reloads_total', async () => {
    const refused = gw.gateway.reload(() =>
      load(
        yaml(files.k2, 'requestsPerMinute: 3, maxConcurrentTasksPerPrincipal: 1, maxParts: 1').replace(
          'defaultAgent: echo }',
          'defaultAgent: echo, drainSeconds: 7 }',
        ),
      ),
    );
    assert.equal(refused.outcome, 'refused');
    const url = gw.gateway.metrics?.url;
    assert.ok(url !== undefined, 'the metrics listener is up');
    const text = await (await fetch(url)).text();
    assert.match(text, /airlock_config_reloads_total\{outcome="applied",reason="none"\} 2/);
    assert.match(text, /airlock_config_reloads_total\{outcome="refused",reason="needs_restart"\} 1/);
  });
});
