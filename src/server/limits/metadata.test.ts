import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject, Message } from '../../protocol/model.js';
import { checkMetadataLimits, MetadataLimitError } from './metadata.js';

const LIMITS = { maxMetadataBytes: 256, maxMetadataKeys: 16, maxMetadataDepth: 3 };

function message(extra: Partial<Message> = {}): Message {
  return { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'x' }], ...extra };
}

describe('checkMetadataLimits', () => {
  it('counts the JSON size exactly for ASCII metadata', () => {
    const metadata: JsonObject = { a: 'hello', b: [1, 22, -3], c: { d: true, e: null, f: 1.5 } };
    const size = JSON.stringify(metadata).length;
    const limits = { ...LIMITS, maxMetadataBytes: size };
    assert.equal(checkMetadataLimits(message({ metadata }), limits), undefined);
    const over = checkMetadataLimits(message({ metadata }), { ...limits, maxMetadataBytes: size - 1 });
    assert.ok(over instanceof MetadataLimitError);
    assert.equal(over.reason, 'metadata_too_large');
    assert.equal(over.code, 'INVALID_PARAMS');
    assert.match(over.message, /limits\.maxMetadataBytes = \d+/);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const metadata = { k: 'é'.repeat(100) }; // 200 bytes of value
    assert.equal(checkMetadataLimits(message({ metadata }), { ...LIMITS, maxMetadataBytes: 210 }), undefined);
    assert.equal(
      checkMetadataLimits(message({ metadata }), { ...LIMITS, maxMetadataBytes: 150 })?.reason,
      'metadata_too_large',
    );
  });

  it('adds part metadata, extensions, referenceTaskIds, filenames and media types together', () => {
    const half = 'x'.repeat(100);
    const parts: Message['parts'] = [
      { kind: 'text', text: 'a', metadata: { v: half } },
      { kind: 'text', text: 'b', metadata: { v: half } },
    ];
    assert.equal(checkMetadataLimits(message({ parts }), LIMITS), undefined);
    assert.equal(checkMetadataLimits(message({ parts, extensions: [half] }), LIMITS)?.reason, 'metadata_too_large');
    assert.equal(
      checkMetadataLimits(message({ parts, referenceTaskIds: [half] }), LIMITS)?.reason,
      'metadata_too_large',
    );
    const named: Message['parts'] = [
      { kind: 'text', text: 'a', filename: 'f'.repeat(200), mediaType: 'text/plain'.repeat(10) },
    ];
    assert.equal(checkMetadataLimits(message({ parts: named }), LIMITS)?.reason, 'metadata_too_large');
  });

  it('refuses too many keys and items, and too deep a value', () => {
    const many: JsonObject = {};
    for (let i = 0; i < 17; i++) many[String(i)] = 0;
    assert.equal(checkMetadataLimits(message({ metadata: many }), LIMITS)?.reason, 'metadata_too_many_keys');
    const items = { list: Array.from({ length: 16 }, () => 0) };
    assert.equal(checkMetadataLimits(message({ metadata: items }), LIMITS)?.reason, 'metadata_too_many_keys');
    assert.equal(checkMetadataLimits(message({ metadata: { a: { b: { c: 1 } } } }), LIMITS), undefined);
    const deep = checkMetadataLimits(message({ metadata: { a: { b: { c: {} } } } }), LIMITS);
    assert.equal(deep?.reason, 'metadata_too_deep');
    assert.match(deep?.message ?? '', /limits\.maxMetadataDepth/);
  });

  it('stops at the cap: a huge value is not walked to its end', () => {
    const huge = { list: Array.from({ length: 1_000_000 }, (_, i) => i) };
    const started = performance.now();
    assert.ok(checkMetadataLimits(message({ metadata: huge }), LIMITS) instanceof MetadataLimitError);
    assert.ok(performance.now() - started < 50);
  });

  it('passes a message without any extras', () => {
    assert.equal(
      checkMetadataLimits(message(), { maxMetadataBytes: 0, maxMetadataKeys: 0, maxMetadataDepth: 1 }),
      undefined,
    );
  });
});
