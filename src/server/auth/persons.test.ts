import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { makePrincipal } from '../../identity/principal.js';
import type { JwtVerification } from './jwt.js';
import { isNotAPerson, jwtPersonId, PersonAuthenticator, personUserId } from './persons.js';

const ISSUER = 'https://idp.example';
/** Shaped like a JWT, so the authenticator hands it to the verifier. */
const JWT = `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.e30.sig`;

function verifying(claims: Record<string, unknown>, kind: 'service' | 'delegated' = 'service') {
  const principal = makePrincipal({
    kind,
    clientId: typeof claims.azp === 'string' ? claims.azp : ISSUER,
    subject: String(claims.sub),
    ...(kind === 'delegated' && { actingAgent: 'bot' }),
  });
  return async (): Promise<JwtVerification> => ({ ok: true, principal, grants: new Set(), claims });
}

describe('PersonAuthenticator: JWT people', () => {
  const rule = { issuer: ISSUER, requiredScope: 'airlock:person', allowedAzp: ['console-login'] };

  it('a JWT with the marker scope, through an allowed client, is a person named by issuer and subject', async () => {
    const persons = new PersonAuthenticator(
      [],
      verifying({ sub: 'alice', azp: 'console-login', scope: 'openid airlock:person' }),
      rule,
    );
    assert.deepEqual(await persons.authenticate(JWT), { userId: `jwt:${ISSUER}#alice`, via: 'jwt' });
    const scp = new PersonAuthenticator(
      [],
      verifying({ sub: 'alice', azp: 'console-login', scp: ['airlock:person'] }),
      rule,
    );
    assert.deepEqual(await scp.authenticate(JWT), { userId: `jwt:${ISSUER}#alice`, via: 'jwt' });
  });

  it('a machine token with the same sub is not a person: no marker, or another client', async () => {
    const noMarker = await new PersonAuthenticator(
      [],
      verifying({ sub: 'alice', azp: 'console-login', scope: 'a2a:ops' }),
      rule,
    ).authenticate(JWT);
    assert.ok(isNotAPerson(noMarker));
    assert.deepEqual(noMarker, { notAPerson: true, userId: `jwt:${ISSUER}#alice`, missing: 'person_scope' });
    const otherClient = await new PersonAuthenticator(
      [],
      verifying({ sub: 'alice', azp: 'batch', scope: 'airlock:person' }),
      rule,
    ).authenticate(JWT);
    assert.deepEqual(otherClient, { notAPerson: true, userId: `jwt:${ISSUER}#alice`, missing: 'allowed_azp' });
    // A marker that is only part of an entry is no marker.
    const partial = await new PersonAuthenticator(
      [],
      verifying({ sub: 'alice', azp: 'console-login', scope: 'airlock:personal' }),
      rule,
    ).authenticate(JWT);
    assert.ok(isNotAPerson(partial));
  });

  it('an agent acting for the person (act) is not a credential at all; nor is a failed verification', async () => {
    const acting = new PersonAuthenticator(
      [],
      verifying({ sub: 'alice', azp: 'console-login', scope: 'airlock:person' }, 'delegated'),
      rule,
    );
    assert.equal(await acting.authenticate(JWT), undefined);
    const failing = new PersonAuthenticator([], async () => ({ ok: false, failure: 'malformed' }), rule);
    assert.equal(await failing.authenticate(JWT), undefined);
  });

  it('ids: configured people, and JWT subjects namespaced by an escaped issuer', () => {
    assert.equal(personUserId('token', 'alice'), 'person:alice');
    assert.equal(personUserId('jwt', 'alice', ISSUER), `jwt:${ISSUER}#alice`);
    // The first `#` ends the issuer, whatever the two hold.
    assert.equal(jwtPersonId('https://a#b%', 'c#d'), 'jwt:https://a%23b%25#c#d');
    assert.notEqual(jwtPersonId('https://a#b', 'c'), jwtPersonId('https://a', 'b#c'));
  });
});
