/**
 * TLS and client certificates (mTLS) end to end, over real sockets, with a throwaway test CA
 * made by `openssl` once per run (test/helpers/test-ca.ts): HTTPS and https card URLs, plain
 * HTTP and TLS 1.1 refused, certificates as client identities (alone, with a token, refused when
 * they disagree, never when unverified), certificate rotation on disk without a restart, and a
 * bad replacement refused while the old pair serves on.
 */
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { connect, type PeerCertificate, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import { TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { MemoryAuditSink } from '../src/audit/memory.js';
import { parseConfig } from '../src/config/load.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import type { Logger } from '../src/server/log.js';
import { makeTestCa, type Issued, type TestCa } from './helpers/test-ca.js';
import { asTask, sendRequest, userMessage } from './helpers/sdk-caller.js';

const TOKEN_A = 'token-for-client-a-0123456789abcdef0123';
const TOKEN_BOT = 'token-for-ci-bot-0123456789abcdef012345';
const TOKEN_PAIR = 'token-for-pair-0123456789abcdef01234567';

let ca: TestCa;
let other: TestCa;
let server1: Issued;
let server2: Issued;
let bot: Issued;
let stranger: Issued;
let rogue: Issued;
let pair: Issued;
let live: { certFile: string; keyFile: string };

before(() => {
  ca = makeTestCa('tls');
  other = makeTestCa('tls-other', ca.dir);
  server1 = ca.issue('server1', { cn: 'airlock-one', server: true });
  server2 = ca.issue('server2', { cn: 'airlock-two', server: true });
  bot = ca.issue('bot', { cn: 'ci-bot', org: 'Acme' });
  stranger = ca.issue('stranger', { cn: 'stranger' });
  pair = ca.issue('pair', { cn: 'pair' });
  // Same subject as the bot, another CA: a forgery the handshake does not verify.
  rogue = other.issue('rogue', { cn: 'ci-bot', org: 'Acme' });
  live = { certFile: join(ca.dir, 'live.pem'), keyFile: join(ca.dir, 'live.key') };
  copyFileSync(server1.certFile, live.certFile);
  copyFileSync(server1.keyFile, live.keyFile);
});
after(() => ca.cleanup());

function yaml(mode: 'request' | 'require'): string {
  const fingerprint = new X509Certificate(pair.cert).fingerprint256.replace(/:/g, '').toLowerCase();
  return `
server:
  host: 127.0.0.1
  port: 0
  defaultAgent: echo
  tls: { cert: '${live.certFile}', key: '${live.keyFile}', ca: '${ca.caFile}', clientCertificates: ${mode} }
agents:
  - { slug: echo, name: Echo, description: Echoes., skills: [{ id: echo, name: Echo, description: Echoes text }], backend: { type: echo } }
clients:
  - { id: a, token: "${TOKEN_A}", agents: [echo] }
  - id: ci-bot
    token: "${TOKEN_BOT}"
    agents: [echo]
    certificate: { subject: 'CN=ci-bot, O=Acme', alone: true }
  - id: pair
    token: "${TOKEN_PAIR}"
    agents: [echo]
    certificate: { fingerprint256: '${fingerprint}', required: true }
`;
}

interface Started {
  url: string;
  port: number;
  gateway: Gateway;
  audit: MemoryAuditSink;
  logs: Record<string, unknown>[];
}

async function start(mode: 'request' | 'require'): Promise<Started> {
  const audit = new MemoryAuditSink();
  const logs: Record<string, unknown>[] = [];
  const logger: Logger = { info: (f) => logs.push(f), warn: (f) => logs.push(f), error: (f) => logs.push(f) };
  const gateway = createGateway(parseConfig(yaml(mode), {}), {
    logger,
    auditSink: audit,
    tlsWatch: { intervalMs: 20, debounceMs: 40 },
  });
  const url = await gateway.listen();
  return { url, port: Number(new URL(url).port), gateway, audit, logs };
}

interface Answer {
  status: number;
  body: string;
  peer: PeerCertificate;
}

/** One request on a fresh connection, presenting `client`'s certificate (if any) and `token`. */
function call(
  port: number,
  options: { client?: Issued; token?: string; path?: string; method?: string; body?: unknown } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path: options.path ?? '/a2a/echo',
        method: options.method ?? 'POST',
        agent: false,
        ca: ca.ca,
        ...(options.client !== undefined && { cert: options.client.cert, key: options.client.key }),
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          ...(options.token !== undefined && { authorization: `Bearer ${options.token}` }),
        },
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), peer }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const send = (port: number, options: { client?: Issued; token?: string }): Promise<Answer> =>
  call(port, {
    ...options,
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
    },
  });

/** The server certificate a new TLS connection sees. */
function serverFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: ca.ca }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.destroy();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

