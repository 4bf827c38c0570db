/**
 * JWT keys from a JWKS URL, fetched through the real guarded client from a loopback http server
 * (plain http is allowed to loopback): first fetch, on-demand refresh on an unknown kid (rate
 * limited), last good set kept on failures (down, oversized, redirect, not a JWKS), 401 before
 * any key set, and the configuration checks of auth.jwt.jwksUrl.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { ConfigError } from '../../config/errors.js';
import { parseConfig, type JwtSettings } from '../../config/load.js';
import { createGuardedClient, type GuardedClient } from '../../net/index.js';
import type { Logger } from '../log.js';
import { Authenticator } from './index.js';
import { JWKS_ON_DEMAND_INTERVAL_MS, JwtAuthenticator, MAX_JWKS_BYTES, type JwtFailure } from './jwt.js';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'airlock';
/** A query that stands for a secret in the URL: it must never reach a log line. */
const SECRET_QUERY = 'tenant=s3cr3t-value';

interface Signer {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function signer(kid: string): Promise<Signer> {
  const pair = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid, use: 'sig' } };
}

let k1: Signer;
let k2: Signer;
let k3: Signer;

before(async () => {
  [k1, k2, k3] = await Promise.all([signer('k1'), signer('k2'), signer('k3')]);
});

async function mint(key: Signer, scope = 'a2a:echo'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'svc-1', exp: now + 300, scope })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid })
    .sign(key.privateKey);
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A JWKS server on 127.0.0.1 whose answer can be changed, counting the requests it gets. */
interface JwksServer {
  url: string;
  base: string;
  hits: () => number;
  /** Hits on paths other than /jwks.json (a redirect target, say). */
  otherHits: () => number;
  serve: (handler: Handler) => void;
  serveKeys: (...keys: Signer[]) => void;
  close: () => Promise<void>;
}

function json(body: unknown): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

