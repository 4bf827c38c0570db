/**
 * The guarded client against public-looking and private addresses, inside an isolated network
 * namespace so that none of this traffic can leave the machine.
 *
 * The test spawns this same file as `unshare -n node --import tsx netns.test.ts` with
 * AIRLOCK_NET_NETNS_CHILD=1. The child brings `lo` up, puts 93.184.216.34 (public) and 10.0.0.5
 * (private) on it, starts https servers on both, three CONNECT proxies on 127.0.0.1, runs the
 * scenarios and prints their outcomes as one JSON line. The parent asserts on them. Without
 * `unshare`, `ip` or `openssl` (or without the privilege to make a namespace) it skips, saying why.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import type tls from 'node:tls';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGuardedClient } from './client.js';
import type { GuardedClientSettings } from './settings.js';
import { OutboundError } from './errors.js';

const PUBLIC = '93.184.216.34';
const PRIVATE = '10.0.0.5';
const NAMES = ['agent.example', 'rebind.example', 'svc.corp', PUBLIC, PRIVATE];
const RESULT_PREFIX = 'NETNS_RESULT ';

type Outcome = Record<string, unknown>;

if (process.env.AIRLOCK_NET_NETNS_CHILD === '1') {
  await runChild();
} else {
  await registerTests();
}

// ---------------------------------------------------------------------------------------------
// Parent: availability, PKI, one child run, one test per scenario.
// ---------------------------------------------------------------------------------------------

async function registerTests(): Promise<void> {
  const { after, before, describe, test } = await import('node:test');
  const { makeTestPki, opensslAvailable } = await import('./test-pki.test.js');

  describe('guarded client in an isolated network namespace (public and private addresses on lo)', () => {
    let skip: string | undefined;
    let results: Record<string, Outcome> = {};
    const cleanups: (() => void)[] = [];

    before(async () => {
      skip = unavailable(opensslAvailable());
      if (skip !== undefined) return;
      const pki = makeTestPki(NAMES);
      cleanups.push(() => pki.cleanup());
      const output = await new Promise<string>((resolve, reject) => {
        const env: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_NET_NETNS_CHILD: '1', AIRLOCK_NET_NETNS_PKI: pki.dir };
        delete env.NODE_TEST_CONTEXT;
        execFile(
          'unshare',
          ['-n', process.execPath, '--import', 'tsx', fileURLToPath(import.meta.url)],
          { cwd: repoRoot(), env, timeout: 20_000, maxBuffer: 1 << 20 },
          (error, stdout, stderr) => {
            if (error) reject(new Error(`netns child failed: ${error.message}\n${stderr}`));
            else resolve(stdout);
          },
        );
      });
      const line = output.split('\n').find((text) => text.startsWith(RESULT_PREFIX));
      assert.ok(line, `the netns child printed no result:\n${output}`);
      results = JSON.parse(line.slice(RESULT_PREFIX.length)) as Record<string, Outcome>;
    });
    after(() => cleanups.forEach((cleanup) => cleanup()));

    const scenario = (name: string, title: string, check: (outcome: Outcome) => void): void => {
      test(title, (t) => {
        if (skip !== undefined) return t.skip(skip);
        const outcome = results[name];
        assert.ok(outcome, `scenario ${name} did not run`);
        check(outcome);
      });
    };

    scenario('direct-public', 'https to a public address works, with SNI and certificate for the host name', (o) => {
      assert.equal(o.body, 'public');
      assert.equal(o.sni, 'agent.example');
    });
    scenario('direct-untrusted', 'the same server without the CA file fails TLS', (o) => {
      assert.equal(o.code, 'network_error');
      assert.match(String(o.message), /^TLS with agent\.example failed/);
    });
    scenario(
      'rebinding',
      'DNS rebinding: the first (public) answer is dialled; the second (private) is refused',
      (o) => {
        assert.equal(o.firstBody, 'public');
        assert.equal(o.callsAfterFirst, 1, 'one lookup per connection: check and dial use the same answer');
        assert.equal(o.secondCode, 'address_blocked');
        assert.equal(o.privateConnections, 0);
      },
    );
    scenario(
      'proxy-public',
      'through the egress proxy: CONNECT names the checked IP, TLS is end to end with SNI',
      (o) => {
        assert.equal(o.body, 'public');
        assert.equal(o.connectLine, `CONNECT ${PUBLIC}:443 HTTP/1.1`);
        assert.equal(o.sni, 'agent.example');
      },
    );
    scenario(
      'proxy-name-check',
      'through the proxy, the certificate is checked against the host name, not the IP',
      (o) => {
        assert.equal(o.code, 'network_error');
        assert.match(String(o.message), /ERR_TLS_CERT_ALTNAME_INVALID/);
      },
    );
    scenario('proxy-refused', 'a refused tunnel reads "egress proxy refused CONNECT to host:port (403)"', (o) => {
      assert.equal(o.code, 'proxy_refused');
      assert.equal(o.message, 'egress proxy refused CONNECT to agent.example:443 (403)');
      assert.equal(o.publicConnections, 0);
    });
    scenario('proxy-auth', 'proxy credentials are sent to the proxy and never shown', (o) => {
      assert.equal(o.goodBody, 'public');
      assert.equal(o.badCode, 'proxy_refused');
      assert.match(String(o.badMessage), /\(407\)$/);
      assert.doesNotMatch(String(o.badMessage), /wrong|s3cret/);
    });
    scenario(
      'private-direct',
      'a private_network entry goes direct to its listed private address, never via the proxy',
      (o) => {
        assert.equal(o.body, 'private');
        assert.equal(o.literalBody, 'private');
        assert.equal(o.proxyConnects, 0);
      },
    );
    scenario('private-refusals', 'private addresses are refused for ordinary entries and unlisted networks', (o) => {
      assert.equal(o.ordinary, 'address_blocked');
      assert.equal(o.unlisted, 'address_blocked');
      assert.equal(o.publicAnswerWithProxy, 'address_blocked');
      assert.equal(o.privateConnections, 0);
    });
    scenario('proxy-literal', 'a public IPv4 literal goes through the proxy by its address', (o) => {
      assert.equal(o.body, 'public');
      assert.equal(o.connectLine, `CONNECT ${PUBLIC}:443 HTTP/1.1`);
    });
  });
}

/** Why the namespace test cannot run here, or undefined when it can. */
function unavailable(openssl: boolean): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (!openssl) return 'openssl is not installed';
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return 'the ip command (iproute2) is not installed';
  }
  try {
    execFileSync('unshare', ['-n', 'true'], { stdio: 'ignore' });
  } catch {
    return 'unshare -n is unavailable (needs util-linux and CAP_SYS_ADMIN)';
  }
  return undefined;
}

