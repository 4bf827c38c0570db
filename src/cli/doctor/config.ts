/**
 * The config and token checks of `airlock doctor`. The config is loaded with the real loader,
 * but never writes: a token that `airlock serve` would generate on first start (`generate:
 * true`, file missing) is stood in for by a throwaway value for this load, and reported.
 *
 * @example
 * ```ts
 * const loaded = loadConfigForDoctor('airlock.yaml', process.env);
 * const lines = [configLine('airlock.yaml', loaded.config), ...tokenLines(loaded, statSync)];
 * ```
 */
import { existsSync, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { ConfigError } from '../../config/errors.js';
import { loadConfigFile, parseConfig, type AirlockConfig, type ClientEntry } from '../../config/load.js';
import { generateToken } from '../../config/tokens.js';
import { parseYamlDocument, readSourceFile, SourceFileError } from '../../config/yaml.js';
import type { CheckLine } from './check.js';

/**
 * A config as doctor loaded it, with the token files serve would generate but that do not exist yet.
 *
 * @example
 * ```ts
 * const loaded: DoctorConfig = { config, toGenerate: [{ key: 'clients[0].token', file: '.airlock/demo-token' }] };
 * ```
 */
export interface DoctorConfig {
  config: AirlockConfig;
  toGenerate: { key: string; file: string }[];
}

/**
 * Loads a config file as `airlock serve` would, without generating any token file.
 *
 * @throws ConfigError naming the key, as the loader does
 * @example
 * ```ts
 * const { config } = loadConfigForDoctor('examples/demo.yaml', {});
 * ```
 */
export function loadConfigForDoctor(path: string, env: NodeJS.ProcessEnv): DoctorConfig {
  let text: string;
  try {
    text = readSourceFile(path, 4 * 1024 * 1024, '4 MiB');
  } catch (error) {
    if (error instanceof SourceFileError) throw new ConfigError('', `config: ${error.message}`);
    throw error;
  }
  let document: unknown;
  try {
    document = parseYamlDocument(text);
  } catch {
    return { config: loadConfigFile(path, env), toGenerate: [] }; // the loader words the syntax error
  }
  const toGenerate = standInForGeneratedTokens(document, env);
  if (toGenerate.length === 0) return { config: loadConfigFile(path, env), toGenerate };
  return { config: parseConfig(stringifyYaml(document), env, path), toGenerate };
}

/** Replaces, in the parsed document, each token serve would generate with a throwaway one. */
function standInForGeneratedTokens(document: unknown, env: NodeJS.ProcessEnv): DoctorConfig['toGenerate'] {
  const found: DoctorConfig['toGenerate'] = [];
  if (document === null || typeof document !== 'object') return found;
  const top = document as Record<string, unknown>;
  const approvals = top.approvals as Record<string, unknown> | null | undefined;
  const lists: [string, unknown][] = [
    ['clients', top.clients],
    ['approvals.people', typeof approvals === 'object' && approvals !== null ? approvals.people : undefined],
  ];
  for (const [name, list] of lists) {
    if (!Array.isArray(list)) continue;
    list.forEach((item: unknown, index) => {
      if (item === null || typeof item !== 'object') return;
      const holder = item as Record<string, unknown>;
      const source = holder.token as Record<string, unknown> | null | undefined;
      if (source === null || typeof source !== 'object' || source.generate !== true) return;
      const fromEnv = typeof source.env === 'string' ? env[source.env] : undefined;
      if (fromEnv !== undefined && fromEnv.length > 0) return;
      if (typeof source.file !== 'string' || existsSync(resolve(source.file))) return;
      found.push({ key: `${name}[${index}].token`, file: source.file });
      holder.token = generateToken();
    });
  }
  return found;
}

/**
 * The config line: what it publishes and to whom.
 *
 * @example
 * ```ts
 * configLine('airlock.yaml', config); // { status: 'ok', check: 'config', detail: 'airlock.yaml: 1 agent, 1 client' }
 * ```
 */
export function configLine(path: string, config: AirlockConfig): CheckLine {
  const agents = plural(config.agents.length, 'agent');
  const clients = plural(config.clients.length, 'client');
  const jwt = config.jwt !== undefined ? ', JWT callers' : '';
  return { status: 'ok', check: 'config', detail: `${path}: ${agents}, ${clients}${jwt}` };
}

/**
 * The token lines: a file token must be readable by its owner only (0600, as ssh insists for
 * keys); one serve would generate is reported, not made. Never the token itself.
 *
 * @example
 * ```ts
 * tokenLines(loaded, statSync); // [{ status: 'ok', check: 'tokens', detail: '1 client: 1 from a file (0600)' }]
 * ```
 */
export function tokenLines(loaded: DoctorConfig, stat: (path: string) => Stats = statSync): CheckLine[] {
  const { config } = loaded;
  const holders: { key: string; origin: ClientEntry['tokenOrigin'] }[] = [
    ...config.clients.map((client) => ({ key: `client "${client.id}"`, origin: client.tokenOrigin })),
    ...(config.approvals?.people ?? []).flatMap((person) =>
      person.tokenOrigin === undefined ? [] : [{ key: `person "${person.id}"`, origin: person.tokenOrigin }],
    ),
  ];
  const lines: CheckLine[] = [];
  const generated = new Set(loaded.toGenerate.map((entry) => entry.file));
  let files = 0;
  for (const { key, origin } of holders) {
    if (origin.kind !== 'file' || generated.has(origin.path)) continue;
    files += 1;
    let mode: number;
    try {
      mode = stat(resolve(origin.path)).mode & 0o777;
    } catch {
      lines.push({ status: 'fail', check: 'tokens', detail: `${key}: ${origin.path} cannot be read` });
      continue;
    }
    if ((mode & 0o077) !== 0) {
      lines.push({
        status: 'fail',
        check: 'tokens',
        detail: `${key}: ${origin.path} is open to others (mode 0${mode.toString(8)}): chmod 600 ${origin.path}`,
      });
    }
  }
  for (const entry of loaded.toGenerate) {
    lines.push({
      status: 'ok',
      check: 'tokens',
      detail: `${entry.key}: ${entry.file} does not exist yet; airlock serve generates it (mode 0600)`,
    });
  }
  if (holders.length === 0) {
    lines.unshift({ status: 'skip', check: 'tokens', detail: 'no client or person tokens configured' });
  } else if (!lines.some((line) => line.status === 'fail')) {
    const bySource = files > 0 ? `, ${files} from ${files === 1 ? 'a file' : 'files'} (0600)` : '';
    lines.unshift({ status: 'ok', check: 'tokens', detail: `${plural(holders.length, 'token')}${bySource}` });
  }
  return lines;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
