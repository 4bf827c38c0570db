import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopbackHost } from './loopback-host.js';

describe('isLoopbackHost', () => {
  it('accepts localhost (and names under .localhost), 127.0.0.0/8 and [::1], with or without a port', () => {
    for (const host of [
      'localhost',
      'LOCALHOST:41241',
      'app.localhost:3000',
      '127.0.0.1',
      '127.0.0.1:41241',
      '127.255.3.4:1',
      '[::1]',
      '[::1]:41241',
      '[0:0:0:0:0:0:0:1]:80',
      undefined,
    ]) {
      assert.equal(isLoopbackHost(host), true, String(host));
    }
  });
  it('refuses every other name or address (a rebinding page sends its own name)', () => {
    for (const host of [
      'evil.example:41241',
      'localhost.evil.example',
      'evillocalhost',
      '127.0.0.1.nip.io',
      '127.0.0.256',
      '127.1',
      '0.0.0.0:41241',
      '10.0.0.1',
      '[::2]',
      '[::ffff:7f00:1]',
      'localhost:41241:1',
      'localhost/',
      '',
    ]) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });
});
