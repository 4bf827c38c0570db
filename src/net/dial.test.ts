/**
 * Socket plumbing, against loopback servers only: a fake CONNECT proxy and an https server.
 * These functions hold no policy, so a loopback target is as good as any here; the policy tests
 * that need public-looking addresses run in a network namespace (netns.test.ts).
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { dialAddress, openTunnel, startTls } from './dial.js';
import { parseEgressProxy } from './settings.js';
import { makeTestPki, opensslAvailable } from './test-pki.test.js';
import type { TestPki } from './test-pki.test.js';

type Mode = 'tunnel' | '403' | '407' | 'garbage' | 'early-data' | 'huge' | 'silent';

interface FakeProxy {
  port: number;
  heads: string[];
  mode: Mode;
  close(): Promise<void>;
}

/** A CONNECT proxy whose answer is chosen per test; it only ever dials 127.0.0.1. */
async function fakeProxy(): Promise<FakeProxy> {
  const sockets = new Set<net.Socket>();
  const state: FakeProxy = {
    port: 0,
    heads: [],
    mode: 'tunnel',
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      client.off('data', onData);
      const head = buffered.slice(0, end);
      state.heads.push(head);
      const match = /^CONNECT (\S+):(\d+) HTTP/.exec(head);
      switch (state.mode) {
        case '403':
          return void client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
        case '407':
          return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
        case 'garbage':
          return void client.end('SSH-2.0-OpenSSH\r\n\r\n');
        case 'early-data':
          return void client.write('HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\n\r\nhi');
        case 'huge':
          return void client.write('HTTP/1.1 200 OK\r\n' + 'X: y\r\n'.repeat(5000));
        case 'silent':
          return;
        case 'tunnel': {
          const upstream = net.connect({ host: '127.0.0.1', port: Number(match?.[2]) });
          sockets.add(upstream);
          upstream.on('error', () => client.destroy());
          upstream.on('connect', () => {
            client.write('HTTP/1.1 200 Connection established\r\n\r\n');
            client.pipe(upstream).pipe(client);
          });
        }
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  return state;
}

describe('dial: tunnel and TLS', () => {
  let pki: TestPki | undefined;
  let rogue: TestPki | undefined;
  let proxy: FakeProxy;
  let server: https.Server | undefined;
  let serverPort = 0;
  let context: tls.SecureContext | undefined;
  const sni: (string | false | null)[] = [];

  before(async () => {
    proxy = await fakeProxy();
    if (!opensslAvailable()) return;
    pki = makeTestPki(['agent.example', '127.0.0.1']);
    rogue = makeTestPki(['agent.example']);
    context = tls.createSecureContext({ ca: [...tls.rootCertificates, pki.caPem] });
    server = https.createServer({ key: pki.key, cert: pki.cert }, (req, res) => {
      sni.push((req.socket as tls.TLSSocket).servername);
      res.end('tunnelled');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    serverPort = (server.address() as net.AddressInfo).port;
  });

  after(async () => {
    await proxy.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    pki?.cleanup();
    rogue?.cleanup();
  });

  const signal = (): AbortSignal => AbortSignal.timeout(2000);

  test('CONNECT names the checked address, and TLS inside the tunnel is verified against the host name', async (t) => {
    if (pki === undefined) return t.skip('openssl is not installed');
    proxy.mode = 'tunnel';
    proxy.heads.length = 0;
    const raw = await openTunnel(
      parseEgressProxy(`http://127.0.0.1:${proxy.port}`),
      '127.0.0.1',
      serverPort,
      'agent.example:443',
      signal(),
    );
    const secure = await startTls(raw, 'agent.example', context, signal());
    secure.write('GET / HTTP/1.1\r\nHost: agent.example\r\nConnection: close\r\n\r\n');
    const reply = await new Promise<string>((resolve) => {
      let text = '';
      secure.on('data', (chunk: Buffer) => (text += chunk.toString()));
      secure.on('end', () => resolve(text));
    });
    assert.match(reply, /tunnelled$/);
    assert.match(
      proxy.heads[0] ?? '',
      new RegExp(`^CONNECT 127\\.0\\.0\\.1:${serverPort} HTTP/1\\.1\\r\\nHost: 127\\.0\\.0\\.1:${serverPort}$`),
    );
    assert.equal(sni.at(-1), 'agent.example');
  });

  test('TLS through the tunnel fails when the certificate does not name the host (it is not checked against the IP)', async (t) => {
    if (pki === undefined) return t.skip('openssl is not installed');
    proxy.mode = 'tunnel';
    const raw = await openTunnel(
      parseEgressProxy(`http://127.0.0.1:${proxy.port}`),
      '127.0.0.1',
      serverPort,
      'x',
      signal(),
    );
    await assert.rejects(startTls(raw, 'other.example', context, signal()), {
      code: 'network_error',
      message: /TLS with other\.example failed \(ERR_TLS_CERT_ALTNAME_INVALID\)/,
    });
  });

  test('TLS fails against a certificate from an untrusted CA, and without the extra CA', async (t) => {
    if (pki === undefined || rogue === undefined) return t.skip('openssl is not installed');
    const roguePki = rogue;
    const rogueServer = tls.createServer({ key: roguePki.key, cert: roguePki.cert }, (s) => s.end());
    await new Promise<void>((resolve) => rogueServer.listen(0, '127.0.0.1', resolve));
    try {
      const port = (rogueServer.address() as net.AddressInfo).port;
      await assert.rejects(
        startTls(await dialAddress('127.0.0.1', port, signal()), 'agent.example', context, signal()),
        {
          code: 'network_error',
        },
      );
      await assert.rejects(
        startTls(await dialAddress('127.0.0.1', serverPort, signal()), 'agent.example', undefined, signal()),
        {
          code: 'network_error',
          message: /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/,
        },
      );
    } finally {
      await new Promise<void>((resolve) => rogueServer.close(() => resolve()));
    }
  });

  for (const [mode, status] of [
    ['403', 403],
    ['407', 407],
  ] as const) {
    test(`a ${status} from the proxy reads "egress proxy refused CONNECT to host:port (${status})"`, async () => {
      proxy.mode = mode;
      await assert.rejects(
        openTunnel(
          parseEgressProxy(`http://127.0.0.1:${proxy.port}`),
          '93.184.216.34',
          443,
          'agent.example:443',
          signal(),
        ),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'proxy_refused');
          assert.equal(error.message, `egress proxy refused CONNECT to agent.example:443 (${status})`);
          return true;
        },
      );
    });
  }

  test('proxy credentials go in Proxy-Authorization and never into error messages', async () => {
    proxy.mode = '407';
    proxy.heads.length = 0;
    const configured = parseEgressProxy(`http://bob:hunter2@127.0.0.1:${proxy.port}`);
    await assert.rejects(
      openTunnel(configured, '93.184.216.34', 443, 'agent.example:443', signal()),
      (error: Error) => {
        assert.doesNotMatch(error.message, /hunter2|Ym9i/);
        return true;
      },
    );
    assert.match(
      proxy.heads[0] ?? '',
      new RegExp(`Proxy-Authorization: Basic ${Buffer.from('bob:hunter2').toString('base64')}`),
    );
  });

  test('an IPv6 destination is bracketed in the CONNECT line', async () => {
    proxy.mode = '403';
    proxy.heads.length = 0;
    await assert.rejects(
      openTunnel(
        parseEgressProxy(`http://127.0.0.1:${proxy.port}`),
        '2606:2800:220:1::1',
        443,
        'agent.example:443',
        signal(),
      ),
    );
    assert.match(
      proxy.heads[0] ?? '',
      /^CONNECT \[2606:2800:220:1::1\]:443 HTTP\/1\.1\r\nHost: \[2606:2800:220:1::1\]:443/,
    );
  });

  test('malformed, early-data, oversized and silent proxy replies are errors, not tunnels', async () => {
    const configured = parseEgressProxy(`http://127.0.0.1:${proxy.port}`);
    const cases: [Mode, RegExp][] = [
      ['garbage', /malformed reply/],
      ['early-data', /sent data before the tunnel opened/],
      ['huge', /oversized CONNECT reply/],
    ];
    for (const [mode, message] of cases) {
      proxy.mode = mode;
      await assert.rejects(openTunnel(configured, '93.184.216.34', 443, 'agent.example:443', signal()), {
        code: 'network_error',
        message,
      });
    }
    proxy.mode = 'silent';
    const started = Date.now();
    const controller = new AbortController();
    setTimeout(() => controller.abort(Object.assign(new Error('deadline'), { code: 'request_timeout' })), 150);
    await assert.rejects(openTunnel(configured, '93.184.216.34', 443, 'agent.example:443', controller.signal), {
      message: 'deadline',
    });
    assert.ok(Date.now() - started < 1000);
  });

  test('an unreachable proxy is a network error naming the proxy without credentials', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(
      openTunnel(parseEgressProxy(`http://u:hunter2@127.0.0.1:${port}`), '93.184.216.34', 443, 'a:443', signal()),
      { code: 'network_error', message: `cannot reach the egress proxy http://***@127.0.0.1:${port} (ECONNREFUSED)` },
    );
  });

  test('dialAddress dials IP literals only: a host name never reaches DNS', async () => {
    await assert.rejects(dialAddress('localhost', 80, signal()), {
      code: 'network_error',
      message: /only checked addresses/,
    });
  });
});
