/**
 * Config errors a person can act on: a union reported by its discriminator's branch (or the
 * values it allows), a union of literals by its values, and the non-loopback bind refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { isLoopbackBind } from './bind.js';
import { firstSchemaProblem, unionProblem } from './check.js';
import { ConfigError } from './errors.js';
import { parseConfig } from './load.js';

const agent = (backend: string): string =>
  `agents:\n  - { slug: a, name: A, description: d, skills: [{ id: s, name: s, description: d }], backend: ${backend} }\n`;
const ECHO = agent('{ type: echo }');

/** The one-line message `parseConfig` refuses `yaml` with. */
function message(yaml: string): string {
  try {
    parseConfig(yaml, {});
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('expected a ConfigError');
}

describe('config messages for unions', () => {
  it('reports the branch the backend type names, a missing key as required for that type', () => {
    assert.equal(
      message(agent('{ type: openai, baseUrl: "https://api.example/v1" }')),
      'config: agents[0].backend.model: required for type openai',
    );
    assert.equal(
      message(agent('{ type: writer, chunkDelayMs: -1 }')),
      'config: agents[0].backend.chunkDelayMs: must be >= 0',
    );
    assert.equal(message(agent('{ type: echo, model: m }')), 'config: agents[0].backend.model: is not a known setting');
  });

  it('lists the backend types (read from the schema) for an unknown or missing type', () => {
    const unknown = message(agent('{ type: openia }'));
    assert.match(unknown, /^config: agents\[0\]\.backend\.type: must be one of echo, writer, conformance, openai, /);
    for (const type of ['command', 'module', 'a2a']) assert.ok(unknown.includes(type), unknown);
    assert.match(message(agent('{ model: m }')), /^config: agents\[0\]\.backend\.type: is required: one of echo, /);
  });

  it('does the same for the store union and for unions of literal values', () => {
    assert.equal(message(`${ECHO}store: { type: pg }`), 'config: store.type: must be one of memory, sqlite, postgres');
    assert.equal(message(`${ECHO}store: { type: sqlite }`), 'config: store.path: required for type sqlite');
    assert.equal(
      message(`${ECHO}store: { type: sqlite, path: x.db, synchronous: off }`),
      'config: store.synchronous: must be one of full, normal',
    );
  });

  it('leaves unions without a discriminator, and valid ones, to the validator', () => {
    const Token = Type.Union([Type.String(), Type.Object({ env: Type.String() }, { additionalProperties: false })]);
    const schema = Type.Object({ token: Token }, { additionalProperties: false });
    assert.equal(unionProblem(schema, { token: { env: 'X', file: 'f' } }), undefined);
    const problem = firstSchemaProblem(Compile(schema), { token: { env: 'X', file: 'f' } }, { schema });
    assert.equal(problem?.pointer, '/token/file');
    const Tagged = Type.Union([
      Type.Object({ kind: Type.Literal('a') }, { additionalProperties: false }),
      Type.Object({ kind: Type.Literal('b'), n: Type.Integer() }, { additionalProperties: false }),
    ]);
    assert.equal(unionProblem(Type.Array(Tagged), [{ kind: 'a' }, { kind: 'b', n: 1 }]), undefined);
    assert.deepEqual(unionProblem(Type.Array(Tagged), [{ kind: 'a' }, { kind: 'b' }]), {
      pointer: '/1/n',
      problem: 'required for kind b',
      keyword: 'required',
    });
  });
});

describe('non-loopback bind', () => {
  it('refuses server.host outside loopback unless server.allowNonLoopback is on', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'gateway.example']) {
      const refused = message(`${ECHO}server: { host: '${host}' }`);
      assert.match(refused, /^config: server\.host: .* is not loopback, .*server\.allowNonLoopback: true$/);
      assert.ok(!refused.includes('\n'));
      const allowed = parseConfig(
        `${ECHO}server: { host: '${host}', allowNonLoopback: true, allowInsecureNetwork: true }`,
        {},
      );
      assert.equal(allowed.server.host, host);
    }
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) {
      assert.equal(parseConfig(`${ECHO}server: { host: '${host}' }`, {}).server.host, host);
    }
  });

  it('judges literals strictly: shorthand and other names are not loopback', () => {
    assert.equal(isLoopbackBind('127.1'), false);
    assert.equal(isLoopbackBind('localhost.example'), false);
    assert.equal(isLoopbackBind('LOCALHOST'), true);
  });
});
