import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import type { AuthOutcome } from '../auth/index.js';
import { AuthFailureLimiter } from '../limits/address-failures.js';
import type { Logger } from '../log.js';
import { createClientAuthentication } from './authenticate.js';
import { REFUSED } from './compose.js';
import type { AgentInbound } from './inbound.js';

const quiet: Logger = { info() {}, warn() {}, error() {} };
const PRINCIPAL = { key: 'client:a', kind: 'client', clientId: 'a' };

function inbound(authorization?: string) {
  const sent = { status: 0, headers: {} as Record<string, unknown>, body: '' };
  const res = {
    req: { complete: true, headers: {} },
    writeHead: (status: number, headers: Record<string, unknown>) => ((sent.status = status), (sent.headers = headers)),
    end: (body: string) => (sent.body = body),
  } as unknown as ServerResponse;
  const value = {
    req: { headers: authorization === undefined ? {} : { authorization } },
    res,
    remote: '127.0.0.1',
    fromLoopback: true,
    agent: { config: { slug: 'echo', anonymousLoopback: false } },
    now: 0,
    principal: undefined,
    body: undefined,
  } as unknown as AgentInbound;
  return { value, sent };
}

function step(outcome: AuthOutcome | Promise<AuthOutcome>, apiKeyHeader = false) {
  const rows: string[] = [];
  const authFailures = new AuthFailureLimiter({ limit: 10 });
  const authenticate = createClientAuthentication({
    auth: { authenticate: () => outcome },
    audit: {
      authFailed: (reason: string) => rows.push(`401:${reason}`),
      forbidden: (reason: string) => rows.push(`403:${reason}`),
    },
    authFailures,
    logger: quiet,
    apiKeyHeader,
  });
  return { authenticate, rows, authFailures };
}

describe('client authentication step', () => {
  it('passes the principal on at once for a client token', () => {
    const { authenticate } = step({ ok: true, principal: PRINCIPAL } as unknown as AuthOutcome);
    const { value } = inbound('Bearer t');
    const admitted = authenticate(value);
    assert.equal(admitted, value);
    assert.equal(value.principal, PRINCIPAL);
  });

  it('401: audited, counted against the address, WWW-Authenticate and Connection: close', () => {
    const { authenticate, rows, authFailures } = step({
      ok: false,
      status: 401,
      reason: 'invalid_credentials',
    } as never);
    const { value, sent } = inbound('Bearer wrong');
    assert.equal(authenticate(value), REFUSED);
    assert.equal(sent.status, 401);
    assert.equal(sent.headers['www-authenticate'], 'Bearer realm="airlock"');
    assert.equal(sent.headers.connection, 'close');
    assert.match(sent.body, /Authorization: Bearer <token>"/);
    assert.deepEqual(rows, ['401:invalid_credentials']);
    assert.equal(authFailures.recordFailure('127.0.0.1', 0), 0, 'one failure counted, not locked yet');
  });

  it('names X-API-Key in the 401 when it is accepted', () => {
    const { authenticate } = step({ ok: false, status: 401, reason: 'missing_credentials' } as never, true);
    const { value, sent } = inbound();
    assert.equal(authenticate(value), REFUSED);
    assert.match(sent.body, /X-API-Key: <token>/);
  });
  it('401 without any credential: audited, not counted against the address (it guesses nothing)', () => {
    const { authenticate, rows, authFailures } = step({
      ok: false,
      status: 401,
      reason: 'missing_credentials',
    } as never);
    for (let attempt = 0; attempt < 20; attempt++) {
      const { value, sent } = inbound();
      assert.equal(authenticate(value), REFUSED);
      assert.equal(sent.status, 401);
    }
    assert.equal(rows.length, 20);
    assert.equal(authFailures.isLocked('127.0.0.1', 0), 0);
  });
  it('an anonymous loopback caller is admitted only with a loopback Host (DNS rebinding → 403)', () => {
    const { authenticate, rows } = step({ ok: true, principal: PRINCIPAL } as unknown as AuthOutcome);
    const anonymous = (host: string | undefined, authorization?: string) => {
      const { value, sent } = inbound(authorization);
      (value.agent.config as { anonymousLoopback: boolean }).anonymousLoopback = true;
      if (host !== undefined) (value.req.headers as Record<string, string>).host = host;
      return { admitted: authenticate(value), sent };
    };
    assert.notEqual(anonymous('localhost:41241').admitted, REFUSED);
    assert.notEqual(anonymous('127.0.0.1').admitted, REFUSED);
    assert.notEqual(anonymous('[::1]:8080').admitted, REFUSED);
    const rebound = anonymous('evil.example:41241');
    assert.equal(rebound.admitted, REFUSED);
    assert.equal(rebound.sent.status, 403);
    assert.deepEqual(rows, ['403:host_not_loopback']);
    // A caller with a credential is judged by it, whatever its Host.
    assert.notEqual(anonymous('gateway.internal:41241', 'Bearer t').admitted, REFUSED);
  });

  it('403 for a client the agent does not allow: audited, not counted', () => {
    const { authenticate, rows } = step({
      ok: false,
      status: 403,
      reason: 'agent_not_allowed',
      principal: PRINCIPAL,
    } as never);
    const { value, sent } = inbound('Bearer t');
    assert.equal(authenticate(value), REFUSED);
    assert.equal(sent.status, 403);
    assert.equal(sent.headers.connection, 'close');
    assert.deepEqual(rows, ['403:agent_not_allowed']);
  });

  it('waits for a JWT', async () => {
    const { authenticate } = step(Promise.resolve({ ok: true, principal: PRINCIPAL } as unknown as AuthOutcome));
    const { value } = inbound('Bearer e.y.j');
    assert.equal(await authenticate(value), value);
  });
});
