/**
 * The one error root: what `AirlockError` gives every subclass, that every error class of the
 * public API goes through it, and that no source file starts a second root.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as api from '../index.js';
import { AirlockError, errorCode, isAirlockError } from './index.js';

class SampleError extends AirlockError {
  readonly code = 'sample_failed';
}

/** A subclass of a subclass: the name must still be the concrete class's. */
class NarrowSampleError extends SampleError {}

/** A code chosen per instance, as `OutboundError` or `A2AError` do. */
class CodedSampleError extends AirlockError {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

describe('AirlockError', () => {
  it('is an Error whose name is the concrete class and whose code is stable', () => {
    const error = new SampleError('it went wrong');
    assert.ok(error instanceof Error);
    assert.ok(error instanceof AirlockError);
    assert.equal(error.name, 'SampleError');
    assert.equal(error.code, 'sample_failed');
    assert.equal(error.message, 'it went wrong');
    assert.match(String(error.stack), /^SampleError: it went wrong/);
    assert.equal(new NarrowSampleError('narrower').name, 'NarrowSampleError');
    assert.equal(new NarrowSampleError('narrower').code, 'sample_failed');
    assert.equal(new CodedSampleError('per_instance', 'x').code, 'per_instance');
  });

  it('keeps the cause it was given, and has none otherwise', () => {
    const cause = new Error('the socket closed');
    assert.equal(new SampleError('could not write', { cause }).cause, cause);
    assert.equal(new SampleError('could not write', { cause: 'a string' }).cause, 'a string');
    assert.equal(new SampleError('could not write').cause, undefined);
    assert.equal(Object.hasOwn(new SampleError('could not write'), 'cause'), false);
  });

  it('isAirlockError and errorCode tell Airlock errors from foreign ones', () => {
    const ours = new SampleError('ours');
    assert.equal(isAirlockError(ours), true);
    assert.equal(errorCode(ours), 'sample_failed');
    assert.equal(errorCode(new CodedSampleError('per_instance', 'x')), 'per_instance');
    // A foreign error with a `code` (a Node system error, a jose error) is not ours.
    const system = Object.assign(new Error('disk full'), { code: 'ENOSPC' });
    const foreign: unknown[] = [
      system,
      new TypeError('x is not a function'),
      new RangeError('out of range'),
      { name: 'SampleError', code: 'sample_failed', message: 'a look-alike object' },
      'sample_failed',
      undefined,
      null,
      42,
    ];
    for (const value of foreign) {
      assert.equal(isAirlockError(value), false, String(value));
      assert.equal(errorCode(value), undefined, String(value));
    }
  });
});

/**
 * One instance of each error class the public API exports whose constructor needs more than a
 * message (a code first, or other fields). A class missing here is built with a message alone.
 */
const SAMPLES: Readonly<Record<string, () => Error>> = {
  A2AError: () => new api.A2AError('TASK_NOT_FOUND'),
  AuditUnsafeEventError: () => new api.AuditUnsafeEventError('detail.token', 'looks like a secret'),
  AuditWriteError: () => new api.AuditWriteError('write', 'closed', 'the sink is closed'),
  CapacityError: () => new api.CapacityError(5),
  CardSignatureError: () => new api.CardSignatureError('card_unsigned', 'the card has no signatures'),
  CardTrustError: () => new api.CardTrustError('card_invalid', 'weather', 'not a card'),
  ConfigError: () => new api.ConfigError('server.port', 'must be a number'),
  OpenAiTurnError: () => new api.OpenAiTurnError('connect_failed', 'could not connect'),
  OutboundError: () => new api.OutboundError('insecure_url', 'http is not allowed'),
  RegistryError: () => new api.RegistryError('weather', 'url', 'must be https'),
  SigningKeyError: () => new api.SigningKeyError('key_unreadable', 'cannot read the key'),
  StoreSchemaError: () => new api.StoreSchemaError('schema_too_new', 'the schema is newer'),
  TaskStoreInputError: () => new api.TaskStoreInputError('owner_conflict', 'another owner'),
};

/** Every exported error class (a function whose prototype is an Error) of the public API, but the root. */
function exportedErrorClasses(): [string, abstract new (...args: never[]) => Error][] {
  const classes: [string, abstract new (...args: never[]) => Error][] = [];
  for (const [name, value] of Object.entries(api) as [string, unknown][]) {
    // The root itself is abstract and has no code of its own.
    if (value === AirlockError) continue;
    if (typeof value === 'function' && (value as { prototype?: unknown }).prototype instanceof Error) {
      classes.push([name, value as abstract new (...args: never[]) => Error]);
    }
  }
  return classes;
}

describe('the public API', () => {
  it('exports the error root', () => {
    assert.equal(api.AirlockError, AirlockError);
    assert.equal(api.isAirlockError, isAirlockError);
    assert.equal(api.errorCode, errorCode);
  });

  it('exports only error classes that extend AirlockError and carry a string code', () => {
    const classes = exportedErrorClasses();
    assert.ok(classes.length > 10, `only ${classes.length} error classes found: is the export walk broken?`);
    for (const [name, ErrorClass] of classes) {
      assert.ok(ErrorClass.prototype instanceof AirlockError, `${name} does not extend AirlockError`);
      const sample = SAMPLES[name];
      let instance: Error;
      try {
        instance = sample !== undefined ? sample() : new (ErrorClass as unknown as new (message: string) => Error)('x');
      } catch (error) {
        assert.fail(`${name}: add a sample instance to SAMPLES (its constructor threw: ${String(error)})`);
      }
      if (!isAirlockError(instance)) assert.fail(`${name}: an instance is not an AirlockError`);
      assert.equal(typeof instance.code, 'string', `${name}.code`);
      assert.ok(instance.code.length > 0, `${name}.code is empty`);
      assert.equal(errorCode(instance), instance.code, name);
      assert.equal(instance.name, name, `${name}.name`);
    }
    for (const name of Object.keys(SAMPLES)) {
      assert.ok(
        classes.some(([exported]) => exported === name),
        `${name} is in SAMPLES but not exported`,
      );
    }
  });
});

const SRC = fileURLToPath(new URL('..', import.meta.url));
const ROOT_FILE = join('errors', 'base.ts');
/** A class declared straight on a built-in error: a second root beside AirlockError. */
const BUILTIN_ROOT =
  /\bclass\s+[A-Za-z_$][\w$]*\s+extends\s+(?:Error|TypeError|RangeError|SyntaxError|EvalError|ReferenceError|URIError|AggregateError)\b/g;

/** Every non-test TypeScript source file under src/, relative to src/. */
function sourceFiles(dir: string = SRC): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) files.push(relative(SRC, path));
  }
  return files;
}

describe('the source tree', () => {
  it('declares no error class outside the AirlockError root', () => {
    // Test files may fake a foreign library's error; shipped code throws through the root only.
    const files = sourceFiles();
    assert.ok(files.includes(ROOT_FILE), `the walk did not find src/${ROOT_FILE}`);
    const offenders: string[] = [];
    for (const file of files) {
      if (file === ROOT_FILE) continue;
      const text = readFileSync(join(SRC, file), 'utf8');
      for (const match of text.matchAll(BUILTIN_ROOT)) {
        const line = text.slice(0, match.index).split('\n').length;
        offenders.push(`src/${file.split(sep).join('/')}:${line}: ${match[0]}`);
      }
    }
    assert.deepEqual(offenders, [], `extend AirlockError (src/errors/base.ts) instead:\n${offenders.join('\n')}`);
  });
});
