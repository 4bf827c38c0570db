/**
 * The outbound client with `card_keys` in its registry, against real loopback servers: a
 * gateway that signs its cards, one that does not, and small servers that serve forged cards.
 *
 * Airlock gateways refuse requests that carry the hop header, and Airlock's outbound client
 * sets it on every request (no loops through two Airlocks). To call a real Airlock gateway with
 * Airlock's own client anyway, each gateway here sits behind a test front that drops the
 * header and passes everything else through unchanged (Host included, so the gateway writes
 * the front's address into its cards and signs that). No production front should drop it.
 *
 * Covered: a verified card is used (send works, the pin is written, `airlock agents` and
 * `card fetch <name>` show the signature); an unsigned, tampered or incompletely covered card is
 * refused with `card_signature_invalid` before anything is pinned or called; `jwks_url` must be
 * on the card's origin, goes through the transport, is cached for its TTL, and is fetched again
 * early (at most every 30 s) when a card names a key the cached set lacks.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkEntry } from '../src/cli/agents.js';
import { cardFetchCommand } from '../src/cli/card.js';
import { captureIO } from './helpers/command-io.js';
import {
  RegistryError,
  cardTrustEntry,
  createOutboundClient,
  loadRegistryFile,
  parseRegistry,
  type OutboundRuntime,
} from '../src/client/index.js';
import { withHopHeader } from '../src/client/wiring.js';
import { createGuardedClient, parseEnvSettings } from '../src/net/index.js';
import { HOP_HEADER } from '../src/protocol/headers.js';
import { encodeCardV10 } from '../src/protocol/card.js';
import type { AgentCard } from '../src/protocol/model.js';
import { CardTrust, CardTrustError, PinStore } from '../src/trust/index.js';
import {
  generateSigningKey,
  importSigningKey,
  signCard,
  type GeneratedSigningKey,
} from '../src/trust/signing/index.js';
import { DEFAULT_YAML, startGateway, TOKEN_A, type TestGateway } from './helpers/gateway.js';

type Json = Record<string, unknown>;

const dir = mkdtempSync(join(tmpdir(), 'airlock-outbound-signatures-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A loopback server in front of a gateway: passes requests through without the hop header. */
interface Front {
  url: string;
  /** `METHOD path` of every request, in order. */
  seen: string[];
  close(): Promise<void>;
}

async function startFront(target: string): Promise<Front> {
  const { port } = new URL(target);
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const headers = { ...req.headers };
    delete headers[HOP_HEADER];
    const upstream = httpRequest(
      { host: '127.0.0.1', port: Number(port), method: req.method, path: req.url, headers },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return listen(server, seen);
}

/** A loopback server that answers from `routes` (by path), recording every request. */
async function startStatic(routes: Map<string, () => { body: string; type?: string }>): Promise<Front> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const route = req.method === 'GET' ? routes.get(req.url ?? '') : undefined;
    if (route === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    const { body, type } = route();
    res.writeHead(200, { 'content-type': type ?? 'application/json' });
    res.end(body);
  });
  return listen(server, seen);
}

async function listen(server: Server, seen: string[]): Promise<Front> {
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

function writeFile(name: string, text: string, mode = 0o644): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode });
  chmodSync(path, mode);
  return path;
}

const CARD_PATH = '/a2a/echo/.well-known/agent-card.json';
const ENV = { AIRLOCK_SECRET_GW: TOKEN_A };

/** A registry entry as YAML; `extra` is more YAML at the entry's indentation. */
function entry(name: string, cardUrl: string, extra = ''): string {
  return `  - name: ${name}
    card_url: ${cardUrl}
    description: An Airlock gateway.
    effect: read_only
    auth: { bearer_env: AIRLOCK_SECRET_GW }
    poll_interval_s: 0.05
${extra}`;
}

