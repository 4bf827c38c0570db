import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeAnyCard } from '../protocol/card.js';
import { cardTrustDigest, trustFieldsOf } from './digest.js';

const TOKEN = 'https://idp.example/oauth2/token';

/** A v1.0 card whose `oauth` scheme has the given body. */
function card(schemes: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'N',
    description: 'D',
    supportedInterfaces: [{ url: 'https://a.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    securitySchemes: schemes,
    securityRequirements: [{ schemes: { oauth: { list: ['a2a.send'] } } }],
  };
}

const oauth = (tokenUrl: string, scopes: Record<string, string> = { 'a2a.send': 'Send' }, extra = {}) => ({
  oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl, scopes } }, ...extra } },
});

const digestOf = (value: Record<string, unknown>): string => cardTrustDigest(decodeAnyCard(value));

describe('trust digest: OAuth 2.0, OpenID Connect and mutual TLS schemes are pinned', () => {
  const base = digestOf(card(oauth(TOKEN)));

  it('holds the token URL and scope names in the trust fields', () => {
    assert.deepEqual(trustFieldsOf(decodeAnyCard(card(oauth(TOKEN)))).securitySchemes, {
      oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: TOKEN, scopes: ['a2a.send'] } } },
    });
  });

  it('changes when the token URL, a scope, the metadata URL or the flow changes', () => {
    const changed = [
      card(oauth('https://evil.example/oauth2/token')),
      card(oauth(TOKEN, { 'a2a.send': 'Send', admin: 'Everything' })),
      card(
        oauth(TOKEN, undefined, { oauth2MetadataUrl: 'https://evil.example/.well-known/oauth-authorization-server' }),
      ),
      card({
        oauth: {
          oauth2SecurityScheme: {
            flows: { authorizationCode: { authorizationUrl: TOKEN, tokenUrl: TOKEN, scopes: { 'a2a.send': '' } } },
          },
        },
      }),
      card({
        oauth: {
          openIdConnectSecurityScheme: { openIdConnectUrl: 'https://idp.example/.well-known/openid-configuration' },
        },
      }),
      card({ ...oauth(TOKEN), mtls: { mtlsSecurityScheme: {} } }),
    ];
    for (const value of changed) assert.notEqual(digestOf(value), base);
  });

  it('does not change with a scope description (not a trust field), and is the same in the v0.3 shape', () => {
    assert.equal(digestOf(card(oauth(TOKEN, { 'a2a.send': 'Reworded' }))), base);
    const legacy = {
      name: 'N',
      url: 'https://a.example/rpc',
      securitySchemes: {
        oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: TOKEN, scopes: { 'a2a.send': 'Send' } } } },
      },
      security: [{ oauth: ['a2a.send'] }],
    };
    // v0.3 interfaces are at version 0.3: compare the schemes part only.
    assert.deepEqual(
      trustFieldsOf(decodeAnyCard(legacy)).securitySchemes,
      trustFieldsOf(decodeAnyCard(card(oauth(TOKEN)))).securitySchemes,
    );
  });
});
