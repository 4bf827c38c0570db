/**
 * Reading operator YAML files the one way Airlock reads them: a size-capped file read, then a
 * YAML parse that refuses duplicate keys and caps aliases (an alias bomb expands a small file
 * into a huge document). Used by the config loader (`load.ts`) and the outbound registry
 * (`src/client/registry.ts`); each turns these errors into its own one-line error class.
 *
 * @example
 * ```ts
 * const text = readSourceFile('airlock.yaml', 4 * 1024 * 1024, '4 MiB');
 * const document = parseYamlDocument(text); // throws YamlSyntaxError
 * ```
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { AirlockError } from '../errors/index.js';

/** Aliases a document may use: plenty for anchors in real files, too few for a bomb. */
const MAX_ALIAS_COUNT = 100;

/**
 * A file that could not be read or is too large. The message is `PATH: reason`, for the caller
 * to prefix (`config: …`, `registry: …`).
 *
 * @example
 * ```ts
 * try { readSourceFile(path, limit, '1 MiB'); } catch (e) { if (e instanceof SourceFileError) fail(e.message); }
 * ```
 */
export class SourceFileError extends AirlockError {
  readonly code = 'source_file_unreadable';

  constructor(path: string, reason: string) {
    super(`${path}: ${reason}`);
  }
}

/**
 * Text that is not YAML (or has a key twice, or too many aliases): `reason` is the parser's
 * first message line, `line` the 1-based line it points at.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof YamlSyntaxError) fail(`line ${e.line}: ${e.reason}`); }
 * ```
 */
export class YamlSyntaxError extends AirlockError {
  readonly code = 'yaml_invalid';
  readonly reason: string;
  readonly line: number;

  constructor(reason: string, line: number, options?: ErrorOptions) {
    super(reason, options);
    this.reason = reason;
    this.line = line;
  }
}

/**
 * A UTF-8 file's text, refused (as {@link SourceFileError}) when missing, unreadable or longer
 * than `maxChars` characters (`limitLabel` says the limit in the message, e.g. `1 MiB`).
 *
 * @example
 * ```ts
 * readSourceFile('registry.yaml', 1024 * 1024, '1 MiB'); // 'agents: …'
 * ```
 */
export function readSourceFile(path: string, maxChars: number, limitLabel: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : 'cannot be read';
    throw new SourceFileError(path, reason);
  }
  if (text.length > maxChars) throw new SourceFileError(path, `larger than ${limitLabel}`);
  return text;
}

/**
 * Parses YAML text: duplicate keys are an error, aliases are capped. Throws
 * {@link YamlSyntaxError}; any other error is the parser's own and propagates.
 *
 * @example
 * ```ts
 * parseYamlDocument('a: 1\na: 2\n'); // throws YamlSyntaxError (duplicate key)
 * ```
 */
export function parseYamlDocument(text: string): unknown {
  try {
    return parseYaml(text, { uniqueKeys: true, maxAliasCount: MAX_ALIAS_COUNT, prettyErrors: false });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const reason = error.message.split('\n')[0] ?? 'not valid YAML';
      throw new YamlSyntaxError(reason, lineOf(text, error.pos[0]), { cause: error });
    }
    throw error;
  }
}

/** 1-based line number of a character offset. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}
