/**
 * How a client certificate combines with a token (`CertificateIdentities.combine`): every case
 * of certificate (none, naming a client with or without `alone`/`required`) against every
 * credential outcome (none, the same client, another client, a JWT, an invalid one).
 */
import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { describe, it } from 'node:test';
import type { ClientEntry } from '../../config/load.js';
import { makePrincipal } from '../../identity/principal.js';
import type { AuthOutcome } from '../auth/outcome.js';
import { CertificateIdentities } from './identity.js';

function client(id: string, certificate?: ClientEntry['certificate']): ClientEntry {
  return {
    id,
    tokenDigest: Buffer.alloc(32, id.length),
    agents: new Set(['echo']),
    tokenOrigin: { kind: 'inline' },
    ...(certificate !== undefined && { certificate }),
  };
}

const plain = client('plain');
const alone = client('alone', { subject: 'CN=alone', alone: true, required: false });
const paired = client('paired', { subject: 'CN=paired', alone: false, required: true });
const named = client('named', { fingerprint256: 'AB:CD', alone: false, required: false });
const identities = new CertificateIdentities([plain, alone, paired, named]);

const admitted = (id: string): AuthOutcome => ({
  ok: true,
  principal: makePrincipal({ kind: 'client', clientId: id, subject: id }),
});
const MISSING: AuthOutcome = { ok: false, status: 401, reason: 'missing_credentials' };
const INVALID: AuthOutcome = { ok: false, status: 401, reason: 'invalid_credentials' };
const JWT: AuthOutcome = {
  ok: true,
  principal: makePrincipal({ kind: 'service', clientId: 'alone', subject: 'alone' }),
};

const who = (outcome: AuthOutcome): string =>
  outcome.ok ? `ok ${outcome.principal.key}` : `${outcome.status} ${outcome.reason}`;

describe('CertificateIdentities.combine', () => {
  it('without a certificate, the credential decides, except for a client that requires its certificate', () => {
    assert.equal(who(identities.combine(admitted('plain'), undefined, true, 'echo')), 'ok client:plain::plain');
    assert.equal(who(identities.combine(MISSING, undefined, false, 'echo')), '401 missing_credentials');
    assert.equal(who(identities.combine(admitted('paired'), undefined, true, 'echo')), '401 invalid_credentials');
    const forbiddenPaired: AuthOutcome = {
      ok: false,
      status: 403,
      reason: 'agent_not_allowed',
      principal: makePrincipal({ kind: 'client', clientId: 'paired', subject: 'paired' }),
    };
    assert.equal(who(identities.combine(forbiddenPaired, undefined, true, 'echo')), '401 invalid_credentials');
  });

  it('a certificate alone names its client only with alone: true, and the allow list still applies', () => {
    assert.equal(who(identities.combine(MISSING, alone, false, 'echo')), 'ok client:alone::alone');
    assert.equal(who(identities.combine(MISSING, alone, false, 'other')), '403 agent_not_allowed');
    assert.equal(who(identities.combine(MISSING, named, false, 'echo')), '401 missing_credentials');
    assert.equal(who(identities.combine(MISSING, paired, false, 'echo')), '401 missing_credentials');
  });

  it('a certificate and a credential must name the same client', () => {
    assert.equal(who(identities.combine(admitted('named'), named, true, 'echo')), 'ok client:named::named');
    assert.equal(who(identities.combine(admitted('paired'), paired, true, 'echo')), 'ok client:paired::paired');
    assert.equal(who(identities.combine(admitted('plain'), named, true, 'echo')), '401 invalid_credentials');
    assert.equal(who(identities.combine(admitted('plain'), alone, true, 'echo')), '401 invalid_credentials');
    // A JWT never names a configured client, even with the same id.
    assert.equal(who(identities.combine(JWT, alone, true, 'echo')), '401 invalid_credentials');
    assert.equal(who(identities.combine(INVALID, alone, true, 'echo')), '401 invalid_credentials');
  });

  it('a plain TCP socket (no TLS) names nobody', () => {
    assert.equal(identities.clientOf(new Socket()), undefined);
    assert.equal(new CertificateIdentities([plain]).active, false);
  });
});
