import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { printableForLog, StderrCapture } from './stderr.js';

describe('printableForLog', () => {
  it('removes control characters and bidi overrides, keeps tab, newline and other text', () => {
    assert.equal(printableForLog('a\tb\nc\r\u0000\u001b[0m\u007f\u0085\u202eé€😀'), 'a\tb\nc[0mé€😀');
  });
});

describe('StderrCapture', () => {
  it('keeps the head up to the cap across chunks and counts everything', () => {
    const capture = new StderrCapture(5);
    capture.write(Buffer.from('abc'));
    capture.write(Buffer.from('defgh'));
    capture.write(Buffer.from('ij'));
    assert.equal(capture.bytes, 10);
    assert.deepEqual(capture.summary(), { bytes: 10, text: 'abcde', truncated: true });
  });

  it('is not truncated when everything fits', () => {
    const capture = new StderrCapture(8192);
    capture.write(Buffer.from('oops\n'));
    assert.deepEqual(capture.summary(), { bytes: 5, text: 'oops\n', truncated: false });
  });
});