const fingerprintOf = (issued: Issued): string => new X509Certificate(issued.cert).fingerprint256;

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('TLS: the gateway serves https (clientCertificates: request)', () => {
  let gw: Started;
  before(async () => {
    gw = await start('request');
  });
  after(() => gw.gateway.close());

  it('listens on https and puts https URLs on its cards', async () => {
    assert.match(gw.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const card = await call(gw.port, { path: '/.well-known/agent-card.json', method: 'GET' });
    assert.equal(card.status, 200);
    assert.match(card.body, /"url":"https:\/\/127\.0\.0\.1:\d+\/a2a\/echo/);
    assert.doesNotMatch(card.body, /http:\/\//);
    assert.equal(card.peer.fingerprint256, fingerprintOf(server1));
  });

  it('refuses plain HTTP on the https port', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port: gw.port, path: '/.well-known/agent-card.json' }, (res) =>
        resolve(`status ${res.statusCode}`),
      );
      req.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`));
      req.end();
    });
    assert.match(outcome, /^error /);
  });

  it('refuses a TLS 1.1 handshake', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect({
        host: '127.0.0.1',
        port: gw.port,
        ca: ca.ca,
        minVersion: 'TLSv1',
        maxVersion: 'TLSv1.1',
        ciphers: 'DEFAULT@SECLEVEL=0',
      });
      socket.on('secureConnect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.on('error', () => resolve('refused'));
    });
    assert.equal(outcome, 'refused');
  });

  it('admits a CA-signed certificate that matches a client as that client, without a token', async () => {
    const answer = await send(gw.port, { client: bot });
    assert.equal(answer.status, 200, answer.body);
    const submitted = gw.audit.events.filter((row) => row.type === 'a2a.task.submitted').at(-1);
    assert.equal((submitted as { client?: string } | undefined)?.client, 'ci-bot');
  });

  it('never takes a certificate from another CA as an identity, even with a matching subject', async () => {
    const answer = await send(gw.port, { client: rogue });
    assert.equal(answer.status, 401);
  });

  it('a verified certificate no client names is no identity: the token decides', async () => {
    assert.equal((await send(gw.port, { client: stranger })).status, 401);
    const withToken = await send(gw.port, { client: stranger, token: TOKEN_A });
    assert.equal(withToken.status, 200, withToken.body);
  });

  it('refuses a certificate and a token that name different clients (401, audited, counted)', async () => {
    const before = gw.audit.events.filter((row) => row.type === 'a2a.server.auth_failed').length;
    const answer = await send(gw.port, { client: bot, token: TOKEN_A });
    assert.equal(answer.status, 401);
    const failed = gw.audit.events.filter((row) => row.type === 'a2a.server.auth_failed');
    assert.equal(failed.length, before + 1);
    assert.equal((failed.at(-1) as { reason?: string }).reason, 'invalid_credentials');
    // Both naming the same client is fine.
    assert.equal((await send(gw.port, { client: bot, token: TOKEN_BOT })).status, 200);
  });

  it('a client with required: true needs its certificate and its token together', async () => {
    assert.equal((await send(gw.port, { token: TOKEN_PAIR })).status, 401, 'token without the certificate');
    assert.equal((await send(gw.port, { client: pair })).status, 401, 'certificate without alone: true');
    assert.equal((await send(gw.port, { client: pair, token: TOKEN_PAIR })).status, 200);
    // Clients without a certificate entry are unaffected.
    assert.equal((await send(gw.port, { token: TOKEN_A })).status, 200);
  });

  it('the official @a2a-js/sdk client calls over https with a client certificate', async () => {
    const dispatcher = new Agent({ connect: { ca: ca.ca, cert: bot.cert, key: bot.key } });
    try {
      const fetchImpl = ((input: string | URL | Request, init?: RequestInit) =>
        undiciFetch(input as string, { ...(init as object), dispatcher })) as unknown as typeof fetch;
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory({ fetchImpl })],
          cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
        }),
      );
      const client = await factory.createFromUrl(`${gw.url}/a2a/echo/`);
      const task = asTask(await client.sendMessage(sendRequest(userMessage('over mTLS'))));
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    } finally {
      await dispatcher.close();
    }
  });

  it('reloads a replaced certificate without a restart, and keeps it when a bad pair follows', async () => {
    assert.equal(await serverFingerprint(gw.port), fingerprintOf(server1));
    copyFileSync(server2.keyFile, live.keyFile);
    copyFileSync(server2.certFile, live.certFile);
    await until(async () => (await serverFingerprint(gw.port)) === fingerprintOf(server2), 'the new certificate');
    assert.ok(gw.logs.some((line) => line.event === 'tls_reloaded'));
    // A key that is not the certificate's: refused with a log line, the pair in use stays.
    const seen = gw.logs.length;
    writeFileSync(live.keyFile, server1.key);
    const refusal = (): Record<string, unknown> | undefined =>
      gw.logs.slice(seen).find((line) => line.event === 'tls_reload_refused');
    await until(() => refusal() !== undefined, 'the refusal');
    assert.match(String(refusal()?.error), /server\.tls\.key: .* is not the key of the certificate/);
    assert.doesNotMatch(JSON.stringify(gw.logs), /PRIVATE KEY/);
    assert.equal(await serverFingerprint(gw.port), fingerprintOf(server2));
    assert.equal((await send(gw.port, { token: TOKEN_A })).status, 200);
    // Put the first pair back for the other suites.
    copyFileSync(server1.keyFile, live.keyFile);
    copyFileSync(server1.certFile, live.certFile);
  });
});

describe('TLS: clientCertificates: require', () => {
  let gw: Started;
  before(async () => {
    gw = await start('require');
  });
  after(() => gw.gateway.close());

  it('refuses the handshake without a certificate or with one from another CA', async () => {
    await assert.rejects(send(gw.port, { token: TOKEN_A }));
    await assert.rejects(send(gw.port, { client: rogue, token: TOKEN_A }));
  });

  it('admits a verified certificate (the token still decides when it names no client)', async () => {
    assert.equal((await send(gw.port, { client: stranger, token: TOKEN_A })).status, 200);
    assert.equal((await send(gw.port, { client: bot })).status, 200);
  });
});
