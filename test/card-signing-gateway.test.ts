/**
 * Signed cards served by a real gateway (`signing` in the config), on loopback:
 *
 * - configuration: key files read and checked at load (a private key others can read, a key
 *   set missing a signing key or holding private material, `jku: true` without a public URL,
 *   the same key twice are refused with a ConfigError naming the key);
 * - every card the gateway serves, in both shapes and at every path, and the extended card in
 *   both dialects, carries one signature per configured key (rotation), and each verifies with
 *   Airlock and with the official SDK's `verifyAgentCardSignature`;
 * - signatures are computed once per card, not per request (ECDSA signatures are randomized, so
 *   identical bytes across requests can only come from a cache);
 * - `/.well-known/jwks.json` publishes the public keys only, with an ETag, and follows
 *   `publicCard: false` as cards do;
 * - `airlock card fetch` against the gateway reports a verified signature, as a function and
 *   through the real command line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, mock } from 'node:test';
import { verifyAgentCardSignature, type AgentCard as SdkAgentCard } from '@a2a-js/sdk';
import { cardFetchCommand } from '../src/cli/card.js';
import { captureIO } from './helpers/command-io.js';
import { ConfigError } from '../src/config/errors.js';
import { parseConfig } from '../src/config/load.js';
import {
  generateSigningKey,
  importKeySet,
  importSigningKey,
  signCard,
  verifyCardSignatures,
  type GeneratedSigningKey,
  type SignatureCoverage,
} from '../src/trust/signing/index.js';
import {
  DEFAULT_YAML,
  rpc,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  TOKEN_C,
  withServer,
  type TestGateway,
} from './helpers/gateway.js';
import { CLI } from './helpers/cli.js';

type Json = Record<string, unknown>;
type Shape = '1.0' | '0.3';

// The SDK's verifier logs each signature it skips with console.debug (here: the other key's).
mock.method(console, 'debug', () => undefined);

const JKU = 'https://gw.example/.well-known/jwks.json';
const TOKENS = { TOKEN_A, TOKEN_B, TOKEN_C };
const dir = mkdtempSync(join(tmpdir(), 'airlock-signing-gateway-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a private JWK as `airlock keys generate` does: readable by its owner only. */
function writePrivateKey(key: GeneratedSigningKey, name = `${key.kid}.private.jwk.json`, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(key.privateJwk), { mode });
  chmodSync(path, mode);
  return path;
}