describe('outbound calls to an entry with card_keys', () => {
  let key: GeneratedSigningKey;
  let signing: TestGateway;
  let unsigned: TestGateway;
  let signedFront: Front;
  let unsignedFront: Front;
  let forger: Front;
  /** What the forger serves at CARD_PATH. */
  let forged = '';
  let registryPath = '';
  let pinsPath = '';
  const logs: { event: string; fields: Json }[] = [];
  let runtime: OutboundRuntime;

  before(async () => {
    key = await generateSigningKey('ES256');
    const keyFile = writeFile('gateway.private.jwk.json', JSON.stringify(key.privateJwk), 0o600);
    signing = await startGateway(`${DEFAULT_YAML}\nsigning:\n  keys: [{ file: '${keyFile}' }]\n`);
    unsigned = await startGateway();
    [signedFront, unsignedFront] = await Promise.all([startFront(signing.url), startFront(unsigned.url)]);
    forger = await startStatic(new Map([[CARD_PATH, () => ({ body: forged })]]));
    // The operator's copy of the gateway's public keys, next to the registry (relative path).
    mkdirSync(join(dir, 'keys'));
    writeFile('keys/gateway-jwks.json', await (await fetch(`${signing.url}/.well-known/jwks.json`)).text());
    const keys = '    card_keys: { jwks_file: keys/gateway-jwks.json }\n';
    registryPath = writeFile(
      'registry.yaml',
      [
        'agents:\n',
        entry('signed', `${signedFront.url}${CARD_PATH}`, keys),
        entry('unsigned', `${unsignedFront.url}${CARD_PATH}`, keys),
        entry('tolerant', `${unsignedFront.url}${CARD_PATH}`, `${keys}    require_signed_card: false\n`),
        entry('forged', `${forger.url}${CARD_PATH}`, keys),
        entry(
          'by-url',
          `${signedFront.url}${CARD_PATH}`,
          `    card_keys: { jwks_url: ${signedFront.url}/.well-known/jwks.json }\n`,
        ),
      ].join(''),
    );
    pinsPath = join(dir, 'state', 'pins.json');
    runtime = createOutboundClient({
      registryPath,
      env: ENV,
      pinsPath,
      log: (event, fields) => logs.push({ event, fields }),
    });
  });
  after(async () => {
    await runtime.close();
    await Promise.all([signedFront.close(), unsignedFront.close(), forger.close()]);
    await Promise.all([signing.close(), unsigned.close()]);
  });

  const refusals = (name: string) =>
    logs.filter((line) => line.event === 'card_signature_refused' && line.fields.entry === name);

  it('uses a card whose signature verifies: the send works, the pin is written, agents shows the signature', async () => {
    const result = await runtime.send({ agent: 'signed', message: 'hello signed' });
    assert.equal(result.error_type, null, result.error_message ?? '');
    assert.equal(result.status, 'success');
    assert.match(result.reply, /hello signed/);
    const pin = await runtime.pins.get('signed');
    assert.equal(pin?.source, 'tofu');
    const trusted = await runtime.trust.resolve(cardTrustEntry(runtime.registry.get('signed')));
    assert.deepEqual(trusted.signature, { kid: key.kid, alg: 'ES256' });
    assert.equal(trusted.digest, pin?.digest);
    const row = await checkEntry(runtime, runtime.registry.get('signed'));
    assert.deepEqual([row.status, row.signature], ['ok', { kid: key.kid, alg: 'ES256' }]);
  });

  it('refuses an unsigned card when the entry requires a signature: card_signature_invalid, nothing pinned or called', async () => {
    const result = await runtime.send({ agent: 'unsigned', message: 'hello' });
    assert.equal(result.status, 'error');
    assert.equal(result.error_type, 'card_signature_invalid');
    assert.equal(await runtime.pins.get('unsigned'), undefined);
    assert.deepEqual(
      refusals('unsigned').map((line) => line.fields.reason),
      ['card_unsigned'],
    );
    assert.ok(
      unsignedFront.seen.every((line) => line.startsWith('GET ')),
      'no JSON-RPC call was made',
    );
    // The reason as the operator reads it (airlock agents).
    const row = await checkEntry(runtime, runtime.registry.get('unsigned'));
    assert.equal(row.error_type, 'card_signature_invalid');
    assert.match(
      row.reason ?? '',
      /agent card of registry entry "unsigned": the card at .+ is refused: the card is not signed/,
    );
  });

  it('require_signed_card: false tolerates an unsigned card (a signed one must still verify)', async () => {
    const result = await runtime.send({ agent: 'tolerant', message: 'hello anyway' });
    assert.equal(result.status, 'success', result.error_message ?? '');
    const trusted = await runtime.trust.resolve(cardTrustEntry(runtime.registry.get('tolerant')));
    assert.equal(trusted.signature, undefined);
  });

  it('refuses a tampered card (signed, then its endpoint changed) and never calls the endpoint it names', async () => {
    const genuine = JSON.parse(await (await fetch(`${signedFront.url}${CARD_PATH}`)).text()) as Json;
    const tampered = structuredClone(genuine) as { supportedInterfaces: { url: string }[] };
    for (const card of tampered.supportedInterfaces) card.url = `${forger.url}/a2a/evil`;
    forged = JSON.stringify(tampered);
    const result = await runtime.send({ agent: 'forged', message: 'hello' });
    assert.equal(result.error_type, 'card_signature_invalid');
    assert.deepEqual(
      refusals('forged').map((line) => line.fields.reason),
      ['signature_unverified'],
    );
    assert.deepEqual(forger.seen, [`GET ${CARD_PATH}`]);
    assert.equal(await runtime.pins.get('forged'), undefined);
  });

  it('refuses a signed card whose JSON-RPC endpoint its signature does not cover (a v0.3 url)', async () => {
    // The gateway's v0.3 card without supportedInterfaces: its endpoint is only in `url`, which
    // no signature covers (the signing payload is the v1.0 card). Re-signed with the real key,
    // so the signature itself verifies.
    const v03 = JSON.parse(
      await (await fetch(`${signedFront.url}${CARD_PATH}`, { headers: { 'A2A-Version': '0.3' } })).text(),
    ) as Json;
    delete v03.supportedInterfaces;
    v03.url = `${forger.url}/a2a/evil`;
    forged = JSON.stringify(signCard(v03, [importSigningKey(key.privateJwk)]));
    runtime.trust.forget('forged');
    const result = await runtime.send({ agent: 'forged', message: 'hello' });
    assert.equal(result.error_type, 'card_signature_invalid');
    assert.equal(refusals('forged').at(-1)?.fields.reason, 'signature_incomplete');
    assert.ok(!forger.seen.some((line) => line.startsWith('POST')), 'the uncovered endpoint was never called');
    assert.equal(await runtime.pins.get('forged'), undefined);
  });

  it('a stricter entry is checked again at once: a card cached under other signature settings is not reused', async () => {
    // `tolerant` was trusted (and pinned) unsigned above; the same entry now requires a signature.
    const strict = parseRegistry(
      `agents:\n${entry('tolerant', `${unsignedFront.url}${CARD_PATH}`, '    card_keys: { jwks_file: keys/gateway-jwks.json }\n')}`,
      ENV,
      'inline',
      dir,
    ).get('tolerant');
    await assert.rejects(
      runtime.trust.resolve(cardTrustEntry(strict)),
      (error: unknown) => error instanceof CardTrustError && error.code === 'card_signature_invalid',
    );
  });

  it('airlock card fetch <name> verifies with the entry’s card_keys', async () => {
    const io = captureIO({ ...ENV, AIRLOCK_REGISTRY: registryPath });
    assert.equal(await cardFetchCommand('signed', {}, io), 0, io.err);
    assert.match(io.err, new RegExp(`^airlock: verified {4}ES256 signature by kid ${key.kid}$`, 'm'));
    const refused = captureIO({ ...ENV, AIRLOCK_REGISTRY: registryPath });
    assert.equal(await cardFetchCommand('unsigned', {}, refused), 1);
    assert.match(refused.err, /^airlock: the card is not signed$/m);
    const tolerated = captureIO({ ...ENV, AIRLOCK_REGISTRY: registryPath });
    assert.equal(await cardFetchCommand('tolerant', {}, tolerated), 0, tolerated.err);
    assert.match(tolerated.err, /^airlock: unsigned {4}accepted: the registry entry does not require a signature$/m);
    const byUrl = captureIO({ ...ENV, AIRLOCK_REGISTRY: registryPath });
    assert.equal(await cardFetchCommand('by-url', {}, byUrl), 0, byUrl.err);
    assert.match(byUrl.err, /^airlock: verified {4}ES256/m);
  });

  it('jwks_url: fetched through the transport once while its TTL lasts, and again after it', async () => {
    const clock = { now: Date.parse('2026-10-24T12:00:00Z') };
    const transport = createGuardedClient(parseEnvSettings({}));
    const trust = new CardTrust({
      client: withHopHeader(transport),
      pins: new PinStore(join(dir, 'ttl', 'pins.json')),
      now: () => clock.now,
    });
    const byUrl = { ...cardTrustEntry(runtime.registry.get('by-url')), cardRefreshS: 1 };
    const count = (path: string) => signedFront.seen.filter((line) => line === `GET ${path}`).length;
    const [cards, keys] = [count(CARD_PATH), count('/.well-known/jwks.json')];
    try {
      assert.deepEqual((await trust.resolve(byUrl)).signature, { kid: key.kid, alg: 'ES256' });
      clock.now += 2_000;
      await trust.resolve(byUrl);
      clock.now += 250_000;
      await trust.resolve(byUrl);
      assert.equal(count(CARD_PATH), cards + 3, 'the card is fetched each time its refresh is due');
      assert.equal(count('/.well-known/jwks.json'), keys + 1, 'the key set only once within 300 s');
      clock.now += 60_000;
      await trust.resolve(byUrl);
      assert.equal(count('/.well-known/jwks.json'), keys + 2);
    } finally {
      await transport.close();
    }
  });
});

