/**
 * The listener's TLS settings: TLS 1.2 at least in every secure context (the first one and each
 * reload), and plain HTTP without `server.tls`.
 */
import assert from 'node:assert/strict';
import { Server as HttpsServer } from 'node:https';
import { describe, it } from 'node:test';
import { silentLogger } from '../log.js';
import { createListener, secureContextOptions, TLS_MIN_VERSION } from './index.js';

describe('createListener', () => {
  it('holds every secure context to TLS 1.2 or later', () => {
    assert.equal(TLS_MIN_VERSION, 'TLSv1.2');
    assert.equal(secureContextOptions({ cert: 'c', key: 'k' }).minVersion, 'TLSv1.2');
  });

  it('serves plain HTTP without server.tls', () => {
    const listener = createListener({}, { logger: silentLogger }, () => undefined, {});
    assert.equal(listener.scheme, 'http');
    assert.ok(!(listener.server instanceof HttpsServer));
    listener.close();
  });
});
