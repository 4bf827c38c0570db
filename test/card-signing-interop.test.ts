/**
 * Card signatures against the official a2a-js SDK, both ways and in both card shapes:
 *
 * - Airlock's served cards (CardCache, v1.0 and v0.3 bodies) signed by Airlock verify with the
 *   SDK's `verifyAgentCardSignature`; signed by the SDK's `generateAgentCardSignature`, they
 *   verify with Airlock.
 * - A card built the SDK's way (every default spelled out: A2A#2249) and served by the SDK's
 *   own express handler, with its v0.3 compat translation, verifies with Airlock from the
 *   bytes it served.
 * - Both sides compute the same payload, so they agree on what tampering is.
 * - An SDK `AgentCard` instance signed by the SDK (≤ 1.3) leaves `securitySchemes` out of the
 *   payload (a2a-js#663): Airlock recognises such a signature and says so.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, mock } from 'node:test';
import {
  AgentCard as SdkAgentCardMessage,
  canonicalizeAgentCard,
  generateAgentCardSignature,
  verifyAgentCardSignature,
  type AgentCard as SdkAgentCard,
} from '@a2a-js/sdk';
import { agentCardHandler } from '@a2a-js/sdk/server/express';
import express from 'express';
import { parseConfig } from '../src/config/load.js';
import type { AgentConfig } from '../src/config/schema.js';
import { CardCache } from '../src/server/cards.js';
import {
  CardSignatureError,
  cardSigningPayload,
  generateSigningKey,
  importKeySet,
  importSigningKey,
  signCard,
  verifyCardSignatures,
  SDK_INSTANCE_OMITTED,
  withoutSdkInstanceOmissions,
  type GeneratedAlgorithm,
  type GeneratedSigningKey,
  type OperatorKeySet,
} from '../src/trust/signing/index.js';

const YAML = `
server: { port: 0, apiKeyHeader: true }
agents:
  - slug: travel
    name: Travel
    description: Plans trips.
    version: 2.1.0
    provider: { organization: Example Org, url: 'https://example.org' }
    documentationUrl: https://example.org/docs
    skills:
      - { id: book-flight, name: Book flights, description: Finds flights, tags: [flights], examples: [Book me to Oslo] }
    backend: { type: echo }
clients:
  - { id: c, token: 'client-token-0123456789abcdef0123456789', agents: [travel] }
`;

type Shape = '1.0' | '0.3';
type Json = Record<string, unknown>;
const SHAPES: Shape[] = ['1.0', '0.3'];
const ALGORITHMS: GeneratedAlgorithm[] = ['ES256', 'EdDSA', 'RS256'];

// The SDK's verifier logs each signature it skips with console.debug; the tests expect skips.
mock.method(console, 'debug', () => undefined);

const config = parseConfig(YAML, {});
const cards = new CardCache(config);
const agent = config.agents[0] as AgentConfig;

/** The body Airlock serves for this shape (the extended card: it lists the configured skills). */
function served(shape: Shape): Json {
  return JSON.parse(cards.render(agent, shape, 'https://gw.example', true).body) as Json;
}

/** Airlock's policy per shape: its v0.3 cards carry v0.3 security schemes, which no signature covers. */
function coverageFor(shape: Shape): 'trust-fields' | 'interfaces' {
  return shape === '1.0' ? 'trust-fields' : 'interfaces';
}

const asSdkCard = (card: Json): SdkAgentCard => card as unknown as SdkAgentCard;

function sdkVerifierFor(keys: GeneratedSigningKey[], seen: { kid: string; jku?: string }[] = []) {
  return verifyAgentCardSignature(async (kid, jku) => {
    seen.push({ kid, ...(jku !== undefined && { jku }) });
    const key = keys.find((candidate) => candidate.kid === kid);
    if (key === undefined) throw new Error(`unknown kid ${kid}`);
    return key.publicJwk;
  });
}

function keySetOf(...keys: GeneratedSigningKey[]): OperatorKeySet {
  return importKeySet({ keys: keys.map((key) => key.publicJwk) });
}

