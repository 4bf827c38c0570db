import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_TASK_CAPS } from '../tasks/service.js';
import { ConfigError } from './errors.js';
import { parseConfig } from './load.js';

const AGENT = `agents:
  - { slug: a, name: A, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
`;

describe('limits on what a caller or a backend makes Airlock keep', () => {
  it('are on by default: 4096 metadata bytes, 128 keys, depth 8, 100 history messages, 1 MiB of output', () => {
    for (const yaml of [AGENT, `${AGENT}limits: { maxParts: 4 }\n`]) {
      const { limits } = parseConfig(yaml, {});
      assert.equal(limits.maxMetadataBytes, 4096);
      assert.equal(limits.maxMetadataKeys, 128);
      assert.equal(limits.maxMetadataDepth, 8);
      assert.equal(limits.maxHistoryMessages, 100);
      assert.equal(limits.maxTaskOutputBytes, 1024 * 1024);
    }
    // The task service's own defaults (library use) are the same.
    assert.equal(DEFAULT_TASK_CAPS.maxHistoryMessages, 100);
    assert.equal(DEFAULT_TASK_CAPS.maxTaskOutputBytes, 1024 * 1024);
  });

  it('take values within their bounds and refuse others', () => {
    const { limits } = parseConfig(
      `${AGENT}limits: { maxMetadataBytes: 0, maxMetadataKeys: 10, maxMetadataDepth: 2, maxHistoryMessages: 2, maxTaskOutputBytes: 1024 }\n`,
      {},
    );
    assert.deepEqual(
      [
        limits.maxMetadataBytes,
        limits.maxMetadataKeys,
        limits.maxMetadataDepth,
        limits.maxHistoryMessages,
        limits.maxTaskOutputBytes,
      ],
      [0, 10, 2, 2, 1024],
    );
    for (const [key, value] of [
      ['maxMetadataBytes', -1],
      ['maxMetadataBytes', 64 * 1024 * 1024 + 1],
      ['maxMetadataDepth', 0],
      ['maxHistoryMessages', 1],
      ['maxTaskOutputBytes', 1023],
    ] as const) {
      assert.throws(
        () => parseConfig(`${AGENT}limits: { ${key}: ${value} }\n`, {}),
        (error: unknown) => error instanceof ConfigError && error.message.includes(`limits.${key}`),
        `${key}: ${value}`,
      );
    }
  });
});