async function startJwksServer(): Promise<JwksServer> {
  let handler: Handler = (_req, res) => {
    res.writeHead(503);
    res.end();
  };
  let hits = 0;
  let otherHits = 0;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/jwks.json') === true) {
      hits += 1;
      handler(req, res);
    } else {
      otherHits += 1;
      json({ keys: [k3.jwk] })(req, res);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/jwks.json?${SECRET_QUERY}`,
    base,
    hits: () => hits,
    otherHits: () => otherHits,
    serve: (next) => {
      handler = next;
    },
    serveKeys: (...keys) => {
      handler = json({ keys: keys.map((key) => key.jwk) });
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function urlSettings(url: string, refreshSeconds = 600): JwtSettings {
  return {
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ['ES256'],
    agentsClaim: 'scope',
    agentsPrefix: 'a2a:',
    clockToleranceSeconds: 30,
    keys: { kind: 'url', url, refreshSeconds, privateNetwork: false },
  };
}

interface Harness {
  jwt: JwtAuthenticator;
  logs: Record<string, unknown>[];
  advance: (ms: number) => void;
}

function captureLogger(logs: Record<string, unknown>[]): Logger {
  return {
    info: (fields) => logs.push({ level: 'info', ...fields }),
    warn: (fields) => logs.push({ level: 'warn', ...fields }),
    error: (fields) => logs.push({ level: 'error', ...fields }),
  };
}

async function failure(jwt: JwtAuthenticator, token: string): Promise<JwtFailure | 'ok'> {
  const verified = await jwt.verify(token);
  return verified.ok ? 'ok' : verified.failure;
}

describe('JwtAuthenticator: keys from a JWKS URL (guarded client, loopback server)', () => {
  let server: JwksServer;
  let client: GuardedClient;
  const open: JwtAuthenticator[] = [];

  before(async () => {
    server = await startJwksServer();
    client = createGuardedClient({});
  });
  after(async () => {
    await Promise.all(open.map((jwt) => jwt.close()));
    await client.close();
    await server.close();
  });

  function harness(url = server.url, refreshSeconds = 600): Harness {
    let clock = 1_000_000;
    const logs: Record<string, unknown>[] = [];
    const jwt = new JwtAuthenticator(urlSettings(url, refreshSeconds), {
      client,
      logger: captureLogger(logs),
      now: () => clock,
    });
    open.push(jwt);
    return { jwt, logs, advance: (ms) => (clock += ms) };
  }

  it('fetches at construction without blocking, then admits a token signed by the served key', async () => {
    server.serveKeys(k1);
    const before = server.hits();
    const { jwt, logs } = harness();
    assert.equal(await jwt.ready(), true);
    assert.equal(server.hits(), before + 1);
    const admitted = await jwt.authenticate(await mint(k1), 'echo');
    assert.ok(admitted.ok);
    assert.equal(admitted.principal.kind, 'service');
    assert.equal(admitted.principal.subject, 'svc-1');
    assert.equal((await jwt.authenticate(await mint(k1), 'other')).ok, false);
    assert.equal(await failure(jwt, await mint(k3)), 'no_matching_key');
    assert.ok(logs.some((line) => line.event === 'jwks_loaded' && line.jwksOrigin === server.base));
  });

  it('picks up a rotated key on an unknown kid, once the 30 s on-demand limit allows', async () => {
    server.serveKeys(k1);
    const { jwt, advance } = harness();
    assert.equal(await jwt.ready(), true);
    server.serveKeys(k2);
    const start = server.hits();
    // Within 30 s of the first fetch: no fetch, the unknown kid is refused.
    assert.equal(await failure(jwt, await mint(k2)), 'no_matching_key');
    assert.equal(server.hits(), start);
    advance(JWKS_ON_DEMAND_INTERVAL_MS);
    assert.equal(await failure(jwt, await mint(k2)), 'ok');
    assert.equal(server.hits(), start + 1);
    // The rotated set replaced the old one: k1 is gone.
    assert.equal(await failure(jwt, await mint(k1)), 'no_matching_key');
  });

  it('refuses a token it verified before, once its key has left the set (the verified tokens go with the old set)', async () => {
    server.serveKeys(k1, k2);
    const { jwt } = harness();
    assert.equal(await jwt.ready(), true);
    const token = await mint(k1);
    assert.equal(await failure(jwt, token), 'ok');
    assert.equal(await failure(jwt, token), 'ok');
    server.serveKeys(k2);
    assert.equal(await jwt.refreshKeys(), true);
    assert.equal(await failure(jwt, token), 'no_matching_key');
  });

  it('fetches at most once per 30 s however many unknown kids arrive', async () => {
    server.serveKeys(k1);
    const { jwt, advance } = harness();
    await jwt.ready();
    advance(JWKS_ON_DEMAND_INTERVAL_MS);
    const start = server.hits();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => mint(k3)));
    // Concurrently: one shared fetch.
    const results = await Promise.all(tokens.map((token) => failure(jwt, token)));
    assert.ok(results.every((result) => result === 'no_matching_key'));
    assert.equal(server.hits(), start + 1);
    // Sequentially, 29 s later: still that one fetch.
    advance(JWKS_ON_DEMAND_INTERVAL_MS - 1000);
    for (const token of tokens) assert.equal(await failure(jwt, token), 'no_matching_key');
    assert.equal(server.hits(), start + 1);
    advance(1000);
    assert.equal(await failure(jwt, tokens[0] as string), 'no_matching_key');
    assert.equal(server.hits(), start + 2);
    // Known kids never cause a fetch.
    advance(JWKS_ON_DEMAND_INTERVAL_MS);
    assert.equal(await failure(jwt, await mint(k1)), 'ok');
    assert.equal(server.hits(), start + 2);
  });

  it('keeps the last good set when the JWKS server goes down, and logs without the URL query', async () => {
    const own = await startJwksServer();
    own.serveKeys(k1);
    const { jwt, logs, advance } = harness(own.url);
    assert.equal(await jwt.ready(), true);
    await own.close();
    assert.equal(await jwt.refreshKeys(), false);
    advance(JWKS_ON_DEMAND_INTERVAL_MS);
    assert.equal(await failure(jwt, await mint(k2)), 'no_matching_key'); // on-demand fetch fails too
    assert.equal(await failure(jwt, await mint(k1)), 'ok');
    const failures = logs.filter((line) => line.event === 'jwks_refresh_failed');
    assert.equal(failures.length, 2);
    assert.equal(failures[0]?.reason, 'network_error');
    assert.equal(failures[0]?.level, 'warn');
    const text = JSON.stringify(logs);
    assert.ok(!text.includes('s3cr3t') && !text.includes('/jwks.json'), text);
  });

  it('refuses every JWT with 401 (not 500) before the first successful fetch, then recovers', async () => {
    server.serve((_req, res) => {
      res.writeHead(500);
      res.end('down');
    });
    const { jwt, logs, advance } = harness();
    assert.equal(await jwt.ready(), false);
    assert.equal(await failure(jwt, await mint(k1)), 'keys_unavailable');
    assert.deepEqual(await jwt.authenticate(await mint(k1), 'echo'), {
      ok: false,
      status: 401,
      reason: 'invalid_credentials',
    });
    const unavailable = logs.filter((line) => line.event === 'jwt_keys_unavailable');
    assert.equal(unavailable.length, 1, 'logged once per 30 s, not per request');
    assert.match(String(unavailable[0]?.message), /401.*no key set has been fetched/);
    const failed = logs.find((line) => line.event === 'jwks_refresh_failed');
    assert.match(String(failed?.error), /answered HTTP 500/);
    assert.equal(failed?.reason, 'http_status');
    // The IdP comes back; the next token after 30 s brings the keys in.
    server.serveKeys(k1);
    advance(JWKS_ON_DEMAND_INTERVAL_MS);
    assert.equal(await failure(jwt, await mint(k1)), 'ok');
  });

  it('lets a token that arrives during the first fetch wait for it', async () => {
    let release: (() => void) | undefined;
    server.serve((req, res) => {
      release = () => json({ keys: [k1.jwk] })(req, res);
    });
    const { jwt } = harness();
    const pending = failure(jwt, await mint(k1));
    while (release === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    assert.equal(await pending, 'ok');
    assert.equal(await jwt.ready(), true);
  });

  it('refuses an oversized JWKS (> 64 KiB) and keeps the old keys', async () => {
    server.serveKeys(k1);
    const { jwt, logs } = harness();
    await jwt.ready();
    const padding = Array.from({ length: 1200 }, (_, i) => ({ ...k2.jwk, kid: `pad-${i}` }));
    const big = JSON.stringify({ keys: [k2.jwk, ...padding] });
    assert.ok(big.length > MAX_JWKS_BYTES);
    server.serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(big);
    });
    assert.equal(await jwt.refreshKeys(), false);
    assert.equal(logs.at(-1)?.reason, 'response_too_large');
    assert.equal(await failure(jwt, await mint(k1)), 'ok');
    assert.equal(await failure(jwt, await mint(k2)), 'no_matching_key');
  });

  it('refuses a redirect (never followed) and keeps the old keys', async () => {
    server.serveKeys(k1);
    const { jwt, logs } = harness();
    await jwt.ready();
    server.serve((_req, res) => {
      res.writeHead(302, { location: `${server.base}/elsewhere.json` });
      res.end();
    });
    const others = server.otherHits();
    assert.equal(await jwt.refreshKeys(), false);
    assert.equal(logs.at(-1)?.reason, 'redirect_refused');
    assert.equal(server.otherHits(), others);
    assert.equal(await failure(jwt, await mint(k1)), 'ok');
    assert.equal(await failure(jwt, await mint(k3)), 'no_matching_key');
  });

  it('refuses documents that are not a JWKS and keeps the old keys', async () => {
    server.serveKeys(k1);
    const { jwt, logs } = harness();
    await jwt.ready();
    const bad: Handler[] = [
      json({ keys: [] }),
      json({ keys: ['nope'] }),
      json([k2.jwk]),
      json({ keys: [{ ...k2.jwk }, null] }),
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"keys": [');
      },
      (_req, res) => {
        res.writeHead(404);
        res.end();
      },
    ];
    for (const handler of bad) {
      server.serve(handler);
      assert.equal(await jwt.refreshKeys(), false);
      assert.equal(logs.at(-1)?.event, 'jwks_refresh_failed');
    }
    assert.equal(await failure(jwt, await mint(k1)), 'ok');
    assert.equal(await failure(jwt, await mint(k2)), 'no_matching_key');
  });

  it('refreshes in the background every refreshSeconds, and close() stops it', async () => {
    server.serveKeys(k1);
    const { jwt } = harness(server.url, 0.05);
    await jwt.ready();
    server.serveKeys(k1, k2);
    const start = server.hits();
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(server.hits() > start, 'the timer fetched again');
    assert.equal(await failure(jwt, await mint(k2)), 'ok');
    await jwt.close();
    // A fetch already on the wire when close() ran may still land; nothing starts afterwards.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stopped = server.hits();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(server.hits(), stopped);
  });

  it('passes the private-network flag to the fetcher, and the guarded client refuses a private host without it', async () => {
    const seen: unknown[] = [];
    const jwt = new JwtAuthenticator(
      {
        ...urlSettings('https://idp.internal/jwks'),
        keys: { kind: 'url', url: 'https://idp.internal/jwks', refreshSeconds: 600, privateNetwork: true },
      },
      {
        fetchJwks: async (url, options) => {
          seen.push({ url, privateNetwork: options.privateNetwork });
          return { keys: [k1.jwk] };
        },
        logger: captureLogger([]),
      },
    );
    open.push(jwt);
    assert.equal(await jwt.ready(), true);
    assert.deepEqual(seen, [{ url: 'https://idp.internal/jwks', privateNetwork: true }]);

    const logs: Record<string, unknown>[] = [];
    const blocked = new JwtAuthenticator(urlSettings('https://10.1.2.3/jwks'), { client, logger: captureLogger(logs) });
    open.push(blocked);
    assert.equal(await blocked.ready(), false);
    assert.equal(logs.at(-1)?.reason, 'address_blocked');
  });

  it('works through Authenticator.fromConfig with the options passed on', async () => {
    server.serveKeys(k1);
    const logs: Record<string, unknown>[] = [];
    const auth = Authenticator.fromConfig(
      { clients: [], jwt: urlSettings(server.url), server: { apiKeyHeader: false } },
      { client, logger: captureLogger(logs) },
    );
    try {
      assert.equal(await auth.ready(), true);
      const outcome = await auth.authenticate({ authorization: `Bearer ${await mint(k1)}` }, 'echo', false, false);
      assert.equal(outcome.ok, true);
      const refused = await auth.authenticate({ authorization: `Bearer ${await mint(k3)}` }, 'echo', false, false);
      assert.deepEqual(refused, { ok: false, status: 401, reason: 'invalid_credentials' });
    } finally {
      await auth.close();
    }
  });
});

describe('auth.jwt.jwksUrl in the configuration', () => {
  const AGENT = `
agents:
  - { slug: echo, name: Echo, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
`;
  function load(jwt: string): JwtSettings | undefined {
    return parseConfig(`${AGENT}auth:\n  jwt: { issuer: i, audience: a, ${jwt} }\n`, {}).jwt;
  }
  function refused(jwt: string, key: string, message: RegExp): void {
    assert.throws(
      () => load(jwt),
      (error: unknown) => error instanceof ConfigError && error.key === key && message.test(error.message),
    );
  }

  it('reads a JWKS URL with the default refresh interval and private-network flag', () => {
    assert.deepEqual(load('jwksUrl: "https://idp.example/jwks.json"')?.keys, {
      kind: 'url',
      url: 'https://idp.example/jwks.json',
      refreshSeconds: 600,
      privateNetwork: false,
    });
    assert.deepEqual(load('jwksUrl: "https://idp.corp/jwks", jwksRefreshSeconds: 30, jwksPrivateNetwork: true')?.keys, {
      kind: 'url',
      url: 'https://idp.corp/jwks',
      refreshSeconds: 30,
      privateNetwork: true,
    });
    assert.equal(load('jwksUrl: "http://127.0.0.1:8080/jwks"')?.keys.kind, 'url');
    assert.equal(load('jwksUrl: "http://localhost:8080/jwks"')?.keys.kind, 'url');
  });

  it('wants exactly one key source', () => {
    refused(
      'jwksUrl: "https://idp/j", jwksFile: /tmp/x.json',
      'auth.jwt',
      /exactly one of jwksFile or publicKeyFile or jwksUrl/,
    );
    refused('jwksUrl: "https://idp/j", publicKeyFile: /tmp/x.pem', 'auth.jwt', /exactly one/);
  });

  it('refuses plain http to a non-loopback host, other schemes, credentials and bad URLs', () => {
    refused('jwksUrl: "http://idp.example/jwks.json"', 'auth.jwt.jwksUrl', /plain http is allowed only to loopback/);
    refused('jwksUrl: "http://0x7f.1/jwks.json"', 'auth.jwt.jwksUrl', /loopback/);
    refused('jwksUrl: "ftp://idp.example/jwks.json"', 'auth.jwt.jwksUrl', /not allowed/);
    refused('jwksUrl: "not a url"', 'auth.jwt.jwksUrl', /not a valid absolute URL/);
    assert.throws(
      () => load('jwksUrl: "https://user:hunter2@idp.example/jwks"'),
      (error: unknown) =>
        error instanceof ConfigError && error.key === 'auth.jwt.jwksUrl' && !error.message.includes('hunter2'),
    );
  });

  it('bounds the refresh interval and ties the URL options to jwksUrl', () => {
    refused('jwksUrl: "https://idp/j", jwksRefreshSeconds: 29', 'auth.jwt.jwksRefreshSeconds', /30/);
    refused('jwksFile: /tmp/x.json, jwksRefreshSeconds: 60', 'auth.jwt.jwksRefreshSeconds', /only with jwksUrl/);
    refused('publicKeyFile: /tmp/x.pem, jwksPrivateNetwork: true', 'auth.jwt.jwksPrivateNetwork', /only with jwksUrl/);
  });
});
