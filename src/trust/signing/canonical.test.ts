import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalizeAgentCard } from '@a2a-js/sdk';
import fc from 'fast-check';
import { encodeCardV03, encodeCardV10 } from '../../protocol/card.js';
import { cardArb } from '../../protocol/arbitraries.test.js';
import { MAX_SIGNED_CARD_DEPTH, cardSigningPayload, cardV10Projection, removeEmptyValues } from './canonical.js';
import { CardSignatureError } from './errors.js';
import { RFC8785_NUMBER_VECTORS } from '../../../test/fixtures/rfc8785-numbers.js';

/** The SDK's canonicalizer, typed for plain card JSON (it takes the JSON shape). */
const sdkPayload = (card: unknown): string =>
  canonicalizeAgentCard(card as Parameters<typeof canonicalizeAgentCard>[0]);

/** A card whose one extension carries `params`: a Struct, kept as sent, so JCS sees raw JSON values. */
function withParams(params: unknown): Record<string, unknown> {
  return { name: 'N', capabilities: { extensions: [{ uri: 'urn:x', params }] } };
}

/** The canonical form of `params` inside the payload of `withParams(params)`. */
function paramsForm(params: unknown): string {
  const payload = cardSigningPayload(withParams(params));
  const prefix = '{"capabilities":{"extensions":[{"params":';
  const suffix = ',"uri":"urn:x"}]},"name":"N"}';
  assert.ok(payload.startsWith(prefix) && payload.endsWith(suffix), payload);
  return payload.slice(prefix.length, payload.length - suffix.length);
}

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof CardSignatureError, String(error));
    return error.code;
  }
  return undefined;
}

function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, inner]) => [key, reverseKeys(inner)]),
  );
}

