import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { HOP_HEADER } from '../../protocol/headers.js';
import { parseTrustedProxies } from '../gate/client-address.js';
import { REFUSED } from './compose.js';
import { createNetworkGate } from './gate.js';

function exchange(remoteAddress: string, headers: Record<string, string> = {}) {
  const req = { headers, socket: { remoteAddress }, complete: true } as unknown as IncomingMessage;
  const sent = { status: 0, body: '' };
  const res = {
    req,
    writeHead: (status: number) => (sent.status = status),
    end: (body?: string) => (sent.body = body ?? ''),
  } as unknown as ServerResponse;
  return { req, res, sent };
}

function gateWith(allowNonLoopback: boolean, trusted: string[] = []) {
  const rows: string[] = [];
  const gate = createNetworkGate({
    trustedProxies: parseTrustedProxies(trusted),
    allowNonLoopback,
    audit: { forbidden: (reason: string) => rows.push(reason) },
  });
  return { gate, rows };
}

describe('network gate', () => {
  it('admits loopback callers and says so', () => {
    const { gate } = gateWith(false);
    const { req, res } = exchange('127.0.0.1');
    const arrival = gate(req, res);
    assert.notEqual(arrival, REFUSED);
    assert.deepEqual(arrival !== REFUSED && [arrival.remote, arrival.fromLoopback], ['127.0.0.1', true]);
  });

  it('refuses callers from outside loopback unless allowed: 403, audited', () => {
    const { gate, rows } = gateWith(false);
    const { req, res, sent } = exchange('203.0.113.9');
    assert.equal(gate(req, res), REFUSED);
    assert.equal(sent.status, 403);
    assert.match(sent.body, /not admitted/);
    assert.deepEqual(rows, ['address_not_allowed']);
    const open = gateWith(true).gate(req, exchange('203.0.113.9').res);
    assert.equal(open !== REFUSED && open.fromLoopback, false);
  });

  it('refuses a request relayed by an Airlock gateway (loop protection)', () => {
    const { gate, rows } = gateWith(false);
    const { req, res, sent } = exchange('127.0.0.1', { [HOP_HEADER]: '1' });
    assert.equal(gate(req, res), REFUSED);
    assert.equal(sent.status, 403);
    assert.deepEqual(rows, ['hop_refused']);
  });

  it('judges the forwarded address behind a trusted proxy', () => {
    const { gate, rows } = gateWith(false, ['127.0.0.1/32']);
    const { req, res } = exchange('127.0.0.1', { 'x-forwarded-for': '198.51.100.7' });
    assert.equal(gate(req, res), REFUSED);
    assert.deepEqual(rows, ['address_not_allowed']);
  });
});
