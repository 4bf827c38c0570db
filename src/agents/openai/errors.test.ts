/**
 * Failure reasons: built in our words, with the server's own message redacted, on one line and
 * short; network errors named by code only.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cleanServerMessage,
  firstTokenTimeoutError,
  formatBytes,
  httpStatusError,
  MAX_SERVER_MESSAGE_CHARS,
  networkError,
  OpenAiTurnError,
  redirectError,
  serverError,
  tooLargeError,
  totalTimeoutError,
} from './errors.js';

const KEY = 'sk-live-0123456789abcdefghij';

describe('httpStatusError', () => {
  it('names the status, and the server message when the body has one', () => {
    const error = httpStatusError(404, '{"error":"model \\"llama9\\" not found"}', []);
    assert.ok(error instanceof OpenAiTurnError);
    assert.equal(error.code, 'http_status');
    assert.equal(error.status, 404);
    assert.equal(error.message, 'the model endpoint answered HTTP 404: model "llama9" not found');
  });

  it('leaves out a body that is not an error JSON', () => {
    assert.equal(httpStatusError(502, '<html>Bad gateway</html>', []).message, 'the model endpoint answered HTTP 502');
    assert.equal(httpStatusError(500, '{"detail":"x"}', []).message, 'the model endpoint answered HTTP 500');
    assert.equal(
      httpStatusError(500, '{"error":{"message":"  "}}', []).message,
      'the model endpoint answered HTTP 500',
    );
  });

  it('redacts the API key in every form the server may echo it', () => {
    const base64 = Buffer.from(KEY).toString('base64');
    const body = JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY} (${base64})` } });
    const error = httpStatusError(401, body, [KEY]);
    assert.ok(!error.message.includes(KEY));
    assert.ok(!error.message.includes(base64));
    assert.match(
      error.message,
      /^the model endpoint answered HTTP 401: Incorrect API key provided: \[secret redacted\]/,
    );
  });
});

describe('cleanServerMessage', () => {
  it('puts the message on one line and cuts it short', () => {
    assert.equal(cleanServerMessage('line one\r\nline\ttwo\u0000\u2028end', []), 'line one line two end');
    const long = cleanServerMessage('x'.repeat(1000), []);
    assert.equal(long.length, MAX_SERVER_MESSAGE_CHARS);
    assert.ok(long.endsWith('…'));
  });

  it('redacts before cutting, so a key across the limit leaves no head behind', () => {
    const message = `${'y'.repeat(MAX_SERVER_MESSAGE_CHARS - 10)} ${KEY}`;
    const clean = cleanServerMessage(message, [KEY]);
    assert.ok(!clean.includes(KEY.slice(0, 8)));
  });
});

describe('the other reasons', () => {
  it('read as the issue asks', () => {
    assert.equal(firstTokenTimeoutError(60_000).message, 'the model endpoint sent no token within 60 s');
    assert.equal(firstTokenTimeoutError(250).message, 'the model endpoint sent no token within 250 ms');
    assert.equal(totalTimeoutError(300_000).message, 'the model endpoint did not finish within 300 s');
    assert.equal(tooLargeError(4 * 1024 * 1024).message, 'the model endpoint sent more than 4 MiB (maxResponseBytes)');
    assert.equal(formatBytes(2048), '2 KiB');
    assert.equal(formatBytes(1500), '1500 bytes');
    assert.match(redirectError(302).message, /HTTP 302 \(a redirect, never followed/);
    assert.equal(serverError(undefined, []).message, 'the model endpoint reported an error');
    assert.equal(
      serverError(`bad ${KEY}`, [KEY]).message,
      'the model endpoint reported an error: bad [secret redacted]',
    );
  });
});

describe('networkError', () => {
  const withCode = (code: string): Error => Object.assign(new Error(`connect ${code} 10.1.2.3:443`), { code });

  it('names connect failures by what they mean, never by the address', () => {
    const refused = networkError(withCode('ECONNREFUSED'), false, 5000);
    assert.equal(refused.code, 'connect_failed');
    assert.equal(refused.message, 'could not connect to the model endpoint (connection refused)');
    assert.equal(
      networkError(withCode('UND_ERR_CONNECT_TIMEOUT'), false, 5000).message,
      'could not connect to the model endpoint (no connection within 5 s)',
    );
    assert.equal(
      networkError(withCode('ENOTFOUND'), false, 5000).message,
      'could not connect to the model endpoint (host not found)',
    );
  });

  it('tells a connection lost midway from one never made', () => {
    assert.equal(networkError(withCode('ECONNRESET'), false, 5000).code, 'connect_failed');
    const lost = networkError(withCode('UND_ERR_SOCKET'), true, 5000);
    assert.equal(lost.code, 'connection_lost');
    assert.equal(lost.message, 'the connection to the model endpoint was lost (UND_ERR_SOCKET)');
  });

  it('passes its own errors through and keeps odd codes out', () => {
    const own = tooLargeError(1024);
    assert.equal(networkError(own, true, 5000), own);
    const odd = Object.assign(new Error('x'), { code: 'has spaces and\nnewlines', name: 'Weird Name' });
    assert.equal(
      networkError(odd, true, 5000).message,
      'the connection to the model endpoint was lost (unknown error)',
    );
  });
});
