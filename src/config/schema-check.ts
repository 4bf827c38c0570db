/**
 * The schema step of loading a configuration: defaults applied, the document checked against
 * the whole TypeBox schema, the first problem named by its key. This module (and so TypeBox, 683
 * modules) is loaded by the config check alone: in process by `parseConfig`, and in a worker
 * thread of its own when the gateway serves (./off-thread.ts), so the serving isolate never
 * holds it.
 *
 * @example
 * ```ts
 * const checked = checkConfigDocument(readConfigDocument('agents: []\nclients: []\n', process.env));
 * checked.limits.maxParts; // the default
 * ```
 */
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { firstSchemaProblem, pointerToKey } from './check.js';
import { ConfigError } from './errors.js';
import {
  AuditSchema,
  ConfigSchema,
  ContentSchema,
  LimitsSchema,
  ServerSchema,
  type AuditConfig,
  type LimitsConfig,
  type RawConfig,
} from './schema.js';

/**
 * A configuration as its schema checked it: defaults applied, and the sections every loader
 * reads always present. Plain data (it crosses threads by structured clone).
 *
 * @example
 * ```ts
 * function port(checked: CheckedConfig): number { return checked.server.port; }
 * ```
 */
export type CheckedConfig = RawConfig & {
  server: NonNullable<RawConfig['server']>;
  store: NonNullable<RawConfig['store']>;
  limits: LimitsConfig;
  content: NonNullable<RawConfig['content']>;
  audit: AuditConfig;
};

/**
 * What the schema step answers across a thread: the checked config, or the key and message of
 * the first problem (the caller rebuilds the `ConfigError`).
 *
 * @example
 * ```ts
 * const outcome: SchemaCheckOutcome = { ok: false, key: 'server.port', problem: 'must be an integer' };
 * ```
 */
export type SchemaCheckOutcome =
  | { readonly ok: true; readonly config: CheckedConfig }
  | { readonly ok: false; readonly key: string; readonly problem: string };

const validator = Compile(ConfigSchema);

/**
 * Applies the schema's defaults to an interpolated document and checks it.
 *
 * @example
 * ```ts
 * checkConfigDocument({ agents: [], clients: [], server: { port: 'x' }, store: { type: 'memory' } });
 * // throws ConfigError('server.port', …)
 * ```
 * @throws ConfigError naming the key of the first problem
 */
export function checkConfigDocument(document: Record<string, unknown>): CheckedConfig {
  const withDefaults = Value.Default(ConfigSchema, document);
  if (!validator.Check(withDefaults)) throw firstSchemaError(withDefaults);
  const raw = withDefaults;
  return {
    ...raw,
    server: raw.server ?? (Value.Default(ServerSchema, {}) as NonNullable<RawConfig['server']>),
    store: raw.store ?? { type: 'memory' },
    limits: raw.limits ?? (Value.Default(LimitsSchema, {}) as LimitsConfig),
    content: raw.content ?? (Value.Default(ContentSchema, {}) as NonNullable<RawConfig['content']>),
    audit: raw.audit ?? (Value.Default(AuditSchema, {}) as AuditConfig),
  };
}

/**
 * {@link checkConfigDocument} with its refusal as data, for the worker thread to post back.
 *
 * @example
 * ```ts
 * const outcome = schemaCheckOutcome(document);
 * if (!outcome.ok) throw new ConfigError(outcome.key, outcome.problem);
 * ```
 */
export function schemaCheckOutcome(document: Record<string, unknown>): SchemaCheckOutcome {
  try {
    return { ok: true, config: checkConfigDocument(document) };
  } catch (error) {
    if (error instanceof ConfigError) return { ok: false, key: error.key, problem: error.problem };
    throw error;
  }
}

function firstSchemaError(value: unknown): ConfigError {
  const problem = firstSchemaProblem(validator, value, { schema: ConfigSchema });
  if (problem === undefined) return new ConfigError('', 'invalid configuration');
  return new ConfigError(pointerToKey(problem.pointer), problem.problem);
}
