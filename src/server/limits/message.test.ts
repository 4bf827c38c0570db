import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { A2AError } from '../../protocol/errors.js';
import type { Message, Part } from '../../protocol/model.js';
import { MessageLimitError, checkMessageLimits } from './message.js';

const LIMITS = { maxParts: 3, maxInputChars: 10 };

function message(parts: Part[]): Message {
  return { messageId: 'm-1', role: 'user', parts };
}

const text = (value: string): Part => ({ kind: 'text', text: value });

describe('checkMessageLimits', () => {
  it('accepts a message at both limits', () => {
    assert.equal(checkMessageLimits(message([text('abc'), text('def'), text('ghij')]), LIMITS), undefined);
  });

  it('refuses one part too many with INVALID_PARAMS naming both numbers', () => {
    const error = checkMessageLimits(message([text('a'), text('b'), text('c'), text('d')]), LIMITS);
    assert.ok(error instanceof A2AError);
    assert.ok(error instanceof MessageLimitError);
    assert.equal(error.code, 'INVALID_PARAMS');
    assert.equal(error.rpcCode, -32602);
    assert.equal(error.reason, 'too_many_parts');
    assert.equal(error.message, 'Message has 4 parts; at most 3 are accepted');
  });

  it('refuses text one character over the limit, summed over the parts', () => {
    const error = checkMessageLimits(message([text('abcde'), text('abcdef')]), LIMITS);
    assert.ok(error instanceof MessageLimitError);
    assert.equal(error.code, 'INVALID_PARAMS');
    assert.equal(error.reason, 'input_too_long');
    assert.match(error.message, /at most 10 /);
    assert.ok(!error.message.includes('abc'), 'the error must not echo message content');
  });

  it('counts string length, so a character outside the BMP counts as two', () => {
    assert.equal(checkMessageLimits(message([text('😀'.repeat(5))]), LIMITS), undefined);
    assert.equal(checkMessageLimits(message([text('😀'.repeat(5) + 'x')]), LIMITS)?.reason, 'input_too_long');
  });

  it('counts only text parts toward the character limit', () => {
    const parts: Part[] = [
      { kind: 'data', data: { big: 'x'.repeat(100) } },
      { kind: 'raw', raw: 'eA=='.repeat(100) },
      { kind: 'url', url: `https://example.com/${'x'.repeat(100)}` },
    ];
    assert.equal(checkMessageLimits(message(parts), LIMITS), undefined);
  });

  it('checks the part count before the text', () => {
    const many = Array.from({ length: 4 }, () => text('x'.repeat(20)));
    assert.equal(checkMessageLimits(message(many), LIMITS)?.reason, 'too_many_parts');
  });
});
