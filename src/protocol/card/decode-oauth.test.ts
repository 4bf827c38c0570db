import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { A2AError } from '../errors.js';
import type { AgentCard } from '../model.js';
import { decodeAnyCard, MAX_SCHEMES } from './decode.js';
import { MAX_SCOPES, MAX_SCOPE_NAME } from './decode-oauth.js';
import { encodeCardV03, encodeCardV10 } from './encode.js';

const TOKEN = 'https://idp.example/oauth2/token';

function v10(schemes: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'N',
    supportedInterfaces: [{ url: 'https://a.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    securitySchemes: schemes,
    securityRequirements: [{ schemes: { oauth: { list: ['a2a.send'] } } }],
  };
}

function v03(schemes: Record<string, unknown>): Record<string, unknown> {
  return { name: 'N', url: 'https://a.example/rpc', securitySchemes: schemes, security: [{ oauth: ['a2a.send'] }] };
}

const EXPECTED: AgentCard['securitySchemes'] = {
  oauth: {
    type: 'oauth2',
    flows: {
      clientCredentials: { tokenUrl: TOKEN, refreshUrl: `${TOKEN}/refresh`, scopes: ['a2a.send', 'a2a.read'] },
      authorizationCode: { authorizationUrl: 'https://idp.example/authorize', tokenUrl: TOKEN, scopes: [] },
    },
    metadataUrl: 'https://idp.example/.well-known/oauth-authorization-server',
    description: 'OAuth',
  },
  oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://idp.example/.well-known/openid-configuration' },
  mtls: { type: 'mutualTLS', description: 'client certificates' },
};

const OAUTH_BODY = {
  flows: {
    clientCredentials: {
      tokenUrl: TOKEN,
      refreshUrl: `${TOKEN}/refresh`,
      scopes: { 'a2a.send': 'Send', 'a2a.read': 'Read' },
    },
    authorizationCode: { authorizationUrl: 'https://idp.example/authorize', tokenUrl: TOKEN, scopes: {} },
    futureFlow: { tokenUrl: 'https://elsewhere.example/token', scopes: {} },
  },
  oauth2MetadataUrl: 'https://idp.example/.well-known/oauth-authorization-server',
  description: 'OAuth',
};

function refused(value: unknown, pattern: RegExp): void {
  assert.throws(
    () => decodeAnyCard(value),
    (error: unknown) => error instanceof A2AError && pattern.test(error.message),
  );
}

describe('card decoder: OAuth 2.0, OpenID Connect and mutual TLS schemes', () => {
  it('keeps them from a v1.0 card, with URLs and scope names (unknown flows skipped)', () => {
    const card = decodeAnyCard(
      v10({
        oauth: { oauth2SecurityScheme: OAUTH_BODY },
        oidc: {
          openIdConnectSecurityScheme: {
            openIdConnectUrl: 'https://idp.example/.well-known/openid-configuration',
          },
        },
        mtls: { mtlsSecurityScheme: { description: 'client certificates' } },
        basic: { httpAuthSecurityScheme: { scheme: 'Basic' } },
      }),
    );
    assert.deepEqual(card.securitySchemes, EXPECTED);
  });

  it('keeps them from a v0.3 card alike', () => {
    const card = decodeAnyCard(
      v03({
        oauth: { type: 'oauth2', ...OAUTH_BODY },
        oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://idp.example/.well-known/openid-configuration' },
        mtls: { type: 'mutualTLS', description: 'client certificates' },
      }),
    );
    assert.deepEqual(card.securitySchemes, EXPECTED);
  });

  it('round-trips through both encoders', () => {
    const card = decodeAnyCard(v10({ oauth: { oauth2SecurityScheme: OAUTH_BODY } }));
    assert.deepEqual(decodeAnyCard(encodeCardV10(card)).securitySchemes, card.securitySchemes);
    assert.deepEqual(decodeAnyCard(encodeCardV03(card)).securitySchemes, card.securitySchemes);
  });

  it('refuses a card over a bound rather than cut it', () => {
    const scopes = Object.fromEntries(Array.from({ length: MAX_SCOPES + 1 }, (_, i) => [`s${i}`, '']));
    refused(
      v10({ oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: TOKEN, scopes } } } } }),
      /more than 100 scopes/,
    );
    const long = { ['x'.repeat(MAX_SCOPE_NAME + 1)]: '' };
    refused(
      v10({ oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: TOKEN, scopes: long } } } } }),
      /scope name/,
    );
    refused(
      v10({
        oauth: {
          oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `https://a.example/${'p'.repeat(9000)}` } } },
        },
      }),
      /tokenUrl/,
    );
    const many = Object.fromEntries(
      Array.from({ length: MAX_SCHEMES + 1 }, (_, i) => [`m${i}`, { mtlsSecurityScheme: {} }]),
    );
    refused(v10(many), /more than 64 schemes/);
  });

  it('refuses a malformed scheme: flows not an object, an OpenID Connect scheme without its URL', () => {
    refused(v10({ oauth: { oauth2SecurityScheme: { flows: 'client' } } }), /flows/);
    refused(v10({ oidc: { openIdConnectSecurityScheme: {} } }), /openIdConnectUrl/);
    refused(v03({ oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 7 } } } }), /tokenUrl/);
  });
});
