/**
 * `${VAR}` substitution inside string values of an already-parsed document (never in keys,
 * never before parsing, so a variable cannot inject YAML structure).
 *
 * @example
 * ```ts
 * interpolateEnv({ token: '${TOKEN}' }, { TOKEN: 'abc' }); // { token: 'abc' }
 * ```
 */
import { ConfigError } from './errors.js';

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(VARIABLE, (_match, name: string) => {
      const replacement = env[name];
      if (replacement === undefined) throw new ConfigError(path, `environment variable ${name} is not set`);
      return replacement;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = interpolateEnv(item, env, path.length > 0 ? `${path}.${key}` : key);
    }
    return out;
  }
  return value;
}
