import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig, type AirlockConfig } from '../config/load.js';
import type { AgentConfig } from '../config/schema.js';
import { decodeAnyCard } from '../protocol/card.js';
import type { SecurityScheme } from '../protocol/model.js';
import { buildAgentCard, CardCache, PUBLIC_SKILL_ID } from './cards.js';
import { securitySchemesFor } from './auth/index.js';

const BEARER_SCHEME = securitySchemesFor({ apiKeyHeader: false }).bearer as SecurityScheme;
const API_KEY_SCHEME = securitySchemesFor({ apiKeyHeader: true }).apiKey;

const YAML = `
server: { port: 0 }
agents:
  - slug: travel
    name: Travel
    description: Plans trips.
    version: 2.1.0
    provider: { organization: Example Org, url: 'https://example.org' }
    documentationUrl: https://example.org/docs
    skills:
      - { id: book-flight, name: Book flights, description: Finds and books secret-fare flights, tags: [flights], examples: [Book me to Oslo] }
      - { id: hotels, name: Hotels, description: Finds hotels, tags: [stay] }
    backend: { type: echo }
    extendedCard:
      description: Plans trips, for members.
      skills: [{ id: members-only, name: Members, description: Member upgrades, tags: [vip] }]
  - slug: plain
    name: Plain
    description: No extras.
    skills: [{ id: plain-skill, name: Plain skill, description: Does plain things, tags: [] }]
    backend: { type: writer }
clients:
  - { id: c, token: 'client-token-0123456789abcdef0123456789', agents: [travel, plain] }
`;

function load(extraServer = ''): AirlockConfig {
  return parseConfig(YAML.replace('server: { port: 0 }', `server: { port: 0${extraServer} }`), {});
}

const config = load();
const travel = config.agents[0] as AgentConfig;
const plain = config.agents[1] as AgentConfig;
const URL_ = 'https://gw.example/a2a/travel';

/** Every string the configured skills hold, none of which may reach a public card. */
function skillStrings(agent: AgentConfig): string[] {
  const skills = [...agent.skills, ...(agent.extendedCard?.skills ?? [])];
  return skills.flatMap((skill) => [skill.id, skill.name, skill.description, ...(skill.examples ?? [])]);
}

