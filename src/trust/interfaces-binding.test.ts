/**
 * The binding choice of `chooseInterface`, exhaustively: every subset of the six interface kinds
 * (JSON-RPC, HTTP+JSON, gRPC × v1.0, v0.3), in card order and reversed, against a reference
 * written as the rule reads (JSON-RPC 1.0, else JSON-RPC 0.3, else HTTP+JSON 1.0, else refused
 * naming what is offered); the URL rules for an HTTP+JSON interface; and both card shapes
 * through the real card decoder.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeAnyCard } from '../protocol/card/decode.js';
import type { AgentCard, AgentInterface } from '../protocol/model.js';
import { CardTrustError } from './errors.js';
import { chooseInterface, type ChosenEndpoint } from './interfaces.js';

const CARD_URL = 'https://a.example/.well-known/agent-card.json';

type Kind = Pick<AgentInterface, 'protocolBinding' | 'protocolVersion'>;

const KINDS: readonly Kind[] = (['JSONRPC', 'HTTP+JSON', 'GRPC'] as const).flatMap((protocolBinding) =>
  (['1.0', '0.3'] as const).map((protocolVersion) => ({ protocolBinding, protocolVersion })),
);

function urlOf(kind: Kind): string {
  return `https://a.example/${kind.protocolBinding.toLowerCase().replace('+', '-')}/${kind.protocolVersion}`;
}

function cardWith(interfaces: AgentInterface[]): AgentCard {
  return {
    name: 'A',
    description: '',
    version: '1',
    interfaces,
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: [],
    defaultOutputModes: [],
    skills: [],
  };
}

/** The rule, written the way the docs state it. */
function expected(kinds: readonly Kind[]): ChosenEndpoint | undefined {
  const has = (binding: Kind['protocolBinding'], version: Kind['protocolVersion']): boolean =>
    kinds.some((k) => k.protocolBinding === binding && k.protocolVersion === version);
  const pick = (protocolBinding: 'JSONRPC' | 'HTTP+JSON', version: '1.0' | '0.3'): ChosenEndpoint => ({
    url: urlOf({ protocolBinding, protocolVersion: version }),
    version,
    binding: protocolBinding,
  });
  if (has('JSONRPC', '1.0')) return pick('JSONRPC', '1.0');
  if (has('JSONRPC', '0.3')) return pick('JSONRPC', '0.3');
  if (has('HTTP+JSON', '1.0')) return pick('HTTP+JSON', '1.0');
  return undefined;
}

const NAMES: Record<Kind['protocolBinding'], string> = { JSONRPC: 'JSON-RPC', 'HTTP+JSON': 'HTTP+JSON', GRPC: 'gRPC' };

