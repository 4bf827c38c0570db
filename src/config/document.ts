/**
 * The first step of loading a configuration: the file read (capped), its YAML parsed into a
 * mapping, tool tokens judged as written, `${VAR}` interpolated. What comes out is plain data,
 * ready for the schema check (./schema-check.ts), which may run in another thread.
 *
 * @example
 * ```ts
 * const document = readConfigDocument(readConfigText('airlock.yaml'), process.env, 'airlock.yaml');
 * ```
 */
import { rawTokenProblem } from '../tools/config.js';
import { ConfigError } from './errors.js';
import { interpolateEnv } from './interpolate.js';
import { parseYamlDocument, readSourceFile, SourceFileError, YamlSyntaxError } from './yaml.js';

const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/**
 * A configuration file's text, at most 4 MiB.
 *
 * @example
 * ```ts
 * const text = readConfigText('examples/demo.yaml');
 * ```
 * @throws ConfigError when the file cannot be read or is too large
 */
export function readConfigText(path: string): string {
  try {
    return readSourceFile(path, MAX_CONFIG_BYTES, '4 MiB');
  } catch (error) {
    if (error instanceof SourceFileError) throw new ConfigError('', `config: ${error.message}`);
    throw error;
  }
}

/**
 * Configuration YAML as an interpolated mapping: a syntax error names the line, a tool token
 * that is not `${AIRLOCK_SECRET_…}` is refused before any variable is read, and `server` and
 * `store` are present (a store without `type` is the memory store).
 *
 * @example
 * ```ts
 * readConfigDocument('agents: []\nclients: []\n', process.env); // { agents: [], clients: [], server: {}, store: { type: 'memory' } }
 * ```
 * @throws ConfigError naming the key or the line
 */
export function readConfigDocument(
  text: string,
  env: NodeJS.ProcessEnv = process.env,
  source = 'inline',
): Record<string, unknown> {
  let document: unknown;
  try {
    document = parseYamlDocument(text);
  } catch (error) {
    if (error instanceof YamlSyntaxError)
      throw new ConfigError('', `config: ${source} line ${error.line}: ${error.reason}`);
    throw error;
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new ConfigError('', `config: ${source}: expected a mapping at the top level`);
  }
  // A tool server's token must name an AIRLOCK_SECRET_ variable: judged before interpolation.
  const tokenProblem = rawTokenProblem(document as Record<string, unknown>);
  if (tokenProblem !== undefined) throw new ConfigError(tokenProblem.key, tokenProblem.problem);
  const interpolated = interpolateEnv(document, env) as Record<string, unknown>;
  interpolated.server ??= {};
  interpolated.store ??= {};
  // `type` may be left out: memory. (Defaults are not applied through a union.)
  const storeSection = interpolated.store as Record<string, unknown> | null;
  if (storeSection !== null && typeof storeSection === 'object' && storeSection.type === undefined) {
    storeSection.type = 'memory';
  }
  return interpolated;
}