describe('buildAgentCard: the public card', () => {
  it('is minimal: identity, interfaces, capabilities, security and one generic skill', () => {
    const card = buildAgentCard(travel, URL_, false);
    assert.deepEqual(card, {
      name: 'Travel',
      description: 'Plans trips.',
      version: '2.1.0',
      provider: { organization: 'Example Org', url: 'https://example.org' },
      documentationUrl: 'https://example.org/docs',
      interfaces: [
        { url: URL_, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: URL_, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        { url: URL_, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ],
      capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
      securitySchemes: { bearer: { ...BEARER_SCHEME } },
      securityRequirements: [{ bearer: [] }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: PUBLIC_SKILL_ID, name: 'Travel', description: 'Plans trips.', tags: [PUBLIC_SKILL_ID] }],
    });
  });

  it('lists JSON-RPC only when the HTTP+JSON binding is off (server.httpJson: false)', () => {
    const card = buildAgentCard(travel, URL_, false, undefined, { httpJson: false });
    assert.deepEqual(
      card.interfaces.map((i) => i.protocolBinding),
      ['JSONRPC', 'JSONRPC'],
    );
  });

  it('leaves provider and documentationUrl out when they are not configured', () => {
    const card = buildAgentCard(plain, URL_, false);
    assert.equal('provider' in card, false);
    assert.equal('documentationUrl' in card, false);
  });

  it('announces the extended card for every agent, configured overrides or not', () => {
    assert.equal(buildAgentCard(plain, URL_, false).capabilities.extendedAgentCard, true);
    assert.equal(buildAgentCard(travel, URL_, false).capabilities.extendedAgentCard, true);
  });

  it('never carries a configured skill, example or extended description, in either dialect', () => {
    const cards = new CardCache(config);
    for (const agent of [travel, plain]) {
      for (const version of ['1.0', '0.3'] as const) {
        const body = cards.render(agent, version, 'https://gw.example', false).body;
        for (const text of skillStrings(agent)) assert.ok(!body.includes(text), `${agent.slug} ${version}: ${text}`);
        assert.ok(!body.includes('for members'));
        assert.ok(!body.includes('echo') && !body.includes('writer'), 'no backend type');
        assert.ok(!body.includes('client-token'), 'no client token');
      }
    }
  });
});

describe('buildAgentCard: the extended card', () => {
  it('has the extendedCard overrides when configured', () => {
    const card = buildAgentCard(travel, URL_, true);
    assert.equal(card.description, 'Plans trips, for members.');
    assert.deepEqual(card.skills, [
      { id: 'members-only', name: 'Members', description: 'Member upgrades', tags: ['vip'] },
    ]);
    assert.equal(card.capabilities.extendedAgentCard, true);
  });

  it('has the configured skills and description when there are no overrides', () => {
    const card = buildAgentCard(plain, URL_, true);
    assert.equal(card.description, 'No extras.');
    assert.deepEqual(card.skills, [
      { id: 'plain-skill', name: 'Plain skill', description: 'Does plain things', tags: [] },
    ]);
  });

  it('keeps skill examples', () => {
    const withoutOverrides: AgentConfig = { ...travel, extendedCard: { description: 'Members.' } };
    const card = buildAgentCard(withoutOverrides, URL_, true);
    assert.equal(card.description, 'Members.');
    assert.deepEqual(
      card.skills.map((skill) => [skill.id, skill.examples]),
      [
        ['book-flight', ['Book me to Oslo']],
        ['hotels', undefined],
      ],
    );
  });
});

describe('buildAgentCard: security schemes', () => {
  it('lists bearer only by default', () => {
    assert.deepEqual(securitySchemesFor({ apiKeyHeader: false }), { bearer: BEARER_SCHEME });
    const card = buildAgentCard(travel, URL_, false, securitySchemesFor({ apiKeyHeader: false }));
    assert.deepEqual(card.securityRequirements, [{ bearer: [] }]);
  });

  it('lists X-API-Key as an alternative to bearer when it is accepted', () => {
    for (const extended of [false, true]) {
      const card = buildAgentCard(travel, URL_, extended, securitySchemesFor({ apiKeyHeader: true }));
      assert.deepEqual(card.securitySchemes, { bearer: BEARER_SCHEME, apiKey: API_KEY_SCHEME });
      // Two requirements are two alternatives; one requirement naming both would demand both.
      assert.deepEqual(card.securityRequirements, [{ bearer: [] }, { apiKey: [] }]);
    }
  });

  it('takes whatever schemes the caller passes', () => {
    const card = buildAgentCard(travel, URL_, false, {
      key: { type: 'apiKey', location: 'header', name: 'X-Other', description: 'd' },
    });
    assert.deepEqual(Object.keys(card.securitySchemes), ['key']);
    assert.deepEqual(card.securityRequirements, [{ key: [] }]);
  });

  it('hands out copies: editing one card changes neither the next card nor the shared schemes', () => {
    const first = buildAgentCard(travel, URL_, false, securitySchemesFor({ apiKeyHeader: true }));
    (first.securitySchemes.bearer as { description?: string }).description = 'changed';
    delete first.securitySchemes.apiKey;
    const second = buildAgentCard(travel, URL_, false, securitySchemesFor({ apiKeyHeader: true }));
    assert.equal(second.securitySchemes.bearer?.description, BEARER_SCHEME.description);
    assert.ok(second.securitySchemes.apiKey !== undefined);
  });
});

describe('CardCache', () => {
  it('renders each card once, with distinct ETags for the public and extended cards', () => {
    const cards = new CardCache(config);
    const first = cards.render(travel, '1.0', 'https://gw.example', false);
    assert.equal(cards.render(travel, '1.0', 'https://gw.example', false), first);
    const extended = cards.render(travel, '1.0', 'https://gw.example', true);
    assert.notEqual(extended.etag, first.etag);
    assert.match(first.etag, /^"[\w-]{27}"$/);
    assert.ok(!Number.isNaN(Date.parse(cards.lastModified)));
  });

  it('puts the endpoint under basePath and the agent slug', () => {
    const cards = new CardCache(config);
    assert.equal(cards.endpointUrl(travel, 'https://gw.example'), 'https://gw.example/a2a/travel');
    assert.equal(cards.card(travel, 'https://gw.example', false).interfaces[0]?.url, 'https://gw.example/a2a/travel');
  });

  it('follows server.apiKeyHeader, in both dialects, and the cards decode again', () => {
    for (const apiKeyHeader of [false, true]) {
      const cards = new CardCache(load(apiKeyHeader ? ', apiKeyHeader: true' : ''));
      for (const version of ['1.0', '0.3'] as const) {
        for (const extended of [false, true]) {
          const decoded = decodeAnyCard(JSON.parse(cards.render(travel, version, 'https://gw.example', extended).body));
          const expected = apiKeyHeader ? ['bearer', 'apiKey'] : ['bearer'];
          assert.deepEqual(Object.keys(decoded.securitySchemes), expected, `${version} ${extended}`);
          assert.deepEqual(
            decoded.securityRequirements,
            expected.map((name) => ({ [name]: [] })),
          );
          if (apiKeyHeader) assert.deepEqual(decoded.securitySchemes.apiKey, API_KEY_SCHEME);
          assert.equal(decoded.capabilities.extendedAgentCard, true);
          assert.deepEqual(
            decoded.skills.map((skill) => skill.id),
            extended ? ['members-only'] : [PUBLIC_SKILL_ID],
          );
        }
      }
      assert.deepEqual(
        Object.keys(cards.card(travel, 'https://gw.example', true).securitySchemes),
        apiKeyHeader ? ['bearer', 'apiKey'] : ['bearer'],
      );
    }
  });
});
