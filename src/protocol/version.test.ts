import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { A2AError } from './errors.js';
import { V03_METHODS, v03 } from './v03/index.js';
import { V10_METHODS, v10 } from './v10/index.js';
import { SUPPORTED_VERSIONS, dialectForMethod, dialectForVersion, parseA2AVersion } from './version.js';
import { assertA2AError } from './arbitraries.test.js';

describe('parseA2AVersion', () => {
  it('missing, empty or whitespace means 0.3 (§3.6.2)', () => {
    for (const header of [undefined, '', ' ', '\t \t']) assert.equal(parseA2AVersion(header), '0.3');
  });

  it('accepts the supported Major.Minor values, trimmed', () => {
    assert.equal(parseA2AVersion('1.0'), '1.0');
    assert.equal(parseA2AVersion('0.3'), '0.3');
    assert.equal(parseA2AVersion(' 1.0 '), '1.0');
  });

  it('trims a trailing newline like any other whitespace', () => {
    assert.equal(parseA2AVersion('1.0\n'), '1.0');
  });

  for (const header of [
    '1',
    '1.0.0',
    '0.3.0',
    '1.1',
    '2.0',
    '0.2',
    'v1.0',
    '1.0,0.3',
    '1.0, 1.0',
    '01.0',
    '1.00',
    '+1.0',
    'latest',
    '1.0; q=1',
  ]) {
    it(`refuses ${JSON.stringify(header)} with VERSION_NOT_SUPPORTED naming the supported versions`, () => {
      const error = assertA2AError(() => parseA2AVersion(header), 'VERSION_NOT_SUPPORTED');
      assert.equal(error.rpcCode, -32009);
      assert.match(error.message, /1\.0, 0\.3/);
    });
  }

  it('echoes a well-formed version but never arbitrary header text', () => {
    assert.match(assertA2AError(() => parseA2AVersion('2.0'), 'VERSION_NOT_SUPPORTED').message, /2\.0/);
    const hostile = '<script>\r\nX-Injected: 1';
    assert.equal(
      assertA2AError(() => parseA2AVersion(hostile), 'VERSION_NOT_SUPPORTED').message.includes('script'),
      false,
    );
  });

  it('never throws anything but A2AError, and only returns supported versions (property)', () => {
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: undefined }), (header) => {
        try {
          assert.ok(SUPPORTED_VERSIONS.includes(parseA2AVersion(header)));
        } catch (error) {
          assert.ok(error instanceof A2AError && error.code === 'VERSION_NOT_SUPPORTED');
        }
      }),
    );
  });
});

describe('dialectForMethod', () => {
  it('the method-name sets do not overlap', () => {
    for (const method of V10_METHODS) assert.equal(V03_METHODS.includes(method), false, method);
    assert.equal(V10_METHODS.length, 11);
    assert.equal(V03_METHODS.length, 10);
  });

  it('maps every method to its dialect', () => {
    for (const method of V10_METHODS) assert.equal(dialectForMethod(method), v10, method);
    for (const method of V03_METHODS) assert.equal(dialectForMethod(method), v03, method);
  });

  it('unknown and look-alike names have no dialect', () => {
    for (const method of [
      '',
      'sendMessage',
      'Message/Send',
      'tasks/list',
      'ListTask',
      'toString',
      '__proto__',
      'hasOwnProperty',
    ]) {
      assert.equal(dialectForMethod(method), undefined, method);
    }
  });

  it('every method name decodes in its own dialect', () => {
    const messages = {
      '1.0': { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] },
      '0.3': { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'x' }] },
    };
    for (const method of [...V10_METHODS, ...V03_METHODS]) {
      const dialect = dialectForMethod(method);
      assert.ok(dialect !== undefined);
      // One params object every method takes: the push-config methods need their task and config too.
      const params = {
        id: 't-1',
        taskId: 't-1',
        message: messages[dialect.version],
        pushNotificationConfig: { url: 'https://hooks.example/a2a' },
        url: 'https://hooks.example/a2a',
        pushNotificationConfigId: 'c-1',
      };
      const request = dialect.decodeRequest(method, params);
      assert.ok(typeof request.method === 'string');
    }
  });

  it('dialectForVersion', () => {
    assert.equal(dialectForVersion('1.0'), v10);
    assert.equal(dialectForVersion('0.3'), v03);
  });
});
