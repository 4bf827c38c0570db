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

const SELF = 'gw-self-0001';
const PEER = 'gw-peer-0002';

function gateWith(allowNonLoopback: boolean, trusted: string[] = []) {
  const rows: string[] = [];
  const gate = createNetworkGate({
    trustedProxies: parseTrustedProxies(trusted),
    allowNonLoopback,
    audit: { forbidden: (reason: string) => rows.push(reason) },
    instanceId: SELF,
    maxHops: 3,
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

  it('serves a peer gateway’s call, and hands its relays the chain with this gateway added', () => {
    const { gate, rows } = gateWith(false);
    const plain = gate(exchange('127.0.0.1').req, exchange('127.0.0.1').res);
    assert.deepEqual(plain !== REFUSED && plain.via, [SELF], 'a request from no gateway: this one only');
    const { req, res } = exchange('127.0.0.1', { [HOP_HEADER]: `${PEER}` });
    const arrival = gate(req, res);
    assert.deepEqual(arrival !== REFUSED && arrival.via, [PEER, SELF]);
    assert.deepEqual(rows, []);
  });

  it('refuses a relay loop (its own id in the chain): 508, saying so, audited', () => {
    const { gate, rows } = gateWith(false);
    const { req, res, sent } = exchange('127.0.0.1', { [HOP_HEADER]: `${SELF}, ${PEER}` });
    assert.equal(gate(req, res), REFUSED);
    assert.equal(sent.status, 508);
    assert.match(sent.body, /relay loop/);
    assert.deepEqual(rows, ['relay_loop']);
  });

  it('refuses a chain as long as limits.maxHops, naming the setting', () => {
    const { gate, rows } = gateWith(false);
    const { req, res, sent } = exchange('127.0.0.1', { [HOP_HEADER]: 'gw-a-00001, gw-b-00002, gw-c-00003' });
    assert.equal(gate(req, res), REFUSED);
    assert.equal(sent.status, 508);
    assert.match(sent.body, /limits\.maxHops is 3/);
    assert.deepEqual(rows, ['too_many_hops']);
    const under = gate(
      exchange('127.0.0.1', { [HOP_HEADER]: 'gw-a-00001, gw-b-00002' }).req,
      exchange('127.0.0.1').res,
    );
    assert.notEqual(under, REFUSED);
  });

  it('refuses a malformed hop header (the old bare "1", junk, too many entries): 400', () => {
    for (const value of ['1', 'not an id!', Array.from({ length: 17 }, (_, i) => `gw-x-${1000 + i}`).join(',')]) {
      const { gate, rows } = gateWith(false);
      const { req, res, sent } = exchange('127.0.0.1', { [HOP_HEADER]: value });
      assert.equal(gate(req, res), REFUSED, value);
      assert.equal(sent.status, 400);
      assert.deepEqual(rows, ['hop_refused']);
    }
  });

  it('judges the forwarded address behind a trusted proxy', () => {
    const { gate, rows } = gateWith(false, ['127.0.0.1/32']);
    const { req, res } = exchange('127.0.0.1', { 'x-forwarded-for': '198.51.100.7' });
    assert.equal(gate(req, res), REFUSED);
    assert.deepEqual(rows, ['address_not_allowed']);
  });
});
