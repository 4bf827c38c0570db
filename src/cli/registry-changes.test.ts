import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CardTrustFields } from '../trust/index.js';
import { changeLines, shown, trustChanges } from './registry-changes.js';

const OLD = 'a'.repeat(64);
const NEW = 'b'.repeat(64);

function fields(change: Partial<CardTrustFields> = {}): CardTrustFields {
  return {
    interfaces: [{ url: 'https://t.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    securityRequirements: [{ bearer: [] }],
    skills: [{ id: 'book', name: 'Book', description: 'Books trains.', tags: ['travel'] }],
    ...change,
  };
}

describe('registry pin: what changed in the trust fields', () => {
  it('names each changed field, old → new, and nothing else', () => {
    const changes = trustChanges(
      { digest: OLD, fields: fields(), signature: { kid: 'k1', alg: 'ES256' } },
      {
        digest: NEW,
        fields: fields({
          interfaces: [{ url: 'https://t.example/v2', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
          securitySchemes: { bearer: { type: 'apiKey', location: 'header', name: 'X-Key' } },
          skills: [
            { id: 'book', name: 'Book', description: 'Books trains and hotels.', tags: ['travel'] },
            { id: 'pay', name: 'Pay', description: 'Pays.', tags: [] },
          ],
        }),
        signature: { kid: 'k2', alg: 'ES256' },
      },
    );
    assert.deepEqual(changes, [
      { field: 'digest', old: OLD, new: NEW },
      {
        field: 'interface[0]',
        old: 'https://t.example/a2a (JSONRPC 1.0)',
        new: 'https://t.example/v2 (JSONRPC 1.0)',
      },
      { field: 'security scheme "bearer"', old: 'http "bearer"', new: 'apiKey in "header" "X-Key"' },
      { field: 'skill "book" description', old: '"Books trains."', new: '"Books trains and hotels."' },
      { field: 'skill "pay"', old: '(none)', new: '"Pay", tags []' },
      { field: 'signed by', old: 'kid "k1" (ES256)', new: 'kid "k2" (ES256)' },
    ]);
  });

  it('compares only the digest when the pinned fields were not recorded', () => {
    const changes = trustChanges({ digest: OLD, signature: null }, { digest: NEW, fields: fields(), signature: null });
    assert.deepEqual(changes, [{ field: 'digest', old: OLD, new: NEW }]);
  });

  it('prints a change on one line when it fits, else the new value under the old', () => {
    const lines = changeLines(
      [
        { field: 'digest', old: OLD, new: NEW },
        { field: 'skill "pay"', old: '(none)', new: '"Pay", tags []' },
      ],
      80,
    );
    assert.deepEqual(lines, [
      `  digest       ${OLD}`,
      `            →  ${NEW}`,
      '  skill "pay"  (none) → "Pay", tags []',
    ]);
    for (const line of lines) assert.ok(line.length <= 80, line);
  });

  it("shows the remote's text quoted, on one line, without control or direction characters", () => {
    assert.equal(shown('Book\u202etrains\n\u001b[2J'), '"Book?trains??[2J"');
    assert.equal(shown('x'.repeat(70)), `"${'x'.repeat(60)}…"`);
  });
});

describe('registry pin: an OAuth scheme that moves its token URL', () => {
  it('shows the old and the new token URL, and the other scheme kinds by their URL', () => {
    const oauth = (tokenUrl: string): CardTrustFields['securitySchemes'] => ({
      oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl, scopes: ['a2a.send'] } } },
      oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://idp.example/.well-known/openid-configuration' },
      mtls: { type: 'mutualTLS' },
    });
    const changes = trustChanges(
      { digest: OLD, fields: fields({ securitySchemes: oauth('https://idp.example/token') }), signature: null },
      { digest: NEW, fields: fields({ securitySchemes: oauth('https://evil.example/token') }), signature: null },
    );
    assert.deepEqual(changes, [
      { field: 'digest', old: OLD, new: NEW },
      {
        field: 'security scheme "oauth"',
        old: 'oauth2 clientCredentials token "https://idp.example/token" scopes "a2a.send"',
        new: 'oauth2 clientCredentials token "https://evil.example/token" scopes "a2a.send"',
      },
    ]);
  });
});