describe('cardSigningPayload: RFC 8785 vectors through the payload', () => {
  it('serialises numbers as RFC 8785 Appendix B lists them (IEEE 754 bits → text)', () => {
    const vectors = RFC8785_NUMBER_VECTORS;
    for (const [bits, expected] of vectors) {
      assert.equal(paramsForm({ n: fromBits(bits) }), `{"n":${expected}}`, bits);
    }
  });

  it('refuses NaN and Infinity (RFC 8785 Appendix B: "error"), which the SDK would write as null', () => {
    assert.equal(
      codeOf(() => cardSigningPayload(withParams({ n: fromBits('7fffffffffffffff') }))),
      'card_malformed',
    );
    assert.equal(
      codeOf(() => cardSigningPayload(withParams({ n: fromBits('7ff0000000000000') }))),
      'card_malformed',
    );
    // JSON.parse reads an out-of-range literal as Infinity: such a card has no canonical form.
    assert.equal(
      codeOf(() => cardSigningPayload(JSON.parse('{"capabilities":{"extensions":[{"params":{"n":1e400}}]}}'))),
      'card_malformed',
    );
  });

  it('escapes strings as RFC 8785 §3.2.2.2 does, and writes UTF-8', () => {
    // The RFC's example: € $ U+000F LF A ' B " \ \ " /, written with escapes in the input.
    const input = JSON.parse('"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/"') as string;
    const form = paramsForm({ string: input });
    assert.equal(form, '{"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
    assert.equal(Buffer.from(form, 'utf8').subarray(11, 15).toString('hex'), 'e282ac24');
    // Every control character gets its short or \u00xx escape; DEL and non-ASCII stay literal.
    assert.equal(
      paramsForm({ s: '\b\f\n\r\t\u0000\u001f\u007f\u00e9' }),
      '{"s":"\\b\\f\\n\\r\\t\\u0000\\u001f\u007f\u00e9"}',
    );
  });

  it('orders keys by UTF-16 code units (RFC 8785 §3.2.3), surrogate pairs included', () => {
    const form = paramsForm({
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    });
    const values = [...form.matchAll(/":"([^"]+)"/g)].map((m) => m[1]);
    // U+1F600 is above U+FB33 as a code point but its first code unit (0xD83D) sorts before 0xFB33.
    assert.deepEqual(values, [
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ]);
  });

  it('writes RFC 8785 §3.2.4’s example as the RFC does, less the null that A2A’s cleanup removes', () => {
    const parsed = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    ) as unknown;
    assert.equal(
      paramsForm(parsed),
      '{"literals":[true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
    assert.equal(cardSigningPayload(withParams(parsed)), sdkPayload(withParams(parsed)));
  });

  it('refuses lone surrogates (I-JSON), in values and in keys', () => {
    assert.equal(
      codeOf(() => cardSigningPayload({ name: 'a\ud800b' })),
      'card_malformed',
    );
    assert.equal(
      codeOf(() => cardSigningPayload(withParams({ '\udc00': 1 }))),
      'card_malformed',
    );
    // A well-formed pair is fine.
    assert.equal(cardSigningPayload({ name: '\ud83d\ude00' }), '{"name":"😀"}');
  });
});

describe('cardSigningPayload: the A2A cleanup, as the SDKs do it (A2A#2249)', () => {
  it('drops unknown members, signatures and proto3 defaults; keeps explicit optional false', () => {
    const card = {
      name: 'Echo',
      description: '',
      url: 'https://v03.example/rpc',
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3.0',
      supportedInterfaces: [
        { url: 'https://e.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      ],
      capabilities: {
        streaming: false,
        pushNotifications: true,
        extensions: [{ uri: 'urn:e', required: false, description: '', params: {} }],
      },
      securitySchemes: { legacy: { type: 'http', scheme: 'bearer' } },
      security: [{ legacy: [] }],
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      skills: [{ id: 's', name: 'S', description: '', tags: [], examples: [], inputModes: [], outputModes: [] }],
      signatures: [{ protected: 'x', signature: 'y' }],
      extra: { anything: true },
    };
    const expected =
      '{"capabilities":{"extensions":[{"uri":"urn:e"}],"pushNotifications":true,"streaming":false},"name":"Echo",' +
      '"skills":[{"id":"s","name":"S"}],"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://e.example/rpc"}]}';
    assert.equal(cardSigningPayload(card), expected);
    assert.equal(sdkPayload(card), expected);
  });

  it('reads snake_case spellings, coerces scalars and keeps required:true, as the SDK does', () => {
    const card = {
      name: 7,
      supported_interfaces: [{ url: 'https://e.example', protocol_binding: 'JSONRPC', protocol_version: 1 }],
      capabilities: { push_notifications: 0, extended_agent_card: 'yes', extensions: [{ uri: 'u', required: 1 }] },
      security_schemes: {
        k: { api_key_security_scheme: { location: 'header', name: 'X-Key' }, httpAuthSecurityScheme: { scheme: 'x' } },
        o: {
          oauth2SecurityScheme: {
            flows: { device_code: { device_authorization_url: 'https://d', scopes: { read: null, n: 5 } } },
          },
        },
        m: { mtls_security_scheme: { description: 'mutual' } },
      },
      skills: [
        {
          id: 's',
          tags: ['a', '', null, 3],
          input_modes: ['text/plain'],
          security_requirements: [{ schemes: { k: null } }],
        },
      ],
      default_input_modes: ['text/plain'],
      icon_url: 'https://i',
    };
    const payload = cardSigningPayload(card);
    assert.equal(payload, sdkPayload(card));
    const parsed = JSON.parse(payload);
    assert.equal(parsed.name, '7');
    assert.deepEqual(parsed.capabilities, {
      extendedAgentCard: true,
      extensions: [{ required: true, uri: 'u' }],
      pushNotifications: false,
    });
    // The first oneof case present wins, in the proto's order (apiKey before httpAuth).
    assert.deepEqual(Object.keys(parsed.securitySchemes.k), ['apiKeySecurityScheme']);
    assert.deepEqual(parsed.skills[0].tags, ['a', 'null', '3']);
  });

  it('drops __proto__ members wherever they are, as the SDK’s assignments lose them', () => {
    const card = JSON.parse(
      '{"name":"N","securitySchemes":{"__proto__":{"mtlsSecurityScheme":{"description":"d"}},"ok":{"mtlsSecurityScheme":{"description":"e"}}},' +
        '"capabilities":{"extensions":[{"uri":"u","params":{"__proto__":{"x":1},"y":2}}]}}',
    ) as unknown;
    assert.equal(cardSigningPayload(card), sdkPayload(card));
    assert.ok(!cardSigningPayload(card).includes('__proto__'));
  });

  it('refuses what the SDK would stringify into nonsense: objects where text belongs, null list elements', () => {
    assert.equal(
      codeOf(() => cardSigningPayload({ name: { a: 1 } })),
      'card_malformed',
    );
    assert.equal(
      codeOf(() => cardSigningPayload({ skills: [{ id: 's', tags: [['x']] }] })),
      'card_malformed',
    );
    assert.equal(
      codeOf(() => cardSigningPayload({ skills: [null] })),
      'card_malformed',
    );
    assert.equal(
      codeOf(() => cardSigningPayload({ securitySchemes: { a: null } })),
      'card_malformed',
    );
    assert.equal(
      codeOf(() => cardSigningPayload([1])),
      'card_malformed',
    );
    // The SDK throws on a null skill too; a null StringList reads as empty in both.
    assert.throws(() => sdkPayload({ skills: [null] }));
    const nullList = { securityRequirements: [{ schemes: { a: null } }], name: 'N' };
    assert.equal(cardSigningPayload(nullList), sdkPayload(nullList));
  });

  it('is "{}" for a card with nothing left, like the SDK', () => {
    assert.equal(cardSigningPayload({ signatures: [], skills: [{}], name: '' }), '{}');
    assert.equal(sdkPayload({ signatures: [], skills: [{}], name: '' }), '{}');
  });

  it('refuses a card nested deeper than the cap before canonicalizing, without exhausting the stack', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    assert.equal(
      codeOf(() => cardSigningPayload(withParams(deep))),
      'card_too_deep',
    );
    let justDeepEnough: unknown = 0;
    // card → capabilities → extensions → [0] → params: 5 levels before params' own nesting.
    for (let i = 0; i < MAX_SIGNED_CARD_DEPTH - 5; i++) justDeepEnough = [justDeepEnough];
    assert.doesNotThrow(() => cardSigningPayload(withParams({ v: justDeepEnough })));
    assert.equal(
      codeOf(() => cardSigningPayload(withParams({ v: [justDeepEnough] }))),
      'card_too_deep',
    );
  });
});

describe('cardV10Projection and removeEmptyValues', () => {
  it('projects without cleaning, so empty values stay visible', () => {
    assert.deepEqual(cardV10Projection({ name: '', url: 'https://x', skills: [] }), { name: '', skills: [] });
  });

  it('removes empty strings, arrays, objects and nulls recursively, keeping false and 0', () => {
    assert.deepEqual(removeEmptyValues({ a: '', b: [null, [], 'x', 0], c: { d: {} }, e: false }), {
      b: ['x', 0],
      e: false,
    });
    assert.equal(removeEmptyValues([{}, '', null, [[]]]), undefined);
  });
});

describe('cardSigningPayload: properties', () => {
  const wireArb = fc
    .tuple(cardArb, fc.boolean())
    .map(([card, v10]) => (v10 ? encodeCardV10(card) : encodeCardV03(card)));

  it('equals the SDK’s canonicalizeAgentCard for Airlock’s cards in both shapes', () => {
    fc.assert(
      fc.property(wireArb, (wire) => {
        assert.equal(cardSigningPayload(wire), sdkPayload(wire));
      }),
      { numRuns: 300 },
    );
  });

  it('equals the SDK’s for loosely typed cards whenever it has an answer', () => {
    const scalar = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(''),
    );
    const loose = fc.record(
      {
        name: scalar,
        description: scalar,
        supportedInterfaces: fc.array(
          fc.record({ url: scalar, protocol_binding: scalar, tenant: scalar }, { requiredKeys: [] }),
        ),
        capabilities: fc.record(
          {
            streaming: scalar,
            extensions: fc.array(
              fc.record({ uri: scalar, required: scalar, params: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] }),
            ),
          },
          { requiredKeys: [] },
        ),
        skills: fc.array(
          fc.record({ id: scalar, tags: fc.array(scalar), examples: fc.array(scalar) }, { requiredKeys: [] }),
        ),
        signatures: fc.array(fc.record({ protected: scalar, signature: scalar })),
        unknown: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(loose, (card) => {
        let ours: string;
        try {
          ours = cardSigningPayload(card);
        } catch (error) {
          assert.ok(error instanceof CardSignatureError);
          return;
        }
        assert.equal(ours, sdkPayload(card));
      }),
      { numRuns: 300 },
    );
  });

  it('does not depend on member order or on the signatures member', () => {
    const signaturesArb = fc.array(fc.record({ protected: fc.base64String(), signature: fc.base64String() }), {
      maxLength: 3,
    });
    fc.assert(
      fc.property(wireArb, signaturesArb, (wire, signatures) => {
        const payload = cardSigningPayload(wire);
        assert.equal(cardSigningPayload(reverseKeys(wire)), payload);
        assert.equal(cardSigningPayload({ ...wire, signatures }), payload);
        assert.equal(cardSigningPayload(reverseKeys({ signatures, ...wire })), payload);
      }),
      { numRuns: 200 },
    );
  });
});