describe('chooseInterface: the binding, every combination', () => {
  it('JSON-RPC when listed (1.0 before 0.3), else HTTP+JSON 1.0, else refused naming the offer', () => {
    let checked = 0;
    for (let mask = 0; mask < 1 << KINDS.length; mask++) {
      const kinds = KINDS.filter((_, i) => (mask & (1 << i)) !== 0);
      for (const order of [kinds, [...kinds].reverse()]) {
        const card = cardWith(order.map((k) => ({ ...k, url: urlOf(k) })));
        const want = expected(order);
        if (want !== undefined) {
          assert.deepEqual(chooseInterface(card, { cardUrl: CARD_URL }), want, JSON.stringify(order));
        } else {
          assert.throws(
            () => chooseInterface(card, { cardUrl: CARD_URL, entry: 'peer' }),
            (error: unknown) => {
              assert.ok(error instanceof CardTrustError);
              assert.equal(error.code, 'card_invalid');
              assert.match(error.message, /no interface Airlock calls/);
              const offer = [...new Set(order.map((k) => `${NAMES[k.protocolBinding]} ${k.protocolVersion}`))].sort();
              assert.ok(
                error.message.endsWith(`offers ${offer.length === 0 ? 'none Airlock can read' : offer.join(', ')}`),
                error.message,
              );
              return true;
            },
          );
        }
        checked += 1;
      }
    }
    assert.equal(checked, 128);
  });

  it("copies the chosen HTTP+JSON interface's tenant", () => {
    const card = cardWith([
      { url: 'https://a.example/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 't1' },
    ]);
    assert.deepEqual(chooseInterface(card, { cardUrl: CARD_URL }), {
      url: 'https://a.example/rest',
      version: '1.0',
      binding: 'HTTP+JSON',
      tenant: 't1',
    });
  });
});

describe('chooseInterface: an HTTP+JSON interface passes the same URL rules as a JSON-RPC one', () => {
  const rest = (url: string, protocolVersion: '1.0' | '0.3' = '1.0'): AgentInterface => ({
    url,
    protocolBinding: 'HTTP+JSON',
    protocolVersion,
  });
  const refused = (interfaces: AgentInterface[], cardUrl: string, pattern: RegExp): void => {
    assert.throws(
      () => chooseInterface(cardWith(interfaces), { cardUrl, entry: 'peer' }),
      (error: unknown) =>
        error instanceof CardTrustError && error.code === 'card_invalid' && pattern.test(error.message),
    );
  };

  it('refuses another origin, plain http off loopback, user info, another scheme', () => {
    refused([rest('https://evil.example/rest')], CARD_URL, /HTTP\+JSON interface .*evil\.example.* origin/);
    refused([rest('http://a.example/rest')], 'http://a.example/card', /plain http/);
    refused([rest('https://user:pw@a.example/rest')], CARD_URL, /user info/);
    refused([rest('ftp://a.example/rest')], CARD_URL, /scheme must be https/);
  });

  it('checks every HTTP+JSON interface, the v0.3 one it never calls too', () => {
    refused([rest('https://a.example/rest'), rest('https://evil.example/v03', '0.3')], CARD_URL, /evil\.example/);
  });

  it('allows the rpc_url origin and loopback http from a loopback card', () => {
    const other = chooseInterface(cardWith([rest('https://rpc.example/rest')]), {
      cardUrl: CARD_URL,
      rpcUrl: 'https://rpc.example/',
    });
    assert.equal(other.url, 'https://rpc.example/rest');
    const local = chooseInterface(cardWith([rest('http://127.0.0.1:8080/rest')]), {
      cardUrl: 'http://127.0.0.1:8080/card',
    });
    assert.equal(local.binding, 'HTTP+JSON');
  });

  it('does not check HTTP+JSON interfaces when JSON-RPC is chosen (never called)', () => {
    const card = cardWith([
      rest('https://evil.example/rest'),
      { ...rest('https://a.example/rpc'), protocolBinding: 'JSONRPC' },
    ]);
    assert.equal(chooseInterface(card, { cardUrl: CARD_URL }).binding, 'JSONRPC');
  });
});

describe('chooseInterface: both card shapes through the card decoder', () => {
  const base = { name: 'A', version: '1', capabilities: {}, skills: [] };

  it('v1.0 supportedInterfaces: HTTP+JSON only → HTTP+JSON; both → JSON-RPC', () => {
    const onlyRest = decodeAnyCard({
      ...base,
      supportedInterfaces: [{ url: 'https://a.example/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }],
    });
    assert.equal(chooseInterface(onlyRest, { cardUrl: CARD_URL }).binding, 'HTTP+JSON');
    const both = decodeAnyCard({
      ...base,
      supportedInterfaces: [
        { url: 'https://a.example/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        { url: 'https://a.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      ],
    });
    assert.deepEqual(chooseInterface(both, { cardUrl: CARD_URL }), {
      url: 'https://a.example/rpc',
      version: '1.0',
      binding: 'JSONRPC',
    });
  });

  it('v0.3 preferredTransport/additionalInterfaces: JSON-RPC chosen wherever it is listed', () => {
    const card = decodeAnyCard({
      ...base,
      url: 'https://a.example/rest',
      preferredTransport: 'HTTP+JSON',
      additionalInterfaces: [{ url: 'https://a.example/rpc', transport: 'JSONRPC' }],
    });
    assert.deepEqual(chooseInterface(card, { cardUrl: CARD_URL }), {
      url: 'https://a.example/rpc',
      version: '0.3',
      binding: 'JSONRPC',
    });
  });

  it('v0.3 HTTP+JSON only: refused, naming it (the v0.3 REST shapes are not spoken)', () => {
    const card = decodeAnyCard({ ...base, url: 'https://a.example/rest', preferredTransport: 'HTTP+JSON' });
    assert.throws(
      () => chooseInterface(card, { cardUrl: CARD_URL }),
      (error: unknown) =>
        error instanceof CardTrustError &&
        error.code === 'card_invalid' &&
        /offers HTTP\+JSON 0\.3$/.test(error.message),
    );
  });
});