describe('jwks_url and key rotation', () => {
  let oldKey: GeneratedSigningKey;
  let newKey: GeneratedSigningKey;
  let remote: Front;
  let served = { card: '', jwks: '' };

  function cardFor(url: string): Json {
    const card: AgentCard = {
      name: 'Rotating',
      description: 'Rotates its keys.',
      version: '1.0.0',
      interfaces: [{ url: `${url}/a2a/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'rotate', name: 'Rotate', description: 'Rotates', tags: [] }],
    };
    return encodeCardV10(card);
  }

  before(async () => {
    [oldKey, newKey] = await Promise.all([generateSigningKey('ES256'), generateSigningKey('EdDSA')]);
    remote = await startStatic(
      new Map([
        ['/card.json', () => ({ body: served.card })],
        ['/jwks.json', () => ({ body: served.jwks, type: 'application/jwk-set+json' })],
      ]),
    );
    served = {
      card: JSON.stringify(signCard(cardFor(remote.url), [importSigningKey(oldKey.privateJwk)])),
      jwks: JSON.stringify({ keys: [oldKey.publicJwk] }),
    };
  });
  after(() => remote.close());

  it('a card signed by a key the cached set lacks makes one early refetch, at most every 30 s', async () => {
    const registry = parseRegistry(
      `agents:\n  - name: rotating\n    card_url: ${remote.url}/card.json\n    description: Rotates.\n    effect: read_only\n    card_refresh_s: 1\n    card_keys: { jwks_url: ${remote.url}/jwks.json }\n`,
      {},
    );
    const clock = { now: Date.parse('2026-10-24T12:00:00Z') };
    const transport = createGuardedClient(parseEnvSettings({}));
    const logs: string[] = [];
    const trust = new CardTrust({
      client: transport,
      pins: new PinStore(join(dir, 'rotation', 'pins.json')),
      now: () => clock.now,
      log: (event, fields) => logs.push(`${event} ${String(fields.reason ?? '')}`),
    });
    const rotating = cardTrustEntry(registry.get('rotating'));
    const keySetFetches = () => remote.seen.filter((line) => line === 'GET /jwks.json').length;
    try {
      assert.equal((await trust.resolve(rotating)).signature?.kid, oldKey.kid);
      assert.equal(keySetFetches(), 1);
      // The remote publishes its new key and signs with it alone (the card's trust fields are
      // unchanged, so the pin still holds).
      served = {
        card: JSON.stringify(signCard(cardFor(remote.url), [importSigningKey(newKey.privateJwk)])),
        jwks: JSON.stringify({ keys: [newKey.publicJwk, oldKey.publicJwk] }),
      };
      clock.now += 10_000;
      await assert.rejects(
        trust.resolve(rotating),
        (error: unknown) => error instanceof CardTrustError && error.code === 'card_signature_invalid',
      );
      assert.equal(keySetFetches(), 1, 'not refetched within 30 s of the last fetch');
      assert.deepEqual(logs, ['card_pinned_tofu ', 'card_signature_refused signature_unverified']);
      clock.now += 30_000;
      assert.equal((await trust.resolve(rotating)).signature?.kid, newKey.kid);
      assert.equal(keySetFetches(), 2);
    } finally {
      await transport.close();
    }
  });
});

describe('card_keys in the registry', () => {
  const CARD = 'https://a.example/.well-known/agent-card.json';
  const registry = (keys: string, env: NodeJS.ProcessEnv = {}) =>
    parseRegistry(
      `agents:\n  - name: a\n    card_url: ${CARD}\n    description: A.\n    effect: read_only\n${keys}`,
      env,
      'inline',
      dir,
    );
  const refused = (keys: string, message: RegExp) =>
    assert.throws(
      () => registry(keys),
      (error: unknown) => error instanceof RegistryError && message.test(error.message),
    );
  let key: GeneratedSigningKey;
  before(async () => {
    key = await generateSigningKey('EdDSA');
  });

  it('refuses a jwks_url on another origin than the card, at load', () => {
    refused(
      '    card_keys: { jwks_url: https://keys.example/jwks.json }\n',
      /^registry: agents\[0\] "a": card_keys\.jwks_url: must be on the card's origin \(https:\/\/a\.example\)$/,
    );
    refused('    card_keys: { jwks_url: http://a.example/jwks.json }\n', /card_keys\.jwks_url: must be https/);
    const accepted = registry('    card_keys: { jwks_url: https://a.example/keys/jwks.json }\n').get('a');
    assert.equal(accepted.cardKeys?.jwksUrl, 'https://a.example/keys/jwks.json');
    assert.equal(accepted.requireSignedCard, true);
  });

  it('requires signatures by default once keys are named; require_signed_card needs keys', () => {
    assert.equal(registry('').get('a').requireSignedCard, false);
    refused('    require_signed_card: true\n', /require_signed_card: needs card_keys/);
    refused('    card_keys: {}\n', /card_keys: names no keys: give jwks_file, keys or jwks_url/);
    refused(
      '    card_keys: { jwks_url: https://a.example/j, coverage: all }\n',
      /card_keys\.coverage: must be trust-fields or interfaces/,
    );
  });

  it('reads jwks_file relative to the registry file, and inline keys; refuses private or symmetric keys', () => {
    mkdirSync(join(dir, 'reg'), { recursive: true });
    writeFileSync(join(dir, 'reg', 'jwks.json'), JSON.stringify({ keys: [key.publicJwk] }));
    const path = join(dir, 'reg', 'registry.yaml');
    writeFileSync(
      path,
      `agents:\n  - name: a\n    card_url: ${CARD}\n    description: A.\n    effect: read_only\n    card_keys: { jwks_file: jwks.json, coverage: interfaces }\n`,
    );
    const loaded = loadRegistryFile(path, {}).get('a');
    assert.deepEqual(loaded.cardKeys?.keySet?.kids(), [key.kid]);
    assert.equal(loaded.cardKeys?.coverage, 'interfaces');
    const inline = registry(`    card_keys:\n      keys:\n        - ${JSON.stringify(key.publicJwk)}\n`).get('a');
    assert.deepEqual(inline.cardKeys?.keySet?.kids(), [key.kid]);
    refused(
      `    card_keys:\n      keys:\n        - ${JSON.stringify(key.privateJwk)}\n`,
      /^registry: agents\[0\] "a": card_keys: keys\[0\] holds private key material/,
    );
    refused(
      '    card_keys:\n      keys: [{ kty: oct, k: c2VjcmV0LXNlY3JldC1zZWNyZXQ }]\n',
      /a symmetric \(oct\) key cannot be used/,
    );
    refused('    card_keys: { jwks_file: missing.json }\n', /card_keys\.jwks_file: .+missing\.json: file not found/);
    assert.equal(readFileSync(join(dir, 'reg', 'jwks.json'), 'utf8').includes('"d"'), false);
  });
});