describe('card signatures: Airlock and the a2a-js SDK', () => {
  const keys = new Map<GeneratedAlgorithm, GeneratedSigningKey>();
  before(async () => {
    for (const alg of ALGORITHMS) keys.set(alg, await generateSigningKey(alg));
  });
  const key = (alg: GeneratedAlgorithm): GeneratedSigningKey => keys.get(alg)!;

  for (const shape of SHAPES) {
    describe(`Airlock's v${shape} card`, () => {
      it('has the same signing payload on both sides', () => {
        assert.equal(cardSigningPayload(served(shape)), canonicalizeAgentCard(asSdkCard(served(shape))));
      });

      for (const alg of ALGORITHMS) {
        it(`signed by Airlock (${alg}) verifies with the SDK, jku passed to it as a hint`, async () => {
          const jku = 'https://gw.example/.well-known/jwks.json';
          const signed = signCard(served(shape), [importSigningKey(key(alg).privateJwk)], { jku });
          const seen: { kid: string; jku?: string }[] = [];
          // Through JSON, as a remote SDK client would receive it.
          await sdkVerifierFor([key(alg)], seen)(asSdkCard(JSON.parse(JSON.stringify(signed)) as Json));
          assert.deepEqual(seen, [{ kid: key(alg).kid, jku }]);
        });

        it(`signed by the SDK (${alg}) verifies with Airlock`, async () => {
          const generated = key(alg);
          const signer = generateAgentCardSignature(generated.privateJwk, {
            alg,
            kid: generated.kid,
            typ: 'JOSE',
          });
          const signed = await signer(asSdkCard(served(shape)));
          const verdict = await verifyCardSignatures(JSON.stringify(signed), keySetOf(generated), {
            requireSigned: true,
            coverage: coverageFor(shape),
          });
          assert.deepEqual(verdict.status === 'verified' && { kid: verdict.kid, alg: verdict.alg }, {
            kid: generated.kid,
            alg,
          });
        });
      }

      it('tampering is caught by both sides alike', async () => {
        const signed = signCard(served(shape), [importSigningKey(key('ES256').privateJwk)]);
        const tampered = JSON.parse(JSON.stringify(signed)) as { supportedInterfaces: { url: string }[] };
        tampered.supportedInterfaces[0]!.url = 'https://evil.example/a2a/travel';
        await assert.rejects(sdkVerifierFor([key('ES256')])(asSdkCard(tampered)), /No valid signatures/);
        await assert.rejects(
          verifyCardSignatures(JSON.stringify(tampered), keySetOf(key('ES256')), { requireSigned: true }),
          (error: unknown) => error instanceof CardSignatureError && error.code === 'signature_unverified',
        );
      });

      it('rotation: Airlock signs with the old key, the SDK appends the new one; either key verifies', async () => {
        const [oldKey, newKey] = [key('RS256'), key('EdDSA')];
        const byOld = signCard(served(shape), [importSigningKey(oldKey.privateJwk)]);
        const both = await generateAgentCardSignature(newKey.privateJwk, {
          alg: 'EdDSA',
          kid: newKey.kid,
          typ: 'JOSE',
        })(asSdkCard(byOld));
        assert.equal(both.signatures.length, 2);
        const text = JSON.stringify(both);
        const options = { requireSigned: true, coverage: coverageFor(shape) };
        for (const [set, kid] of [
          [keySetOf(oldKey, newKey), oldKey.kid],
          [keySetOf(newKey), newKey.kid],
          [keySetOf(oldKey), oldKey.kid],
        ] as const) {
          const verdict = await verifyCardSignatures(text, set, options);
          assert.equal(verdict.status === 'verified' && verdict.kid, kid);
        }
        await sdkVerifierFor([newKey])(asSdkCard(JSON.parse(text) as Json));
      });
    });
  }

  it('a v0.3 card’s v0.3 security schemes are outside both sides’ payload: Airlock refuses full coverage', async () => {
    const generated = key('ES256');
    const signed = signCard(served('0.3'), [importSigningKey(generated.privateJwk)]);
    const tampered = JSON.parse(JSON.stringify(signed)) as { securitySchemes: Record<string, { name?: string }> };
    tampered.securitySchemes.apiKey!.name = 'X-Leak-Here';
    // The SDK accepts the changed scheme: its payload never had it.
    await sdkVerifierFor([generated])(asSdkCard(tampered));
    await assert.rejects(
      verifyCardSignatures(JSON.stringify(tampered), keySetOf(generated), { requireSigned: true }),
      (error: unknown) => error instanceof CardSignatureError && error.code === 'signature_incomplete',
    );
  });
});

