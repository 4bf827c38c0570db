import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeAnyCard, encodeCardV03, encodeCardV10 } from '../protocol/card.js';
import { cardArb } from '../protocol/arbitraries.test.js';
import type { AgentCard, AgentInterface } from '../protocol/model.js';
import {
  MAX_CANONICAL_DEPTH,
  assertDepth,
  canonicalJson,
  cardTrustDigest,
  normalizeDigest,
  trustFieldsOf,
} from './digest.js';

const CARD: AgentCard = {
  name: 'Weather',
  description: 'Forecasts.',
  version: '1.2.0',
  provider: { organization: 'Example', url: 'https://example.org' },
  interfaces: [
    { url: 'https://w.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 't1' },
    { url: 'w.example:443', protocolBinding: 'GRPC', protocolVersion: '1.0' },
  ],
  capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
  securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
  securityRequirements: [{ bearer: [] }],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    { id: 'forecast', name: 'Forecast', description: 'Forecasts weather', tags: ['weather'], examples: ['Oslo?'] },
  ],
};

/** The same JSON value with every object's keys inserted in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, inner]) => [key, reverseKeys(inner)]),
  );
}

function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe('canonicalJson: RFC 8785 via canonicalize', () => {
  it('sorts object keys by UTF-16 code units, recursively, and drops whitespace', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [3, 2], c: null } }), '{"a":{"c":null,"d":[3,2]},"b":1}');
    // RFC 8785 §3.2.3's sorting example: values in the order their keys must come out.
    const input: Record<string, string> = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    const text = canonicalJson(input);
    const positions = [
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ].map((value) => text.indexOf(value));
    assert.ok(positions.every((position) => position > 0));
    assert.deepEqual(
      positions,
      [...positions].sort((a, b) => a - b),
    );
  });

  it('formats numbers as ECMAScript does (RFC 8785 §3.2.2.3 vectors)', () => {
    // JSON.parse reads the RFC's literal input; canonicalJson must print the RFC's output.
    const parsed: unknown = JSON.parse('{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001]}');
    assert.equal(canonicalJson(parsed), '{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27]}');
    assert.equal(
      canonicalJson([-0, 1e21, 1e-7, JSON.parse('9007199254740993'), 0.1 + 0.2]),
      '[0,1e+21,1e-7,9007199254740992,0.30000000000000004]',
    );
  });

  it('escapes strings minimally (RFC 8785 §3.2.2.2)', () => {
    assert.equal(canonicalJson({ s: '\u20ac$\u000f\nA\'B"\\\\"/' }), '{"s":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('refuses what JSON cannot carry: NaN, infinities, lone surrogates', () => {
    assert.throws(() => canonicalJson([Number.NaN]));
    assert.throws(() => canonicalJson({ n: Number.POSITIVE_INFINITY }));
    assert.throws(() => canonicalJson({ s: 'a\ud800b' }));
    assert.throws(() => canonicalJson({ ['\udc00']: 1 }));
    assert.throws(() => canonicalJson(undefined));
  });

  it('caps the depth before canonicalize recurses, so a nesting bomb is a RangeError, not a stack overflow', () => {
    assert.equal(canonicalJson(nested(MAX_CANONICAL_DEPTH - 1)).length > 0, true);
    assert.throws(() => canonicalJson(nested(MAX_CANONICAL_DEPTH + 1)), RangeError);
    assert.throws(() => canonicalJson(nested(100_000)), RangeError);
    assert.throws(() => assertDepth([[[]]], 2), RangeError);
    assert.doesNotThrow(() => assertDepth([[[]]], 3));
    assert.doesNotThrow(() => assertDepth('scalar', 0));
  });

  it('ends on a cyclic value instead of looping', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.throws(() => canonicalJson(cycle), RangeError);
  });
});

describe('trustFieldsOf', () => {
  it('holds exactly the pinned fields: interfaces (url, binding, version), schemes, requirements, skills without examples', () => {
    assert.deepEqual(trustFieldsOf(CARD), {
      interfaces: [
        { url: 'https://w.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'w.example:443', protocolBinding: 'GRPC', protocolVersion: '1.0' },
      ],
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      securityRequirements: [{ bearer: [] }],
      skills: [{ id: 'forecast', name: 'Forecast', description: 'Forecasts weather', tags: ['weather'] }],
    });
  });

  it('copies only known properties, so an extra property on an object handed in is not pinned', () => {
    const extra = structuredClone(CARD) as AgentCard & { interfaces: (AgentInterface & { note?: string })[] };
    extra.interfaces[0]!.note = 'ignored';
    assert.deepEqual(trustFieldsOf(extra), trustFieldsOf(CARD));
  });

  it('keeps a scheme named __proto__ as an ordinary key', () => {
    const card: AgentCard = {
      ...CARD,
      securitySchemes: Object.fromEntries([['__proto__', { type: 'apiKey', location: 'header', name: 'k' }]]),
    };
    assert.match(canonicalJson(trustFieldsOf(card)), /"__proto__":\{"location":"header","name":"k","type":"apiKey"\}/);
    assert.notEqual(cardTrustDigest(card), cardTrustDigest({ ...CARD, securitySchemes: {} }));
  });
});

describe('cardTrustDigest', () => {
  it('is the hex SHA-256 of the JCS form of the trust fields', () => {
    const expected = createHash('sha256')
      .update(canonicalJson(trustFieldsOf(CARD)))
      .digest('hex');
    assert.equal(cardTrustDigest(CARD), expected);
    assert.match(expected, /^[0-9a-f]{64}$/);
  });

  it('depends on interface order (the preference order), as documented', () => {
    const swapped = { ...CARD, interfaces: [CARD.interfaces[1]!, CARD.interfaces[0]!] };
    assert.notEqual(cardTrustDigest(swapped), cardTrustDigest(CARD));
  });

  it('does not depend on object key order (JCS sorts keys)', () => {
    const reversed = reverseKeys(CARD) as AgentCard;
    assert.notEqual(JSON.stringify(reversed), JSON.stringify(CARD));
    assert.equal(cardTrustDigest(reversed), cardTrustDigest(CARD));
  });

  it('throws for a lone surrogate in a trust field, and ignores one outside them', () => {
    const badSkill = structuredClone(CARD);
    badSkill.skills[0]!.description = 'x\ud800';
    assert.throws(() => cardTrustDigest(badSkill));
    assert.equal(cardTrustDigest({ ...CARD, description: 'x\ud800' }), cardTrustDigest(CARD));
  });

  it('is the same for a card served in the v1.0 and in the v0.3 shape', () => {
    fc.assert(
      fc.property(cardArb, (card) => {
        const v10 = cardTrustDigest(decodeAnyCard(encodeCardV10(card)));
        const v03 = cardTrustDigest(decodeAnyCard(encodeCardV03(card)));
        assert.equal(v10, v03);
        assert.equal(v10, cardTrustDigest(card));
      }),
    );
  });

  it('does not change when fields outside the trust set change (property)', () => {
    const otherFields = fc.record({
      name: fc.string({ maxLength: 30 }),
      description: fc.string({ maxLength: 80 }),
      version: fc.string({ maxLength: 10 }),
      documentationUrl: fc.webUrl(),
      iconUrl: fc.webUrl(),
      provider: fc.record({ organization: fc.string({ maxLength: 20 }), url: fc.webUrl() }),
      capabilities: fc.record({
        streaming: fc.boolean(),
        pushNotifications: fc.boolean(),
        extendedAgentCard: fc.boolean(),
      }),
      defaultInputModes: fc.array(fc.constantFrom('text/plain', 'application/json'), { maxLength: 2 }),
      defaultOutputModes: fc.array(fc.constantFrom('text/plain', 'image/png'), { maxLength: 2 }),
      examples: fc.option(fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }), { nil: undefined }),
      tenant: fc.option(fc.string({ minLength: 1, maxLength: 10 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(cardArb, otherFields, (card, other) => {
        const { examples, tenant, ...top } = other;
        const changed: AgentCard = {
          ...card,
          ...top,
          interfaces: card.interfaces.map((i) => {
            const { tenant: _old, ...rest } = i;
            return tenant === undefined ? rest : { ...rest, tenant };
          }),
          skills: card.skills.map((skill) => {
            const { examples: _old, ...rest } = skill;
            return examples === undefined ? rest : { ...rest, examples };
          }),
        };
        assert.equal(cardTrustDigest(changed), cardTrustDigest(card));
      }),
    );
  });

  it('changes when any trust field changes (property)', () => {
    type Mutation = (card: AgentCard) => AgentCard | undefined;
    const withInterface = (card: AgentCard, change: (i: AgentInterface) => AgentInterface): AgentCard => ({
      ...card,
      interfaces: card.interfaces.map((i, n) => (n === 0 ? change(i) : i)),
    });
    const mutations: Record<string, Mutation> = {
      interfaceUrl: (card) => withInterface(card, (i) => ({ ...i, url: `${i.url}x` })),
      interfaceBinding: (card) =>
        withInterface(card, (i) => ({ ...i, protocolBinding: i.protocolBinding === 'JSONRPC' ? 'GRPC' : 'JSONRPC' })),
      interfaceVersion: (card) =>
        withInterface(card, (i) => ({ ...i, protocolVersion: i.protocolVersion === '1.0' ? '0.3' : '1.0' })),
      interfaceAdded: (card) => ({
        ...card,
        interfaces: [
          ...card.interfaces,
          { url: 'https://x.example', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        ],
      }),
      interfaceRemoved: (card) =>
        card.interfaces.length > 1 ? { ...card, interfaces: card.interfaces.slice(1) } : undefined,
      schemeAdded: (card) => ({
        ...card,
        securitySchemes: {
          ...card.securitySchemes,
          ['new-scheme-' + Object.keys(card.securitySchemes).join('')]: { type: 'http', scheme: 'bearer' },
        },
      }),
      schemeChanged: (card) => {
        const [name, scheme] = Object.entries(card.securitySchemes)[0] ?? [];
        if (name === undefined || scheme === undefined) return undefined;
        return {
          ...card,
          securitySchemes: {
            ...card.securitySchemes,
            [name]: { ...scheme, description: `${scheme.description ?? ''}!` },
          },
        };
      },
      requirementAdded: (card) => ({ ...card, securityRequirements: [...card.securityRequirements, { s: ['scope'] }] }),
      requirementScope: (card) => {
        const first = card.securityRequirements[0];
        if (first === undefined || 'added-by-test' in first) return undefined;
        return {
          ...card,
          securityRequirements: [{ ...first, 'added-by-test': ['x'] }, ...card.securityRequirements.slice(1)],
        };
      },
      skillAdded: (card) => ({
        ...card,
        skills: [...card.skills, { id: 'added', name: 'n', description: '', tags: [] }],
      }),
      skillText: (card) => {
        const [first, ...rest] = card.skills;
        if (first === undefined) return undefined;
        return { ...card, skills: [{ ...first, description: `${first.description} and more` }, ...rest] };
      },
      skillName: (card) => {
        const [first, ...rest] = card.skills;
        if (first === undefined) return undefined;
        return { ...card, skills: [{ ...first, name: `${first.name}!` }, ...rest] };
      },
      skillTags: (card) => {
        const [first, ...rest] = card.skills;
        if (first === undefined) return undefined;
        return { ...card, skills: [{ ...first, tags: [...first.tags, 'new-tag'] }, ...rest] };
      },
      skillModes: (card) => {
        const [first, ...rest] = card.skills;
        if (first === undefined) return undefined;
        return { ...card, skills: [{ ...first, outputModes: [...(first.outputModes ?? []), 'x/new'] }, ...rest] };
      },
    };
    fc.assert(
      fc.property(cardArb, fc.constantFrom(...Object.keys(mutations)), (card, which) => {
        const changed = mutations[which]!(card);
        fc.pre(changed !== undefined);
        assert.notEqual(cardTrustDigest(changed), cardTrustDigest(card), which);
      }),
      { numRuns: 500 },
    );
  });
});

describe('normalizeDigest', () => {
  it('accepts hex in either case with an optional sha256: prefix, and nothing else', () => {
    const hex = 'ab'.repeat(32);
    assert.equal(normalizeDigest(hex.toUpperCase()), hex);
    assert.equal(normalizeDigest(`sha256:${hex}`), hex);
    assert.equal(normalizeDigest(` ${hex} `), hex);
    assert.equal(normalizeDigest(hex.slice(1)), undefined);
    assert.equal(normalizeDigest(`${hex.slice(1)}g`), undefined);
    assert.equal(normalizeDigest(''), undefined);
  });
});
