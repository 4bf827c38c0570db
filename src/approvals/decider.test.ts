import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { makePrincipal, type Principal } from '../identity/principal.js';
import { deciderFor, mayDecide, type DecisionActor } from './decider.js';

const owners = new Map([
  ['partner', 'bob'],
  ['empty', ''],
]);
const user = (userId: string): DecisionActor => ({ kind: 'user', userId });

describe('deciderFor', () => {
  it('a delegated principal is decided by the delegating user (the subject)', () => {
    const principal = makePrincipal({ kind: 'delegated', clientId: 'app', subject: 'alice', actingAgent: 'bot' });
    assert.deepEqual(deciderFor(principal, owners), { kind: 'user', userId: 'alice', via: 'delegating_user' });
  });

  it('a delegated principal is never decided by its client owner', () => {
    const principal = makePrincipal({ kind: 'delegated', clientId: 'partner', subject: 'alice', actingAgent: 'bot' });
    const decider = deciderFor(principal, owners);
    assert.equal(mayDecide(decider, user('bob')), false);
    assert.equal(mayDecide(decider, user('alice')), true);
  });

  it('a delegated principal without a subject has no decider', () => {
    const principal = makePrincipal({ kind: 'delegated', clientId: 'app', subject: '' });
    assert.deepEqual(deciderFor(principal, owners), { kind: 'none', reason: 'no_subject' });
  });

  it('a token client is decided by its configured owner', () => {
    const principal = makePrincipal({ kind: 'client', clientId: 'partner', subject: 'partner' });
    assert.deepEqual(deciderFor(principal, owners), { kind: 'user', userId: 'bob', via: 'client_owner' });
  });

  it('a token client without an owner (missing or empty) has no decider', () => {
    for (const clientId of ['other', 'empty', '__proto__', 'constructor', 'toString']) {
      const principal = makePrincipal({ kind: 'client', clientId, subject: clientId });
      assert.deepEqual(deciderFor(principal, owners), { kind: 'none', reason: 'client_has_no_owner' }, clientId);
    }
  });

  it('a service principal has no decider, even with an owner configured for its client id', () => {
    const principal = makePrincipal({ kind: 'service', clientId: 'partner', subject: 'bob' });
    assert.deepEqual(deciderFor(principal, owners), { kind: 'none', reason: 'service_principal' });
    assert.equal(mayDecide(deciderFor(principal, owners), user('bob')), false);
  });

  it('an unknown principal kind fails closed', () => {
    const odd = { kind: 'robot', clientId: 'partner', subject: 'bob', key: 'x' } as unknown as Principal;
    assert.equal(deciderFor(odd, owners).kind, 'none');
  });
});

describe('mayDecide', () => {
  const alice = { kind: 'user', userId: 'alice', via: 'delegating_user' } as const;

  it('only the exact same user may decide', () => {
    assert.equal(mayDecide(alice, user('alice')), true);
    for (const other of ['Alice', 'alice ', ' alice', 'alic', 'alice\u0000', '']) {
      assert.equal(mayDecide(alice, user(other)), false, JSON.stringify(other));
    }
  });

  it('fails closed on malformed actors', () => {
    for (const actor of [null, undefined, {}, { kind: 'service', userId: 'alice' }, { kind: 'user', userId: 7 }]) {
      assert.equal(mayDecide(alice, actor as unknown as DecisionActor), false);
    }
  });

  it('nobody decides for a none decider', () => {
    assert.equal(mayDecide({ kind: 'none', reason: 'client_has_no_owner' }, user('')), false);
  });

  it('property: mayDecide holds exactly when the user ids are equal and non-empty', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (deciderId, actorId) => {
        const result = mayDecide({ kind: 'user', userId: deciderId, via: 'client_owner' }, user(actorId));
        return result === (deciderId === actorId && actorId.length > 0);
      }),
    );
  });
});