function repoRoot(): string {
  return resolvePath(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

// ---------------------------------------------------------------------------------------------
// Child: runs inside the namespace.
// ---------------------------------------------------------------------------------------------

interface Recorder {
  connections: number;
  sni: (string | false | null)[];
}

async function runChild(): Promise<void> {
  for (const args of [
    ['link', 'set', 'lo', 'up'],
    ['addr', 'add', `${PUBLIC}/32`, 'dev', 'lo'],
    ['addr', 'add', `${PRIVATE}/32`, 'dev', 'lo'],
  ]) {
    execFileSync('ip', args);
  }
  const dir = process.env.AIRLOCK_NET_NETNS_PKI as string;
  const key = readFileSync(join(dir, 'server.key'));
  const cert = readFileSync(join(dir, 'server.pem'));
  const caFile = join(dir, 'ca.pem');

  const closers: (() => Promise<void>)[] = [];
  const publicSeen = await httpsServer(PUBLIC, 'public', key, cert, closers);
  const privateSeen = await httpsServer(PRIVATE, 'private', key, cert, closers);
  const allowProxy = await connectProxy(3128, () => 'tunnel', closers);
  const refuseProxy = await connectProxy(3129, () => 403, closers);
  const expected = `Basic ${Buffer.from('user:s3cret').toString('base64')}`;
  const authProxy = await connectProxy(
    3130,
    (head) => (head.includes(`Proxy-Authorization: ${expected}`) ? 'tunnel' : 407),
    closers,
  );

  const table = (entries: Record<string, string[]>): NonNullable<GuardedClientSettings['resolve']> => {
    return async (hostname) => {
      const answers = entries[hostname];
      if (answers === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return answers.map((address) => ({ address, family: 4 as const }));
    };
  };
  const names = table({ 'agent.example': [PUBLIC], 'other.example': [PUBLIC], 'svc.corp': [PRIVATE] });
  const timeouts = { connectMs: 2000, readMs: 2000, totalMs: 4000 };
  const get = async (settings: GuardedClientSettings, url: string, privateNetwork = false): Promise<string> => {
    const client = createGuardedClient(settings);
    try {
      const reply = await client.request({ method: 'GET', url, maxResponseBytes: 1000, timeouts, privateNetwork });
      return reply.body.toString();
    } finally {
      await client.close();
    }
  };
  const failure = async (work: Promise<unknown>): Promise<{ code: string; message: string }> => {
    try {
      await work;
      return { code: 'none', message: 'no error' };
    } catch (error) {
      return error instanceof OutboundError
        ? { code: error.code, message: error.message }
        : { code: 'unexpected', message: String(error) };
    }
  };

  const results: Record<string, Outcome> = {};
  const run = async (name: string, body: () => Promise<Outcome>): Promise<void> => {
    try {
      results[name] = await body();
    } catch (error) {
      results[name] = { crashed: String(error) };
    }
  };

  await run('direct-public', async () => ({
    body: await get({ resolve: names, caFile }, 'https://agent.example/'),
    sni: publicSeen.sni.at(-1),
  }));
  await run('direct-untrusted', () => failure(get({ resolve: names }, 'https://agent.example/')));
  await run('rebinding', async () => {
    let calls = 0;
    const rebinding: GuardedClientSettings['resolve'] = async () => {
      calls += 1;
      return [{ address: calls === 1 ? PUBLIC : PRIVATE, family: 4 }];
    };
    const before = privateSeen.connections;
    const firstBody = await get({ resolve: rebinding, caFile }, 'https://rebind.example/');
    const callsAfterFirst = calls;
    const second = await failure(get({ resolve: rebinding, caFile }, 'https://rebind.example/'));
    return {
      firstBody,
      callsAfterFirst,
      secondCode: second.code,
      privateConnections: privateSeen.connections - before,
    };
  });
  await run('proxy-public', async () => {
    const body = await get({ resolve: names, caFile, egressProxy: 'http://127.0.0.1:3128' }, 'https://agent.example/');
    return { body, connectLine: allowProxy.heads.at(-1)?.split('\r\n')[0], sni: publicSeen.sni.at(-1) };
  });
  await run('proxy-name-check', () =>
    failure(get({ resolve: names, caFile, egressProxy: 'http://127.0.0.1:3128' }, 'https://other.example/')),
  );
  await run('proxy-refused', async () => {
    const before = publicSeen.connections;
    const outcome = await failure(
      get({ resolve: names, caFile, egressProxy: 'http://127.0.0.1:3129' }, 'https://agent.example/'),
    );
    return { ...outcome, publicConnections: publicSeen.connections - before, heads: refuseProxy.heads.length };
  });
  await run('proxy-auth', async () => {
    const goodBody = await get(
      { resolve: names, caFile, egressProxy: 'http://user:s3cret@127.0.0.1:3130' },
      'https://agent.example/',
    );
    const bad = await failure(
      get({ resolve: names, caFile, egressProxy: 'http://user:wrong@127.0.0.1:3130' }, 'https://agent.example/'),
    );
    return { goodBody, badCode: bad.code, badMessage: bad.message, heads: authProxy.heads.length };
  });
  await run('private-direct', async () => {
    const before = allowProxy.heads.length;
    const settings = { resolve: names, caFile, egressProxy: 'http://127.0.0.1:3128', privateAllow: ['10.0.0.0/8'] };
    const body = await get(settings, 'https://svc.corp/', true);
    const literalBody = await get(settings, `https://${PRIVATE}/`, true);
    return { body, literalBody, proxyConnects: allowProxy.heads.length - before };
  });
  await run('private-refusals', async () => {
    const before = privateSeen.connections;
    const ordinary = await failure(get({ resolve: names, caFile, privateAllow: ['10.0.0.0/8'] }, 'https://svc.corp/'));
    const unlisted = await failure(
      get({ resolve: names, caFile, privateAllow: ['10.9.0.0/16'] }, 'https://svc.corp/', true),
    );
    const publicAnswerWithProxy = await failure(
      get(
        {
          resolve: table({ 'svc.corp': [PUBLIC] }),
          caFile,
          egressProxy: 'http://127.0.0.1:3128',
          privateAllow: ['svc.corp'],
        },
        'https://svc.corp/',
        true,
      ),
    );
    return {
      ordinary: ordinary.code,
      unlisted: unlisted.code,
      publicAnswerWithProxy: publicAnswerWithProxy.code,
      privateConnections: privateSeen.connections - before,
    };
  });
  await run('proxy-literal', async () => {
    const body = await get({ caFile, egressProxy: 'http://127.0.0.1:3128' }, `https://${PUBLIC}/`);
    return { body, connectLine: allowProxy.heads.at(-1)?.split('\r\n')[0] };
  });

  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(results)}\n`);
  await Promise.all(closers.map((close) => close()));
}

async function httpsServer(
  address: string,
  body: string,
  key: Buffer,
  cert: Buffer,
  closers: (() => Promise<void>)[],
): Promise<Recorder> {
  const seen: Recorder = { connections: 0, sni: [] };
  const server = https.createServer({ key, cert }, (req, res) => {
    seen.sni.push((req.socket as tls.TLSSocket).servername);
    res.end(body);
  });
  server.on('connection', () => seen.connections++);
  await new Promise<void>((resolve) => server.listen(443, address, resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return seen;
}

/** A CONNECT proxy on 127.0.0.1:port; `decide` answers 'tunnel' or a refusal status. */
async function connectProxy(
  port: number,
  decide: (head: string) => 'tunnel' | number,
  closers: (() => Promise<void>)[],
): Promise<{ heads: string[] }> {
  const state = { heads: [] as string[] };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('error', () => {});
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      client.off('data', onData);
      const head = buffered.slice(0, end);
      state.heads.push(head);
      const verdict = decide(head);
      const target = /^CONNECT (\[[^\]]+\]|[^:\s]+):(\d+) /.exec(head);
      if (verdict !== 'tunnel' || target === null) {
        client.end(`HTTP/1.1 ${verdict === 'tunnel' ? 400 : verdict} No\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      const upstream = net.connect({ host: (target[1] as string).replace(/^\[|\]$/g, ''), port: Number(target[2]) });
      sockets.add(upstream);
      upstream.on('error', () => client.destroy());
      upstream.on('connect', () => {
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        client.pipe(upstream).pipe(client);
      });
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return state;
}
