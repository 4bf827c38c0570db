/**
 * `airlock keys generate` and `airlock card fetch|sign|verify|digest`, called as the functions
 * the command line wires (`src/cli/keys.ts`, `src/cli/card.ts`), with captured output.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { canonicalizeAgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import type { JWK } from 'jose';
import { cardDigestCommand, cardFetchCommand, cardSignCommand, cardVerifyCommand } from '../src/cli/card.js';
import { keysGenerateCommand } from '../src/cli/keys.js';
import { captureIO } from './helpers/command-io.js';
import { parseConfig } from '../src/config/load.js';
import type { AgentConfig } from '../src/config/schema.js';
import { processInstanceId } from '../src/client/outbound-transport.js';
import { HOP_HEADER } from '../src/protocol/headers.js';
import { CardCache } from '../src/server/cards.js';
import { cardTrustDigest } from '../src/trust/digest.js';
import { decodeAnyCard } from '../src/protocol/card.js';

const YAML = `
server: { port: 0 }
agents:
  - slug: travel
    name: Travel
    description: Plans trips.
    skills:
      - { id: book-flight, name: Book flights, description: Finds flights, tags: [flights] }
    backend: { type: echo }
clients:
  - { id: c, token: 'client-token-0123456789abcdef0123456789', agents: [travel] }
`;
const config = parseConfig(YAML, {});
const cards = new CardCache(config);
const agent = config.agents[0] as AgentConfig;

const dir = mkdtempSync(join(tmpdir(), 'airlock-cli-card-'));
const keysDir = join(dir, 'keys');
const mode = (path: string): number => statSync(path).mode & 0o777;

function privateKeyFiles(): string[] {
  return readdirSync(keysDir)
    .filter((name) => name.endsWith('.private.jwk.json'))
    .map((name) => join(keysDir, name));
}

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('airlock keys generate', () => {
  it('writes the private JWK (0600, in a 0700 directory) and starts jwks.json', async () => {
    const io = captureIO();
    assert.equal(await keysGenerateCommand({ out: keysDir }, io), 0, io.err);
    assert.equal(mode(keysDir), 0o700);
    const [privatePath] = privateKeyFiles();
    assert.ok(privatePath !== undefined);
    assert.equal(mode(privatePath), 0o600);
    const privateJwk = JSON.parse(readFileSync(privatePath, 'utf8'));
    assert.equal(privateJwk.alg, 'ES256');
    assert.equal(typeof privateJwk.d, 'string');
    const jwks = JSON.parse(readFileSync(join(keysDir, 'jwks.json'), 'utf8'));
    assert.deepEqual(
      jwks.keys.map((key: JWK) => key.kid),
      [privateJwk.kid],
    );
    assert.equal(jwks.keys[0].d, undefined);
    assert.equal(mode(join(keysDir, 'jwks.json')), 0o644);
    assert.match(
      io.out,
      new RegExp(
        `^kid {7}${privateJwk.kid}\\nalg {7}ES256\\nprivate {3}.+ \\(mode 0600: keep it secret\\)\\njwks {6}.+ \\(1 key: publish this\\)\\n$`,
      ),
    );
  });

  it('adds a second key to jwks.json, keeping the first as it was (rotation)', async () => {
    const before = JSON.parse(readFileSync(join(keysDir, 'jwks.json'), 'utf8')).keys[0];
    const io = captureIO();
    assert.equal(await keysGenerateCommand({ alg: 'eddsa', out: keysDir }, io), 0, io.err);
    const jwks = JSON.parse(readFileSync(join(keysDir, 'jwks.json'), 'utf8'));
    assert.equal(jwks.keys.length, 2);
    assert.deepEqual(jwks.keys[0], before);
    assert.equal(jwks.keys[1].alg, 'EdDSA');
    assert.equal(privateKeyFiles().length, 2);
    assert.match(io.out, /\(2 keys: publish this\)/);
  });

  it('refuses an unknown algorithm (2), and a jwks.json holding a private key without writing anything (1)', async () => {
    const io = captureIO();
    assert.equal(await keysGenerateCommand({ alg: 'HS256', out: keysDir }, io), 2);
    assert.match(io.err, /^airlock: --alg must be one of ES256, ES384, ES512, EdDSA, RS256, PS256\n$/);

    const bad = join(dir, 'bad-keys');
    await keysGenerateCommand({ out: bad }, captureIO());
    const [privatePath] = readdirSync(bad).filter((name) => name.endsWith('.private.jwk.json'));
    const leaked = JSON.parse(readFileSync(join(bad, privatePath!), 'utf8'));
    writeFileSync(join(bad, 'jwks.json'), JSON.stringify({ keys: [leaked] }));
    const refused = captureIO();
    assert.equal(await keysGenerateCommand({ out: bad }, refused), 1);
    assert.match(refused.err, /holds private key material/);
    assert.equal(readdirSync(bad).filter((name) => name.endsWith('.private.jwk.json')).length, 1);
  });
});

describe('airlock card sign / verify / digest', () => {
  let cardPath = '';
  let v03Path = '';
  let signedPath = '';
  const jwks = (): string => join(keysDir, 'jwks.json');

  before(() => {
    cardPath = write('card.json', cards.render(agent, '1.0', 'https://gw.example', false).body);
    v03Path = write('card-v03.json', cards.render(agent, '0.3', 'https://gw.example', false).body);
  });

  it('signs with every --key, prints the signed card, and the SDK verifies it', async () => {
    const io = captureIO();
    const keyFiles = privateKeyFiles();
    assert.equal(
      await cardSignCommand(cardPath, { key: keyFiles, jku: 'https://gw.example/.well-known/jwks.json' }, io),
      0,
      io.err,
    );
    assert.equal(io.err, '');
    const signed = JSON.parse(io.out);
    assert.equal(signed.signatures.length, 2);
    signedPath = write('signed.json', io.out);
    const publicKeys = JSON.parse(readFileSync(jwks(), 'utf8')).keys as JWK[];
    await verifyAgentCardSignature(async (kid) => publicKeys.find((key) => key.kid === kid)!)(signed);
  });

  it('verifies a signed card (0) and names the key', async () => {
    const io = captureIO();
    assert.equal(await cardVerifyCommand(signedPath, { keys: jwks() }, io), 0, io.err);
    assert.match(io.out, /^verified {2}(ES256|EdDSA) signature by kid [\w-]{43}\n$/);
  });

  it('refuses a tampered or unsigned card (1) with the reason on stderr', async () => {
    const tampered = JSON.parse(readFileSync(signedPath, 'utf8'));
    tampered.supportedInterfaces[0].url = 'https://evil.example/a2a/travel';
    const io = captureIO();
    assert.equal(await cardVerifyCommand(write('tampered.json', JSON.stringify(tampered)), { keys: jwks() }, io), 1);
    assert.match(
      io.err,
      /^airlock: no signature verifies: #1 \(kid "[\w-]+"\) does not match the card; #2 .+ does not match the card\n$/,
    );
    const unsigned = captureIO();
    assert.equal(await cardVerifyCommand(cardPath, { keys: jwks() }, unsigned), 1);
    assert.equal(unsigned.err, 'airlock: the card is not signed\n');
  });

  it('says 2 when it cannot check: a missing card or key file, a private key as the key set, a bad option', async () => {
    const cases: [string, Parameters<typeof cardVerifyCommand>[1], RegExp][] = [
      [join(dir, 'missing.json'), { keys: jwks() }, /cannot read .+missing\.json \(ENOENT\)/],
      [signedPath, { keys: join(dir, 'missing-jwks.json') }, /cannot read .+missing-jwks\.json \(ENOENT\)/],
      [signedPath, { keys: privateKeyFiles()[0]! }, /holds private key material/],
      [signedPath, { keys: jwks(), coverage: 'some' }, /--coverage must be trust-fields or interfaces/],
      [signedPath, { keys: [] }, /give at least one --keys file/],
    ];
    for (const [target, options, reason] of cases) {
      const io = captureIO();
      assert.equal(await cardVerifyCommand(target, options, io), 2, io.err);
      assert.match(io.err, reason);
    }
  });

  it('warns when signing a v0.3 card whose own members the signature cannot cover; verify then needs --coverage interfaces', async () => {
    const io = captureIO();
    assert.equal(await cardSignCommand(v03Path, { key: privateKeyFiles()[0]! }, io), 0);
    assert.match(
      io.err,
      /^airlock: warning: the signature does not cover the card's securitySchemes, securityRequirements/,
    );
    const signed = write('signed-v03.json', io.out);
    const strict = captureIO();
    assert.equal(await cardVerifyCommand(signed, { keys: jwks() }, strict), 1);
    assert.match(strict.err, /does not cover the card's securitySchemes, securityRequirements/);
    const relaxed = captureIO();
    assert.equal(await cardVerifyCommand(signed, { keys: jwks(), coverage: 'interfaces' }, relaxed), 0, relaxed.err);
  });

  it('refuses to sign with a public key or a missing key (2), or a jku that is not a URL (2)', async () => {
    const publicOnly = write('public.jwk.json', JSON.stringify(JSON.parse(readFileSync(jwks(), 'utf8')).keys[0]));
    for (const options of [
      { key: publicOnly },
      { key: join(dir, 'nope.jwk') },
      { key: privateKeyFiles()[0]!, jku: 'relative' },
    ]) {
      const io = captureIO();
      assert.equal(await cardSignCommand(cardPath, options, io), 2, io.err);
      assert.equal(io.out, '');
    }
  });

  it('prints the trust digest and the payload digest, or the payload itself', async () => {
    const card = JSON.parse(readFileSync(signedPath, 'utf8'));
    const io = captureIO();
    assert.equal(await cardDigestCommand(signedPath, {}, io), 0, io.err);
    const payload = canonicalizeAgentCard(card);
    const { createHash } = await import('node:crypto');
    assert.equal(
      io.out,
      [
        `trust       ${cardTrustDigest(decodeAnyCard(card))}  (what card_sha256 and pins compare)`,
        `payload     ${createHash('sha256').update(payload).digest('hex')}  (SHA-256 of what a signature covers)`,
        'signatures  2 (not checked here: airlock card verify --keys …)',
        '',
      ].join('\n'),
    );
    const raw = captureIO();
    assert.equal(await cardDigestCommand(signedPath, { payload: true }, raw), 0);
    assert.equal(raw.out, `${payload}\n`);
    const notCard = captureIO();
    assert.equal(await cardDigestCommand(write('not-card.json', '{"hello":1}'), {}, notCard), 1);
    assert.match(notCard.err, /not an agent card Airlock can read/);
    const deep = captureIO();
    assert.equal(
      await cardDigestCommand(write('deep.json', `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`), {}, deep),
      1,
    );
    assert.match(deep.err, /nests deeper than 64 levels/);
  });
});

describe('airlock card fetch, and verify by URL', () => {
  let server: Server;
  let base = '';
  let signedBody = '';
  const hops: (string | undefined)[] = [];
  const versions: (string | undefined)[] = [];

  before(async () => {
    const io = captureIO();
    await cardSignCommand(
      write('to-serve.json', cards.render(agent, '1.0', 'http://127.0.0.1', false).body),
      { key: privateKeyFiles()[0]! },
      io,
    );
    signedBody = JSON.stringify(JSON.parse(io.out));
    server = createServer((request, response) => {
      hops.push(request.headers[HOP_HEADER] as string | undefined);
      versions.push(request.headers['a2a-version'] as string | undefined);
      if (request.url !== '/.well-known/agent-card.json') {
        response.statusCode = 404;
        response.end();
        return;
      }
      response.setHeader('content-type', 'application/json');
      response.end(signedBody);
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const env = (): NodeJS.ProcessEnv => ({ AIRLOCK_PRIVATE_ALLOW: '127.0.0.1' });

  it('prints the exact bytes, a summary on stderr, and asks as card trust does (a typed URL without the hop header)', async () => {
    const io = captureIO(env());
    assert.equal(await cardFetchCommand(`${base}/.well-known/agent-card.json`, {}, io), 0, io.err);
    assert.equal(io.out, `${signedBody}\n`);
    assert.match(
      io.err,
      /^airlock: fetched {5}http:\/\/127\.0\.0\.1:\d+\/\.well-known\/agent-card\.json \(\d+ bytes\)\nairlock: trust {7}[0-9a-f]{64}\nairlock: endpoint {4}.+\nairlock: signatures {2}1 \(not checked: give --keys, or card_keys in the registry\)\n$/,
    );
    // A URL fetch by the operator carries no hop chain (it is nobody's outbound call).
    assert.equal(hops.at(-1), undefined);
    assert.equal(versions.at(-1), '1.0');
  });

  it('verifies the fetched bytes with --keys, or refuses (1) with keys that did not sign it', async () => {
    const io = captureIO(env());
    assert.equal(
      await cardFetchCommand(`${base}/.well-known/agent-card.json`, { keys: join(keysDir, 'jwks.json') }, io),
      0,
      io.err,
    );
    assert.match(io.err, /airlock: verified {4}\w+ signature by kid [\w-]{43}\n$/);
    const other = join(dir, 'other-keys');
    await keysGenerateCommand({ out: other }, captureIO());
    const refused = captureIO(env());
    assert.equal(
      await cardFetchCommand(`${base}/.well-known/agent-card.json`, { keys: join(other, 'jwks.json') }, refused),
      1,
    );
    assert.match(refused.err, /no signature verifies: #1 .+ names a kid not in the operator's key set\n$/);
  });

  it('resolves a registry name through the registry file, and refuses unknown names (2)', async () => {
    const registry = write(
      'registry.yaml',
      `agents:\n  - name: travel\n    card_url: ${base}/.well-known/agent-card.json\n    description: Travel.\n    effect: read_only\n`,
    );
    const io = captureIO(env());
    assert.equal(
      await cardFetchCommand('travel', { registry, keys: join(keysDir, 'jwks.json'), version: '0.3' }, io),
      0,
      io.err,
    );
    assert.equal(io.out, `${signedBody}\n`);
    assert.equal(versions.at(-1), '0.3');
    // A registry entry is fetched exactly as the outbound client would fetch it.
    assert.equal(hops.at(-1), processInstanceId());
    const unknown = captureIO(env());
    assert.equal(await cardFetchCommand('nobody', { registry }, unknown), 2);
    assert.match(unknown.err, /no agent "nobody" in the registry; known: travel/);
    const badVersion = captureIO(env());
    assert.equal(await cardFetchCommand('travel', { registry, version: '2.0' }, badVersion), 2);
  });

  it('reports a failed fetch (1) and, for verify by URL, an unreachable card as unable to check (2)', async () => {
    const io = captureIO(env());
    assert.equal(await cardFetchCommand(`${base}/missing`, {}, io), 1);
    assert.match(io.err, /answered HTTP 404/);
    const verify = captureIO(env());
    assert.equal(
      await cardVerifyCommand(`${base}/.well-known/agent-card.json`, { keys: join(keysDir, 'jwks.json') }, verify),
      0,
      verify.err,
    );
    const unreachable = captureIO(env());
    assert.equal(await cardVerifyCommand(`${base}/missing`, { keys: join(keysDir, 'jwks.json') }, unreachable), 2);
  });
});
