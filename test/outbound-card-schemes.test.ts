/**
 * `from_card` against the card's own OAuth scheme, end to end (issue 22, point 2): a remote card
 * served by a loopback server declares an `oauth2` scheme whose client credentials flow names a
 * token URL. Airlock's outbound client, with its real card trust and pin file, gets tokens from a
 * real authorization server (`oidc-provider`) and calls an `@a2a-js/sdk` server that verifies them.
 *
 * Checked: the card's token URL on the entry's token endpoint origin works; a card that moves its
 * token URL is a pin drift (the scheme is a trust field); a card naming another origin is refused
 * before any token request (in the v1.0 and the v0.3 shape), as is one whose scheme asks for a
 * user's sign-in that a client credentials entry cannot supply.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createOutboundClient, type CallResult, type OutboundRuntime } from '../src/client/index.js';
import {
  CLIENT_SECRET,
  peerCardJson,
  startAuthServer,
  startPeer,
  type AuthServer,
  type Peer,
} from './helpers/oauth-server.js';

const FOREIGN_TOKEN_URL = 'https://idp.elsewhere.test/oauth2/token';

describe('from_card: the card names its token endpoint; the entry decides which origins it may be on', () => {
  let peer: Peer;
  let as: AuthServer;
  let dir: string;
  let client: OutboundRuntime;

  const entry = (name: string) => `  - name: ${name}
    card_url: \${BASE}/cards/custom.json
    description: OAuth peer (${name}).
    effect: read_only
    card_refresh_s: 1
    max_wait_s: 5
    timeouts: { connect: 2, read: 3, total: 5 }
    auth:
      from_card: true
      card_scheme: oauth
      oauth2_client_credentials:
        token_endpoint: \${TOKEN}
        client_id: airlock
        client_secret_env: AIRLOCK_SECRET_CLIENT
        scopes: [a2a.send]
        resource: \${BASE}/
`;

  const send = (agent: string): Promise<CallResult> => client.send({ agent, message: 'hello' });

  before(async () => {
    peer = await startPeer();
    as = await startAuthServer({ resource: `${peer.base}/` });
    peer.setKeys(as.jwks, as.issuer);
    dir = mkdtempSync(join(tmpdir(), 'airlock-card-schemes-'));
    const registryPath = join(dir, 'registry.yaml');
    const yaml = `agents:\n${['by-card', 'fresh', 'user-flow', 'legacy'].map(entry).join('')}`;
    writeFileSync(registryPath, yaml.replaceAll('${BASE}', peer.base).replaceAll('${TOKEN}', as.tokenEndpoint));
    client = createOutboundClient({
      registryPath,
      env: {
        AIRLOCK_SECRET_CLIENT: CLIENT_SECRET,
        AIRLOCK_PINS: join(dir, 'pins.json'),
        AIRLOCK_AUDIT_FILE: join(dir, 'audit.jsonl'),
      },
    });
  });

  after(async () => {
    await client?.close();
    await Promise.all([peer?.close(), as?.close()]);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("a card naming the entry's token endpoint: a token with the card's scopes", async () => {
    peer.customCard = peerCardJson(peer.base, [{ oauth: ['a2a.send'] }], as.tokenEndpoint);
    const result = await send('by-card');
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.equal(peer.calls.at(-1)!.scope, 'a2a.send');
  });

  it('a card that moves its token URL is a pin drift: the entry is disabled', async () => {
    peer.customCard = peerCardJson(peer.base, [{ oauth: ['a2a.send'] }], FOREIGN_TOKEN_URL);
    await new Promise((done) => setTimeout(done, 1100));
    const result = await send('by-card');
    assert.equal(result.error_type, 'card_pin_mismatch', JSON.stringify(result));
  });

  it('a card naming a token URL on another origin is refused before any token request', async () => {
    const grants = as.grants.length;
    const calls = peer.calls.length + peer.refused;
    const result = await send('fresh');
    assert.equal(result.error_type, 'origin_mismatch', JSON.stringify(result));
    assert.match(result.error_message ?? '', /"oauth" names a token URL outside the entry's token endpoint origin/);
    assert.equal(as.grants.length, grants, 'no token was asked for');
    assert.equal(peer.calls.length + peer.refused, calls, 'the remote was not called');
  });

  it("a scheme asking for a user's sign-in cannot be supplied by a client credentials entry", async () => {
    peer.customCard = peerCardJson(peer.base, [{ oauth: ['a2a.send'] }], as.tokenEndpoint, {
      oauth: {
        oauth2SecurityScheme: {
          flows: {
            authorizationCode: {
              authorizationUrl: `${as.issuer}/auth`,
              tokenUrl: as.tokenEndpoint,
              scopes: { 'a2a.send': '' },
            },
          },
        },
      },
    });
    const grants = as.grants.length;
    const result = await send('user-flow');
    assert.equal(result.error_type, 'card_invalid', JSON.stringify(result));
    assert.match(result.error_message ?? '', /"oauth" declares no client credentials flow/);
    assert.equal(as.grants.length, grants);
  });

  it('a v0.3 card: its oauth2 scheme is read and checked alike', async () => {
    peer.customCard = {
      name: 'OAuth peer',
      description: 'A v0.3 card.',
      version: '1.0.0',
      url: `${peer.base}/a2a/jsonrpc`,
      protocolVersion: '0.3.0',
      capabilities: { streaming: false },
      securitySchemes: {
        oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: FOREIGN_TOKEN_URL, scopes: {} } } },
      },
      security: [{ oauth: ['a2a.send'] }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [],
    };
    const result = await send('legacy');
    assert.equal(result.error_type, 'origin_mismatch', JSON.stringify(result));
  });
});
