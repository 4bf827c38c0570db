import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeCardV03, encodeCardV10 } from '../../protocol/card.js';
import type { AgentCard } from '../../protocol/model.js';
import { uncoveredTrustFields } from './coverage.js';

const CARD: AgentCard = {
  name: 'Weather',
  description: 'Forecasts.',
  version: '1',
  interfaces: [{ url: 'https://w.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '0.3' }],
  capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
  securitySchemes: { key: { type: 'apiKey', location: 'header', name: 'X-Key' } },
  securityRequirements: [{ key: [] }],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'f', name: 'F', description: 'f', tags: [] }],
};

describe('uncoveredTrustFields', () => {
  it('is empty for a v1.0 card: the signing payload holds every trust field', () => {
    assert.deepEqual(uncoveredTrustFields(encodeCardV10(CARD)), []);
    // Empty values are dropped from the payload, but decode the same either way.
    assert.deepEqual(
      uncoveredTrustFields({
        ...encodeCardV10(CARD),
        skills: [{ id: 'f', name: 'F', description: 'f', tags: [], inputModes: [] }],
      }),
      [],
    );
  });

  it('names the v0.3 members the payload leaves out', () => {
    assert.deepEqual(uncoveredTrustFields(encodeCardV03(CARD)), ['securitySchemes', 'securityRequirements']);
    const urlOnly = { ...encodeCardV03(CARD), supportedInterfaces: undefined };
    assert.deepEqual(uncoveredTrustFields(JSON.parse(JSON.stringify(urlOnly))), [
      'interfaces',
      'securitySchemes',
      'securityRequirements',
      'skills',
    ]);
    const open = { ...CARD, securitySchemes: {}, securityRequirements: [] };
    assert.deepEqual(uncoveredTrustFields(encodeCardV03(open)), []);
  });

  it('catches fields Airlock reads in a form the payload reads differently', () => {
    // A scheme tagged with `type` (v0.3) and a v1.0 wrapper: Airlock reads the tag, the payload the wrapper.
    const hybrid = {
      ...encodeCardV10(CARD),
      securitySchemes: {
        key: { type: 'apiKey', in: 'query', name: 'k', apiKeySecurityScheme: { location: 'header', name: 'X-Key' } },
      },
    };
    assert.deepEqual(uncoveredTrustFields(hybrid), ['securitySchemes']);
    // snake_case spellings are read alike by the payload and by Airlock's decoder: covered.
    const snake = {
      ...encodeCardV03({ ...CARD, securitySchemes: {}, securityRequirements: [] }),
      supportedInterfaces: undefined,
      supported_interfaces: [{ url: 'https://other.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    };
    assert.deepEqual(uncoveredTrustFields(JSON.parse(JSON.stringify(snake))), []);
  });

  it('refuses a document that is not an agent card', () => {
    assert.throws(() => uncoveredTrustFields({ name: 'x' }), { code: 'card_malformed' });
  });
});
