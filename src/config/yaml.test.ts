import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseYamlDocument, readSourceFile, SourceFileError, YamlSyntaxError } from './yaml.js';

describe('operator YAML', () => {
  it('parses a mapping', () => {
    assert.deepEqual(parseYamlDocument('a: 1\nb: [x]\n'), { a: 1, b: ['x'] });
  });

  it('refuses a duplicate key, naming the line', () => {
    const error = (() => {
      try {
        parseYamlDocument('a: 1\nb: 2\na: 3\n');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    assert.ok(error instanceof YamlSyntaxError);
    assert.equal(error.line, 3);
    assert.match(error.reason, /unique/i);
    assert.ok(!error.reason.includes('\n'));
  });

  it('refuses an alias bomb', () => {
    // Nine levels of ten aliases each would expand to 10^9 nodes.
    const lines = ['l0: &l0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level <= 9; level++) {
      lines.push(
        `l${level}: &l${level} [${Array(10)
          .fill(`*l${level - 1}`)
          .join(', ')}]`,
      );
    }
    assert.throws(() => parseYamlDocument(`${lines.join('\n')}\n`));
  });

  it('reads a file, refusing a missing or oversized one with PATH: reason', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-yaml-'));
    const path = join(dir, 'a.yaml');
    writeFileSync(path, 'a: 1\n');
    assert.equal(readSourceFile(path, 100, '100 B'), 'a: 1\n');
    assert.throws(
      () => readSourceFile(path, 2, '2 B'),
      (error: Error) => {
        assert.ok(error instanceof SourceFileError);
        assert.equal(error.message, `${path}: larger than 2 B`);
        return true;
      },
    );
    assert.throws(() => readSourceFile(join(dir, 'none.yaml'), 100, '100 B'), /none\.yaml: file not found$/);
  });
});