function writeJson(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

/** DEFAULT_YAML with a `signing` section (YAML flow mappings, one per line). */
function signingYaml(signing: string, yaml = DEFAULT_YAML): string {
  return `${yaml}\nsigning:\n${signing}\n`;
}

/** The SDK's verifier, resolving kids from the given keys; records the jku hints it was given. */
function sdkVerifier(keys: readonly GeneratedSigningKey[], hints: (string | undefined)[] = []) {
  return verifyAgentCardSignature(async (kid, jku) => {
    hints.push(jku);
    const key = keys.find((candidate) => candidate.kid === kid);
    if (key === undefined) throw new Error(`unknown kid ${kid}`);
    return key.publicJwk;
  });
}

/** Airlock serves v0.3 security schemes in their v0.3 form, which no signature covers. */
const coverageFor = (shape: Shape): SignatureCoverage => (shape === '1.0' ? 'trust-fields' : 'interfaces');

function kidsOf(card: Json): string[] {
  const signatures = card.signatures as { protected: string }[];
  return signatures.map((entry) => JSON.parse(Buffer.from(entry.protected, 'base64url').toString('utf8')).kid);
}

describe('signing configuration', () => {
  let key: GeneratedSigningKey;
  let other: GeneratedSigningKey;
  before(async () => {
    [key, other] = await Promise.all([generateSigningKey('ES256'), generateSigningKey('EdDSA')]);
  });

  const refuses = (yaml: string, key: string, message: RegExp) =>
    assert.throws(
      () => parseConfig(yaml, TOKENS),
      (error: unknown) => error instanceof ConfigError && error.key === key && message.test(error.message),
    );

  it('loads the keys at startup, and serves their public halves by default', () => {
    const file = writePrivateKey(key);
    const config = parseConfig(signingYaml(`  keys: [{ file: '${file}' }]`), TOKENS);
    assert.deepEqual(
      config.signing?.keys.map((signer) => [signer.kid, signer.alg]),
      [[key.kid, 'ES256']],
    );
    assert.deepEqual(config.signing?.jwks, { keys: [key.publicJwk] });
    assert.equal(config.signing?.jku, undefined);
  });

  it('refuses a private key file that group or others may read, like ssh does', () => {
    const file = writePrivateKey(key, 'loose.private.jwk.json', 0o644);
    refuses(
      signingYaml(`  keys: [{ file: '${file}' }]`),
      'signing.keys[0].file',
      /is accessible by group or others \(mode 0644\); a private key must be readable by its owner only: chmod 600 /,
    );
  });

  it('refuses a missing file, a public key as a signing key, and the same key twice', () => {
    refuses(
      signingYaml(`  keys: [{ file: '${join(dir, 'missing.jwk')}' }]`),
      'signing.keys[0].file',
      /missing\.jwk: file not found/,
    );
    const publicOnly = writeJson('public-only.jwk.json', key.publicJwk);
    chmodSync(publicOnly, 0o600);
    refuses(
      signingYaml(`  keys: [{ file: '${publicOnly}' }]`),
      'signing.keys[0].file',
      /is a public key; signing needs the private JWK/,
    );
    const file = writePrivateKey(key);
    const copy = writePrivateKey(key, 'copy.private.jwk.json');
    refuses(
      signingYaml(`  keys: [{ file: '${file}' }, { file: '${copy}' }]`),
      'signing.keys[1].file',
      /a second key with the kid/,
    );
  });

  it('refuses a served key set that lacks a signing key or holds private material', () => {
    const file = writePrivateKey(key);
    const lacking = writeJson('lacking-jwks.json', { keys: [other.publicJwk] });
    refuses(
      signingYaml(`  keys: [{ file: '${file}' }]\n  jwksFile: '${lacking}'`),
      'signing.jwksFile',
      new RegExp(`lacks the signing key "${key.kid}"`),
    );
    const leaking = writeJson('leaking-jwks.json', { keys: [key.privateJwk] });
    refuses(
      signingYaml(`  keys: [{ file: '${file}' }]\n  jwksFile: '${leaking}'`),
      'signing.jwksFile',
      /holds private key material/,
    );
    // A larger set (a retired key still published for verifiers) is fine.
    const wider = writeJson('wider-jwks.json', { keys: [other.publicJwk, key.publicJwk] });
    const config = parseConfig(signingYaml(`  keys: [{ file: '${file}' }]\n  jwksFile: '${wider}'`), TOKENS);
    assert.deepEqual(
      config.signing?.jwks.keys.map((jwk) => jwk.kid),
      [other.kid, key.kid],
    );
  });

  it('puts a jku in the headers only when asked: true needs an https server.publicUrl', () => {
    const file = writePrivateKey(key);
    refuses(signingYaml(`  keys: [{ file: '${file}' }]\n  jku: true`), 'signing.jku', /true needs server\.publicUrl/);
    refuses(
      signingYaml(`  keys: [{ file: '${file}' }]\n  jku: true`, withServer('{ publicUrl: "http://gw.example" }')),
      'signing.jku',
      /needs an https server\.publicUrl/,
    );
    const derived = parseConfig(
      signingYaml(`  keys: [{ file: '${file}' }]\n  jku: true`, withServer('{ publicUrl: "https://gw.example/x/" }')),
      TOKENS,
    );
    assert.equal(derived.signing?.jku, 'https://gw.example/x/.well-known/jwks.json');
    refuses(
      signingYaml(`  keys: [{ file: '${file}' }]\n  jku: 'http://gw.example/jwks.json'`),
      'signing.jku',
      /must be true, false or an https URL/,
    );
  });
});

describe('a gateway that signs its cards', () => {
  let gw: TestGateway;
  let newKey: GeneratedSigningKey;
  let oldKey: GeneratedSigningKey;
  let jwksPath: string;
  const keys = (): GeneratedSigningKey[] => [newKey, oldKey];

  before(async () => {
    // Two keys at once: the state during a rotation.
    [newKey, oldKey] = await Promise.all([generateSigningKey('ES256'), generateSigningKey('EdDSA')]);
    const yaml = signingYaml(
      `  keys: [{ file: '${writePrivateKey(newKey)}' }, { file: '${writePrivateKey(oldKey)}' }]\n  jku: ${JKU}`,
    );
    gw = await startGateway(yaml);
    jwksPath = writeJson('served-jwks.json', { keys: [newKey.publicJwk, oldKey.publicJwk] });
  });
  after(() => gw.close());

  async function fetchCard(path: string, shape?: Shape): Promise<{ text: string; etag: string | null }> {
    const response = await fetch(`${gw.url}${path}`, { headers: shape === undefined ? {} : { 'A2A-Version': shape } });
    assert.equal(response.status, 200);
    return { text: await response.text(), etag: response.headers.get('etag') };
  }

  async function extendedCard(shape: Shape): Promise<string> {
    const method = shape === '1.0' ? 'GetExtendedAgentCard' : 'agent/getAuthenticatedExtendedCard';
    const response = await rpc(`${gw.url}/a2a/echo`, method, {}, { version: shape });
    assert.equal(response.status, 200);
    assert.equal(response.body.error, undefined);
    return JSON.stringify(response.body.result);
  }

  async function verifiesBothWays(text: string, shape: Shape): Promise<void> {
    const card = JSON.parse(text) as Json;
    assert.deepEqual(kidsOf(card), [newKey.kid, oldKey.kid], 'one signature per configured key, in order');
    for (const only of keys()) {
      const verdict = await verifyCardSignatures(text, importKeySet({ keys: [only.publicJwk] }), {
        requireSigned: true,
        coverage: coverageFor(shape),
      });
      assert.equal(verdict.status === 'verified' && verdict.kid, only.kid);
    }
    const hints: (string | undefined)[] = [];
    await sdkVerifier(keys(), hints)(card as unknown as SdkAgentCard);
    assert.equal(hints[0], JKU);
  }

  for (const shape of ['1.0', '0.3'] as const) {
    it(`serves v${shape} cards at every card path, each signed by both keys and verified by Airlock and the SDK`, async () => {
      for (const path of ['/.well-known/agent-card.json', '/a2a/echo/.well-known/agent-card.json']) {
        await verifiesBothWays((await fetchCard(path, shape)).text, shape);
      }
      await verifiesBothWays(
        (await fetchCard(`/v${shape}/.well-known/agent-card.json`.replace('/v', '/a2a/echo/v'))).text,
        shape,
      );
    });

    it(`signs the v${shape} extended card, which verifies with Airlock and the SDK`, async () => {
      const text = await extendedCard(shape);
      assert.match(text, /Echoes, for members\./);
      await verifiesBothWays(text, shape);
    });
  }

  it('v1.0 cards verify with full coverage, endpoints included: a changed endpoint fails', async () => {
    const text = (await fetchCard('/a2a/echo/.well-known/agent-card.json', '1.0')).text;
    const verdict = await verifyCardSignatures(text, importKeySet({ keys: [newKey.publicJwk] }), {
      requireSigned: true,
    });
    assert.equal(verdict.status, 'verified');
    const tampered = JSON.parse(text) as { supportedInterfaces: { url: string }[] };
    tampered.supportedInterfaces[0]!.url = 'http://127.0.0.1:9/a2a/evil';
    await assert.rejects(
      verifyCardSignatures(JSON.stringify(tampered), importKeySet({ keys: [newKey.publicJwk] }), {
        requireSigned: true,
      }),
      /no signature verifies/,
    );
  });

  it('signs each card once, not per request: repeated requests get the very same signature bytes', async () => {
    // ECDSA signatures are randomized: two signings of one card never give the same bytes…
    const card = JSON.parse((await fetchCard('/a2a/echo/.well-known/agent-card.json', '1.0')).text) as Json;
    const signer = importSigningKey(newKey.privateJwk);
    assert.notDeepEqual(signCard(card, [signer]).signatures, signCard(card, [signer]).signatures);
    // …so identical bytes across requests can only come from the cache.
    for (const shape of ['1.0', '0.3'] as const) {
      const first = await fetchCard('/a2a/echo/.well-known/agent-card.json', shape);
      const second = await fetchCard('/a2a/echo/.well-known/agent-card.json', shape);
      assert.equal(second.text, first.text);
      assert.equal(second.etag, first.etag);
      assert.equal(await extendedCard(shape), await extendedCard(shape));
    }
  });

  it('publishes the public keys at /.well-known/jwks.json (no private members), with an ETag, GET and HEAD', async () => {
    for (const path of ['/.well-known/jwks.json', '/a2a/echo/.well-known/jwks.json']) {
      const response = await fetch(`${gw.url}${path}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/jwk-set+json');
      assert.equal(response.headers.get('cache-control'), 'public, max-age=300');
      const text = await response.text();
      const jwks = JSON.parse(text) as { keys: Json[] };
      assert.deepEqual(jwks, { keys: [newKey.publicJwk, oldKey.publicJwk] });
      for (const jwk of jwks.keys)
        for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) assert.equal(jwk[member], undefined);
      // What it serves is a set verifiers can load as it is.
      assert.deepEqual(importKeySet(jwks).kids(), [newKey.kid, oldKey.kid]);
      const etag = response.headers.get('etag')!;
      const again = await fetch(`${gw.url}${path}`, { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304);
      const head = await fetch(`${gw.url}${path}`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(text)));
      assert.equal(await head.text(), '');
      assert.equal((await fetch(`${gw.url}${path}`, { method: 'POST' })).status, 405);
    }
  });

  it('airlock card fetch against it shows a verified signature (the function, with --keys)', async () => {
    const io = captureIO({ AIRLOCK_PRIVATE_ALLOW: '127.0.0.1' });
    const url = `${gw.url}/a2a/echo/.well-known/agent-card.json`;
    assert.equal(await cardFetchCommand(url, { keys: jwksPath }, io), 0, io.err);
    assert.deepEqual(kidsOf(JSON.parse(io.out) as Json), [newKey.kid, oldKey.kid]);
    assert.match(io.err, /^airlock: trust {7}[0-9a-f]{64}$/m);
    assert.match(io.err, /^airlock: signatures {2}2$/m);
    assert.match(io.err, new RegExp(`^airlock: verified {4}ES256 signature by kid ${newKey.kid}$`, 'm'));
  });

  it('airlock card fetch against it shows a verified signature (the real command line)', async () => {
    const url = `${gw.url}/a2a/echo/.well-known/agent-card.json`;
    const run = await airlockCli(['card', 'fetch', url, '--keys', jwksPath]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(kidsOf(JSON.parse(run.stdout) as Json), [newKey.kid, oldKey.kid]);
    assert.match(run.stderr, new RegExp(`^airlock: verified {4}ES256 signature by kid ${newKey.kid}$`, 'm'));
    // Only the old key trusted: the rotation's other signature verifies.
    const oldOnly = writeJson('old-only-jwks.json', { keys: [oldKey.publicJwk] });
    const rotated = await airlockCli(['card', 'verify', url, '--keys', oldOnly]);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.equal(rotated.stdout, `verified  EdDSA signature by kid ${oldKey.kid}\n`);
  });
});

describe('/.well-known/jwks.json without signing, and behind publicCard: false', () => {
  let unsigned: TestGateway;
  let closed: TestGateway;
  let key: GeneratedSigningKey;

  before(async () => {
    key = await generateSigningKey('ES256');
    unsigned = await startGateway();
    closed = await startGateway(
      signingYaml(
        `  keys: [{ file: '${writePrivateKey(key)}' }]`,
        withServer('{ host: 127.0.0.1, port: 0, defaultAgent: echo, publicCard: false }'),
      ),
    );
  });
  after(async () => {
    await Promise.all([unsigned.close(), closed.close()]);
  });

  it('answers 404 when the gateway does not sign its cards, and cards carry no signatures', async () => {
    assert.equal((await fetch(`${unsigned.url}/.well-known/jwks.json`)).status, 404);
    assert.equal((await fetch(`${unsigned.url}/a2a/echo/.well-known/jwks.json`)).status, 404);
    const card = (await (await fetch(`${unsigned.url}/a2a/echo/.well-known/agent-card.json`)).json()) as Json;
    assert.equal(card.signatures, undefined);
  });

  it('asks for credentials as cards do: the default agent’s at the root, the agent’s on its own path', async () => {
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    assert.equal((await fetch(`${closed.url}/.well-known/jwks.json`)).status, 401);
    const admitted = await fetch(`${closed.url}/.well-known/jwks.json`, { headers: bearer(TOKEN_A) });
    assert.equal(admitted.status, 200);
    assert.equal(admitted.headers.get('cache-control'), 'private, max-age=300');
    assert.deepEqual(await admitted.json(), { keys: [key.publicJwk] });
    // Client c may call echo only.
    assert.equal(
      (await fetch(`${closed.url}/a2a/writer/.well-known/jwks.json`, { headers: bearer(TOKEN_C) })).status,
      403,
    );
    assert.equal(
      (await fetch(`${closed.url}/a2a/echo/.well-known/jwks.json`, { headers: bearer(TOKEN_C) })).status,
      200,
    );
  });
});

/** `airlock …` in a child process (asynchronously: the gateway it calls runs in this process). */
function airlockCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...CLI, ...args], {
      env: { ...process.env, AIRLOCK_PRIVATE_ALLOW: '127.0.0.1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}
