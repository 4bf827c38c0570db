import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { A2AError } from '../protocol/errors.js';
import { DEFAULT_PUSH_SETTINGS } from './config.js';
import { checkPushConfig, checkWebhookUrl } from './validate.js';

const strict = DEFAULT_PUSH_SETTINGS;
const loopbackTests = { ...DEFAULT_PUSH_SETTINGS, allowPrivate: ['127.0.0.1'], allowHttpLoopback: true };

function refusedField(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof A2AError, String(error));
    assert.equal(error.code, 'INVALID_PARAMS');
    return error.field;
  }
  assert.fail('expected a refusal');
}

describe('webhook URL validation', () => {
  it('accepts a public https URL and names only its origin', () => {
    assert.equal(checkWebhookUrl('https://hooks.example/a2a?k=v', strict, 'url').origin, 'https://hooks.example');
    assert.equal(checkWebhookUrl('https://93.184.216.34/x', strict, 'url').host, '93.184.216.34');
  });

  it('refuses every forbidden address class written as a literal', () => {
    for (const url of [
      'https://169.254.169.254/latest/meta-data', // metadata
      'https://[fd00:ec2::254]/', // AWS IPv6 metadata
      'https://169.254.1.1/', // link-local
      'https://[fe80::1]/',
      'https://10.0.0.1/', // private
      'https://172.16.0.1/',
      'https://192.168.1.1/',
      'https://[fc00::1]/',
      'https://100.64.0.1/', // shared / reserved
      'https://0.0.0.0/',
      'https://127.0.0.1/', // loopback, not allowlisted
      'https://[::1]/',
      'https://localhost/',
      'https://2130706433/', // 127.0.0.1 as one number
      'https://0x7f.1/', // 127.0.0.1 in hex
      'https://[::ffff:127.0.0.1]/', // IPv4-mapped loopback
      'https://[::ffff:a9fe:a9fe]/', // IPv4-mapped metadata
    ]) {
      assert.equal(
        refusedField(() => checkWebhookUrl(url, strict, 'url')),
        'url',
        url,
      );
    }
  });

  it('refuses non-https schemes, plain http unless allowed for loopback, and credentials', () => {
    for (const url of ['http://hooks.example/', 'ftp://hooks.example/', 'file:///etc/passwd', 'http://127.0.0.1:9/']) {
      assert.equal(
        refusedField(() => checkWebhookUrl(url, strict, 'url')),
        'url',
        url,
      );
    }
    assert.equal(
      refusedField(() => checkWebhookUrl('http://hooks.example/', loopbackTests, 'url')),
      'url',
    );
    assert.equal(
      refusedField(() => checkWebhookUrl('https://user:pw@hooks.example/', strict, 'url')),
      'url',
    );
    const message = (() => {
      try {
        checkWebhookUrl('https://user:hunter2@hooks.example/', strict, 'url');
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    assert.ok(!message.includes('hunter2'));
  });

  it('allows loopback (and http to it) only when allowlisted and allowed', () => {
    assert.equal(checkWebhookUrl('http://127.0.0.1:8080/hook', loopbackTests, 'url').host, '127.0.0.1');
    assert.equal(
      refusedField(() => checkWebhookUrl('http://[::1]:8080/hook', loopbackTests, 'url')),
      'url',
    );
    assert.equal(
      refusedField(() =>
        checkWebhookUrl('http://127.0.0.1:8080/hook', { ...loopbackTests, allowHttpLoopback: false }, 'url'),
      ),
      'url',
    );
  });

  it('allows a private address only inside push.allowPrivate, and metadata never', () => {
    const corp = { ...strict, allowPrivate: ['10.20.0.0/16', '169.254.0.0/16'] };
    assert.equal(checkWebhookUrl('https://10.20.1.2/hook', corp, 'url').host, '10.20.1.2');
    assert.equal(
      refusedField(() => checkWebhookUrl('https://10.30.1.2/hook', corp, 'url')),
      'url',
    );
    assert.equal(
      refusedField(() => checkWebhookUrl('https://169.254.169.254/', corp, 'url')),
      'url',
    );
    assert.equal(
      refusedField(() => checkWebhookUrl('https://169.254.1.1/', corp, 'url')),
      'url',
    );
  });

  it('caps the URL length', () => {
    const long = `https://hooks.example/${'a'.repeat(strict.maxUrlLength)}`;
    assert.equal(
      refusedField(() => checkWebhookUrl(long, strict, 'url')),
      'url',
    );
  });
});

describe('push config validation', () => {
  const url = 'https://hooks.example/a2a';

  it('refuses CR, LF and control characters in header values, and over-long ones', () => {
    assert.equal(
      refusedField(() => checkPushConfig({ url, token: 'a\r\nX-Evil: 1' }, strict)),
      'token',
    );
    assert.equal(
      refusedField(() => checkPushConfig({ url, token: 'a\u0000' }, strict)),
      'token',
    );
    assert.equal(
      refusedField(() => checkPushConfig({ url, token: 'é' }, strict)),
      'token',
    );
    assert.equal(
      refusedField(() => checkPushConfig({ url, token: 't'.repeat(strict.maxTokenLength + 1) }, strict)),
      'token',
    );
    assert.equal(
      refusedField(() => checkPushConfig({ url, authentication: { scheme: 'Bearer', credentials: 'x\ny' } }, strict)),
      'authentication.credentials',
    );
    assert.equal(
      refusedField(() => checkPushConfig({ url, authentication: { scheme: 'Bearer x' } }, strict)),
      'authentication.scheme',
    );
  });

  it('accepts a token and an authentication header', () => {
    checkPushConfig(
      { url, token: 'opaque-token', authentication: { scheme: 'Bearer', credentials: 'abc.def' } },
      strict,
    );
  });
});