describe('card signatures: a card built and served by the a2a-js SDK', () => {
  let server: Server;
  let cardUrl = '';
  let generated: GeneratedSigningKey;

  /** The SDK's card type, every default written out, as SDK agents build it (A2A#2249). */
  function sdkCard(base: string): SdkAgentCard {
    return {
      name: 'SDK peer',
      description: 'An agent built with the a2a-js SDK.',
      version: '0.0.1',
      supportedInterfaces: [
        { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
        { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
      ],
      // extendedAgentCard is left unset: the v0.3 translation has no place for it, and the
      // copied signature only fits the v0.3 card when both payloads are equal.
      capabilities: { streaming: true, pushNotifications: false, extensions: [] },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [
        {
          id: 'echo',
          name: 'Echo',
          description: 'Echoes.',
          tags: ['echo'],
          examples: [],
          inputModes: [],
          outputModes: [],
          securityRequirements: [],
        },
      ],
      signatures: [],
    } as unknown as SdkAgentCard;
  }

  before(async () => {
    generated = await generateSigningKey('ES256');
    const app = express();
    server = await new Promise<Server>((ready) => {
      const listening = app.listen(0, '127.0.0.1', () => ready(listening));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const signed = await generateAgentCardSignature(generated.privateJwk, {
      alg: 'ES256',
      kid: generated.kid,
      typ: 'JOSE',
    })(sdkCard(base));
    app.use(
      '/.well-known/agent-card.json',
      agentCardHandler({ agentCardProvider: async () => signed, legacyCompat: { enabled: true } }),
    );
    cardUrl = `${base}/.well-known/agent-card.json`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  for (const shape of SHAPES) {
    it(`its v${shape} card verifies with Airlock from the served bytes, with full coverage`, async () => {
      const response = await fetch(cardUrl, { headers: { 'A2A-Version': shape } });
      assert.equal(response.status, 200);
      const bytes = new Uint8Array(await response.arrayBuffer());
      const card = JSON.parse(new TextDecoder().decode(bytes)) as Json;
      if (shape === '0.3') {
        // The SDK's translation: a v0.3 card with the v1.0 interfaces embedded, signature copied.
        assert.equal(card.protocolVersion, '0.3');
        assert.ok(Array.isArray(card.supportedInterfaces));
      }
      const verdict = await verifyCardSignatures(bytes, keySetOf(generated), { requireSigned: true });
      assert.equal(verdict.status === 'verified' && verdict.kid, generated.kid);
      await sdkVerifierFor([generated])(asSdkCard(card));
    });
  }

  it('its card re-signed by Airlock verifies with the SDK; a foreign key does not verify with Airlock', async () => {
    const response = await fetch(cardUrl, { headers: { 'A2A-Version': '1.0' } });
    const card = (await response.json()) as Json;
    const airlockKey = await generateSigningKey('EdDSA');
    const resigned = signCard(card, [importSigningKey(airlockKey.privateJwk)]);
    await sdkVerifierFor([airlockKey])(asSdkCard(JSON.parse(JSON.stringify(resigned)) as Json));
    await assert.rejects(
      verifyCardSignatures(JSON.stringify(card), keySetOf(airlockKey), { requireSigned: true }),
      (error: unknown) =>
        error instanceof CardSignatureError &&
        error.code === 'signature_unverified' &&
        error.failures[0]?.code === 'kid_unknown',
    );
  });
});

describe('card signatures: an AgentCard instance signed by @a2a-js/sdk ≤ 1.3 (a2a-js#663)', () => {
  let generated: GeneratedSigningKey;
  /** Airlock's v1.0 card with v1.0 security schemes, and a requirement with scopes. */
  const json = (): Json => ({
    ...served('1.0'),
    securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { apiKey: { list: ['cards:read'] } } }],
  });
  /** What an SDK agent does: sign its in-memory `AgentCard`, serve its JSON form. */
  async function signedLikeTheSdk(card: Json): Promise<Json> {
    const instance = SdkAgentCardMessage.fromJSON(card);
    const signed = await generateAgentCardSignature(generated.privateJwk, {
      alg: 'ES256',
      kid: generated.kid,
      typ: 'JOSE',
    })(instance);
    return JSON.parse(JSON.stringify(SdkAgentCardMessage.toJSON(signed))) as Json;
  }
  before(async () => {
    generated = await generateSigningKey('ES256');
  });

  it('reproduces the defect: the SDK signs the instance without securitySchemes, and only without them', () => {
    const card = json();
    const instance = SdkAgentCardMessage.fromJSON(card);
    assert.ok(Object.keys(card.securitySchemes as Json).length > 0);
    assert.notEqual(canonicalizeAgentCard(instance), canonicalizeAgentCard(asSdkCard(card)));
    assert.equal(canonicalizeAgentCard(instance), cardSigningPayload(withoutSdkInstanceOmissions(card)));
    assert.deepEqual(SDK_INSTANCE_OMITTED, ['securitySchemes']);
    // Everything else survives the instance form, security requirements (and their scopes) included.
    const fromInstance = JSON.parse(canonicalizeAgentCard(instance)) as Json;
    const fromJson = JSON.parse(cardSigningPayload(card)) as Json;
    delete fromJson.securitySchemes;
    assert.deepEqual(fromInstance, fromJson);
    assert.deepEqual(fromInstance.securityRequirements, [{ schemes: { apiKey: { list: ['cards:read'] } } }]);
  });

  it('under full coverage it is refused, saying exactly which members the signature omits and why', async () => {
    const signed = await signedLikeTheSdk(json());
    // The SDK's own verifier, given the card as served, refuses it too.
    await assert.rejects(sdkVerifierFor([generated])(asSdkCard(signed)), /No valid signatures/);
    await assert.rejects(
      verifyCardSignatures(JSON.stringify(signed), keySetOf(generated), { requireSigned: true }),
      (error: unknown) => {
        assert.ok(error instanceof CardSignatureError);
        assert.equal(error.code, 'signature_incomplete');
        assert.deepEqual(error.omits, ['securitySchemes']);
        assert.match(
          error.message,
          /covers the card without securitySchemes \(a known @a2a-js\/sdk ≤ 1\.3 defect, a2a-js#663: it signed an AgentCard instance/,
        );
        return true;
      },
    );
  });

  it('under interfaces coverage it is accepted, with omits naming securitySchemes; the interfaces stay covered', async () => {
    const signed = await signedLikeTheSdk(json());
    const verdict = await verifyCardSignatures(JSON.stringify(signed), keySetOf(generated), {
      requireSigned: true,
      coverage: 'interfaces',
    });
    assert.equal(verdict.status, 'verified');
    assert.deepEqual(verdict.status === 'verified' && [verdict.kid, verdict.omits], [
      generated.kid,
      ['securitySchemes'],
    ]);
    // What the signature does cover is still checked: a moved endpoint does not verify either way.
    const moved = JSON.parse(JSON.stringify(signed)) as { supportedInterfaces: { url: string }[] };
    moved.supportedInterfaces[0]!.url = 'https://evil.example/a2a/travel';
    await assert.rejects(
      verifyCardSignatures(JSON.stringify(moved), keySetOf(generated), { requireSigned: true, coverage: 'interfaces' }),
      (error: unknown) => error instanceof CardSignatureError && error.code === 'signature_unverified',
    );
  });

  it('a signature over the whole card has no omits; a signature over other content is still a plain mismatch', async () => {
    const whole = await generateAgentCardSignature(generated.privateJwk, {
      alg: 'ES256',
      kid: generated.kid,
      typ: 'JOSE',
    })(asSdkCard(json()));
    const verdict = await verifyCardSignatures(JSON.stringify(whole), keySetOf(generated), { requireSigned: true });
    assert.equal(verdict.status === 'verified' && verdict.omits, undefined);
    const other = await signedLikeTheSdk({ ...json(), description: 'Something else.' });
    await assert.rejects(
      verifyCardSignatures(JSON.stringify({ ...json(), signatures: other.signatures }), keySetOf(generated), {
        requireSigned: true,
        coverage: 'interfaces',
      }),
      (error: unknown) =>
        error instanceof CardSignatureError &&
        error.code === 'signature_unverified' &&
        error.failures[0]?.code === 'signature_mismatch',
    );
  });
});
