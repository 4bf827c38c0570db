/**
 * Card trust with signature keys (`CardTrustEntry.cardKeys`), on a scripted card client: the
 * refusals and their codes, the key set fetched from `jwksUrl` (shared by concurrent callers,
 * refused when it is not a public set), and the cache key following the keys. The same paths
 * against real loopback servers are in test/outbound-card-signatures.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeCardV10 } from '../protocol/card.js';
import type { AgentCard } from '../protocol/model.js';
import { CardTrust, type CardRequestOptions, type CardResponse, type CardTrustEntry } from './card.js';
import { CardTrustError } from './errors.js';
import { PinStore } from './pins.js';
import {
  generateSigningKey,
  importKeySet,
  importSigningKey,
  signCard,
  type GeneratedSigningKey,
} from './signing/index.js';

const ORIGIN = 'https://w.example';
const CARD_URL = `${ORIGIN}/.well-known/agent-card.json`;
const JWKS_URL = `${ORIGIN}/.well-known/jwks.json`;
const TIMEOUTS = { connectMs: 5000, readMs: 60000, totalMs: 120000 };

const CARD: AgentCard = {
  name: 'Weather',
  description: 'Forecasts.',
  version: '1.0.0',
  interfaces: [{ url: `${ORIGIN}/a2a/v1`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'forecast', name: 'Forecast', description: 'Forecasts weather', tags: [] }],
};

function json(value: unknown, status = 200): CardResponse {
  return { status, headers: {}, body: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)) };
}

let root: string;
let counter = 0;
let key: GeneratedSigningKey;
let signed: Record<string, unknown>;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'airlock-card-signature-'));
  key = await generateSigningKey('ES256');
  signed = signCard(encodeCardV10(CARD), [importSigningKey(key.privateJwk)]);
});
after(() => rm(root, { recursive: true, force: true }));

function harness(answer: (options: CardRequestOptions) => CardResponse | Promise<CardResponse>) {
  counter += 1;
  const calls: string[] = [];
  const logs: string[] = [];
  const pins = new PinStore(join(root, `case-${counter}`, 'pins.json'));
  const trust = new CardTrust({
    client: {
      request: async (options) => {
        calls.push(options.url);
        return answer(options);
      },
    },
    pins,
    log: (event, fields) => logs.push(`${event} ${String(fields.reason ?? '')}`.trim()),
  });
  return { trust, pins, calls, logs };
}

const entry = (extra: Partial<CardTrustEntry> = {}): CardTrustEntry => ({
  name: 'weather',
  cardUrl: CARD_URL,
  cardRefreshS: 300,
  timeouts: TIMEOUTS,
  ...extra,
});

const refusedWith = (code: string) => (error: unknown) => error instanceof CardTrustError && error.code === code;

describe('card trust with signature keys', () => {
  it('accepts a card signed by the entry’s key and says which signature verified', async () => {
    const { trust, pins } = harness(() => json(signed));
    const trusted = await trust.resolve(entry({ cardKeys: { keySet: importKeySet({ keys: [key.publicJwk] }) } }));
    assert.deepEqual(trusted.signature, { kid: key.kid, alg: 'ES256' });
    assert.equal((await pins.get('weather'))?.digest, trusted.digest);
  });

  it('refuses unsigned, foreign-signed and malformed cards with their own codes, pinning nothing', async () => {
    const other = await generateSigningKey('EdDSA');
    const cases: [unknown, string, string][] = [
      [encodeCardV10(CARD), 'card_signature_invalid', 'card_signature_refused card_unsigned'],
      [
        signCard(encodeCardV10(CARD), [importSigningKey(other.privateJwk)]),
        'card_signature_invalid',
        'card_signature_refused signature_unverified',
      ],
      ['[1, 2]', 'card_invalid', ''],
    ];
    for (const [body, code, log] of cases) {
      const { trust, pins, logs } = harness(() => json(body));
      await assert.rejects(
        trust.resolve(entry({ cardKeys: { keySet: importKeySet({ keys: [key.publicJwk] }) } })),
        refusedWith(code),
      );
      assert.equal(await pins.get('weather'), undefined);
      assert.deepEqual(logs, log === '' ? [] : [log]);
    }
  });

  it('tolerates an unsigned card only when the entry does not require a signature', async () => {
    const { trust } = harness(() => json(encodeCardV10(CARD)));
    const keys = { keySet: importKeySet({ keys: [key.publicJwk] }) };
    const trusted = await trust.resolve(entry({ cardKeys: keys, requireSignedCard: false }));
    assert.equal(trusted.signature, undefined);
    await assert.rejects(trust.resolve(entry({ requireSignedCard: true })), TypeError);
  });

  it('fetches a jwksUrl once for concurrent callers, and refuses a set that is not public keys', async () => {
    let keySetAnswer: unknown = { keys: [key.publicJwk] };
    const { trust, calls } = harness((options) => (options.url === JWKS_URL ? json(keySetAnswer) : json(signed)));
    const byUrl = entry({ cardKeys: { jwksUrl: JWKS_URL } });
    const [first, second] = await Promise.all([
      trust.inspect(byUrl),
      trust.inspect({ ...byUrl, name: 'weather-again' }),
    ]);
    assert.equal(first.signature?.kid, key.kid);
    assert.equal(second.signature?.kid, key.kid);
    assert.equal(calls.filter((url) => url === JWKS_URL).length, 1);

    keySetAnswer = { keys: [key.privateJwk] };
    const { trust: fresh, logs } = harness((options) => (options.url === JWKS_URL ? json(keySetAnswer) : json(signed)));
    await assert.rejects(fresh.resolve(byUrl), (error: unknown) => {
      return (
        refusedWith('card_signature_invalid')(error) &&
        /cannot be checked: .+holds private key material/.test((error as Error).message)
      );
    });
    assert.deepEqual(logs, ['card_signature_refused key_private_in_public_set']);
    const { trust: missing } = harness((options) => (options.url === JWKS_URL ? json({}, 404) : json(signed)));
    await assert.rejects(missing.resolve(byUrl), /the key set at .+ answered HTTP 404/);
  });

  it('refuses a jwksUrl on another origin even when the entry was not built by the registry', async () => {
    const { trust, calls } = harness(() => json(signed));
    await assert.rejects(
      trust.resolve(entry({ cardKeys: { jwksUrl: 'https://keys.example/jwks.json' } })),
      /jwks_url must be on the card's origin/,
    );
    assert.ok(!calls.includes('https://keys.example/jwks.json'));
  });

  it('checks the card again when the keys change, instead of serving it from the cache', async () => {
    const { trust, calls } = harness(() => json(signed));
    const keys = { keySet: importKeySet({ keys: [key.publicJwk] }) };
    await trust.resolve(entry({ cardKeys: keys }));
    await trust.resolve(entry({ cardKeys: keys }));
    assert.equal(calls.length, 1, 'the same keys: cached');
    const other = await generateSigningKey('ES256');
    await assert.rejects(
      trust.resolve(entry({ cardKeys: { keySet: importKeySet({ keys: [other.publicJwk] }) } })),
      refusedWith('card_signature_invalid'),
    );
    assert.equal(calls.length, 2);
  });
});
