import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from './load.js';
import { DEFAULT_PUSH_SETTINGS, pushConfigProblem } from '../push/config.js';

const BASE = `
server: { host: 127.0.0.1, port: 0 }
agents:
  - { slug: echo, name: Echo, description: Echoes., skills: [{ id: e, name: E, description: Echoes }], backend: { type: echo } }
`;

describe('push config section', () => {
  it('is off by default, with caps', () => {
    const config = parseConfig(BASE, {});
    assert.equal(config.push.enabled, false);
    assert.equal(config.push.maxConfigsPerTask, 10);
    assert.deepEqual(config.push.allowPrivate, []);
  });

  it('reads the section with defaults for what is left out', () => {
    const config = parseConfig(`${BASE}push: { enabled: true, allowPrivate: [hooks.corp, 10.0.0.0/8] }\n`, {});
    assert.equal(config.push.enabled, true);
    assert.deepEqual(config.push.allowPrivate, ['hooks.corp', '10.0.0.0/8']);
    assert.equal(config.push.allowHttpLoopback, false);
  });

  it('refuses a malformed allowPrivate entry, an unknown key, and http loopback on a public gateway', () => {
    assert.throws(
      () => parseConfig(`${BASE}push: { enabled: true, allowPrivate: ['*.corp'] }\n`, {}),
      /push\.allowPrivate\[0\]/,
    );
    assert.throws(() => parseConfig(`${BASE}push: { enabled: true, followRedirects: true }\n`, {}), /push/);
    const open = BASE.replace(
      'server: { host: 127.0.0.1, port: 0 }',
      'server: { host: 0.0.0.0, port: 0, allowNonLoopback: true, allowInsecureNetwork: true }',
    );
    assert.throws(
      () => parseConfig(`${open}push: { enabled: true, allowHttpLoopback: true }\n`, {}),
      /push\.allowHttpLoopback/,
    );
  });

  it('accepts push on several replicas: they share PostgreSQL (serve refuses any other store then)', () => {
    assert.equal(pushConfigProblem({ ...DEFAULT_PUSH_SETTINGS, enabled: true }, false), undefined);
    const shared = `${BASE}replicas: 2\nstore: { type: postgres, url: "postgres://db/airlock" }\npush: { enabled: true }\n`;
    assert.equal(parseConfig(shared, {}).push.enabled, true);
  });
});
