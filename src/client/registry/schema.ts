/**
 * The registry file's schema (snake_case, as operators write it) and its report of every problem,
 * through the config loader's schema-checking machinery (`src/config/check.ts`).
 *
 * @example
 * ```ts
 * const { agents, problems } = readRegistryDocument(Value.Default(RegistrySchema, document));
 * agents[0]?.card_url;
 * ```
 */
import Type, { type Static, type TSchema } from 'typebox';
import Value from 'typebox/value';
import { Compile } from 'typebox/compile';
import { firstSchemaProblem, pointerSegments, type SchemaProblem } from '../../config/check.js';
import { AuthSchema } from '../auth/schema.js';
import { REGISTRY_NAME_PATTERN, RegistryError } from './error.js';

const MAX_URL_LENGTH = 2048;

const Seconds = (options: { default: number; maximum: number }) =>
  Type.Number({ exclusiveMinimum: 0, maximum: options.maximum, default: options.default });

const EntrySchema = Type.Object(
  {
    name: Type.String({ pattern: REGISTRY_NAME_PATTERN.source }),
    card_url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH }),
    rpc_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
    description: Type.String({ minLength: 1, maxLength: 2000 }),
    skills: Type.Array(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$' }), {
      maxItems: 100,
      default: [],
    }),
    effect: Type.Union([Type.Literal('read_only'), Type.Literal('acting')]),
    /** One kind: `bearer_env`, `oauth2_client_credentials` or `token_exchange` (src/client/auth/config.ts). */
    auth: Type.Optional(AuthSchema),
    private_network: Type.Boolean({ default: false }),
    card_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
    card_refresh_s: Type.Integer({ minimum: 1, maximum: 86_400, default: 300 }),
    timeouts: Type.Object(
      {
        connect: Seconds({ default: 5, maximum: 600 }),
        read: Seconds({ default: 60, maximum: 3600 }),
        total: Seconds({ default: 120, maximum: 3600 }),
      },
      { additionalProperties: false, default: {} },
    ),
    max_response_bytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024 }),
    max_reply_chars: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 20_000 }),
    poll_interval_s: Type.Number({ minimum: 0.05, maximum: 300, default: 2 }),
    max_wait_s: Type.Number({ exclusiveMinimum: 0, maximum: 86_400, default: 120 }),
    card_keys: Type.Optional(
      Type.Object(
        {
          /** A JWK Set file of public keys, relative to the registry file's directory. */
          jwks_file: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
          /** Public JWKs written in the registry. */
          keys: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: 16 })),
          /** A JWK Set URL on the card's own origin. */
          jwks_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
          coverage: Type.Union([Type.Literal('trust-fields'), Type.Literal('interfaces')], { default: 'trust-fields' }),
        },
        { additionalProperties: false },
      ),
    ),
    require_signed_card: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/**
 * The registry file's shape (snake_case, as operators write it), with its defaults.
 *
 * @example
 * ```ts
 * const withDefaults = Value.Default(RegistrySchema, document);
 * ```
 */
export const RegistrySchema = Type.Object(
  { agents: Type.Array(EntrySchema, { maxItems: 1000 }) },
  { additionalProperties: false },
);

/**
 * A registry file as validated (defaults applied), before entries are built.
 *
 * @example
 * ```ts
 * const raw: RawRegistry = { agents: [] };
 * ```
 */
export type RawRegistry = Static<typeof RegistrySchema>;

/**
 * One entry of a validated registry file.
 *
 * @example
 * ```ts
 * raw.agents.forEach((entry: RawEntry) => console.log(entry.name, entry.card_url));
 * ```
 */
export type RawEntry = RawRegistry['agents'][number];

const validator = Compile(RegistrySchema);

/**
 * A registry document read entry by entry: the entries that fit the schema (undefined in the
 * place of one that does not) and every schema problem found.
 *
 * @example
 * ```ts
 * const { agents, problems } = readRegistryDocument(Value.Default(RegistrySchema, document));
 * ```
 */
export interface RegistryDocument {
  agents: (RawEntry | undefined)[];
  problems: RegistryError[];
}

/**
 * Checks a registry document (defaults already applied) against the schema and reports every
 * problem at once: each unknown or missing key, and one problem per key whose value is wrong
 * (each item of a list on its own), in file order. Entries that fit are returned, so that
 * their own checks can run too.
 *
 * @example
 * ```ts
 * const { agents, problems } = readRegistryDocument(Value.Default(RegistrySchema, document));
 * if (problems.length > 0) throw RegistryError.all(problems);
 * ```
 */
export function readRegistryDocument(value: unknown): RegistryDocument {
  if (validator.Check(value)) return { agents: value.agents, problems: [] };
  const found = schemaProblems(RegistrySchema, value, '');
  const failing = new Set(found.map((problem) => /^\/agents\/(\d+)(\/|$)/.exec(problem.pointer)?.[1]));
  const list = (value as { agents?: unknown }).agents;
  const agents = failing.has(undefined) || !Array.isArray(list) ? [] : (list as RawEntry[]);
  return {
    agents: agents.map((entry, index) => (failing.has(String(index)) ? undefined : entry)),
    problems: found.map((problem) => asRegistryError(problem, value)),
  };
}

/**
 * What the schema step gives: the entries that fit it (undefined in the place of one that does
 * not) and every schema problem, as plain data (it crosses threads by structured clone).
 *
 * @example
 * ```ts
 * const checked: CheckedRegistry = { agents: [], problems: [{ entry: '', key: 'agents', problem: 'is required' }] };
 * ```
 */
export interface CheckedRegistry {
  readonly agents: readonly (RawEntry | undefined)[];
  readonly problems: readonly { readonly entry: string; readonly key: string; readonly problem: string }[];
}

/**
 * The schema step of loading a registry: defaults applied, every schema problem found, as plain
 * data for {@link buildRegistry} (./build.ts). Runs in process for `parseRegistry`, and in a
 * worker thread of its own when the gateway serves (./off-thread.ts).
 *
 * @example
 * ```ts
 * const checked = checkRegistryDocument({ agents: [] }); // { agents: [], problems: [] }
 * ```
 */
export function checkRegistryDocument(document: Record<string, unknown>): CheckedRegistry {
  const { agents, problems } = readRegistryDocument(Value.Default(RegistrySchema, document));
  return {
    agents,
    problems: problems.flatMap((error) => error.problems.map(({ entry, key, problem }) => ({ entry, key, problem }))),
  };
}

/**
 * Every problem of `value` against `schema`: an object's unknown and missing keys and each of
 * its keys in turn, a list's items in turn; a value that holds no further object or list (or
 * a union) is judged whole, by the config loader's one-problem report. The validator's own
 * error list is not enough: it stops at the first key or item that fails.
 */
function schemaProblems(schema: TSchema, value: unknown, pointer: string): SchemaProblem[] {
  // Through a boolean: Check is a type guard, and its false branch would narrow `value` to never.
  const valid: boolean = Value.Check(schema, value);
  if (valid) return [];
  const node = schema as { type?: unknown; properties?: Record<string, TSchema>; required?: string[]; items?: unknown };
  if (node.type === 'object' && node.properties !== undefined && isRecord(value)) {
    const properties = node.properties;
    const found: SchemaProblem[] = [];
    for (const [key, child] of Object.entries(value)) {
      const sub = properties[key];
      const at = `${pointer}/${escapeSegment(key)}`;
      if (sub === undefined) found.push({ pointer: at, problem: 'is not a known setting', keyword: 'boolean' });
      else found.push(...schemaProblems(sub, child, at));
    }
    for (const key of node.required ?? []) {
      if (!(key in value)) {
        found.push({ pointer: `${pointer}/${escapeSegment(key)}`, problem: 'is required', keyword: 'required' });
      }
    }
    if (found.length > 0) return found;
  }
  if (node.type === 'array' && isSchema(node.items) && Array.isArray(value)) {
    const items = node.items;
    const found = value.flatMap((item, index) => schemaProblems(items, item, `${pointer}/${index}`));
    if (found.length > 0) return found;
  }
  const whole = firstSchemaProblem({ Errors: (v) => Value.Errors(schema, v) }, value, {
    namesMissingKey: true,
    schema,
  });
  return [
    {
      pointer: `${pointer}${whole?.pointer ?? ''}`,
      problem: whole?.problem ?? 'is not valid',
      keyword: whole?.keyword ?? '',
    },
  ];
}

/** A schema problem as a RegistryError, with the entry named by index and (when it has one) name. */
function asRegistryError(found: SchemaProblem, value: unknown): RegistryError {
  const path = found.pointer;
  let problem = found.problem;
  // A union of literals reports "must be equal to constant"; say which values are meant.
  if (/\/effect$/.test(path) && found.keyword !== 'required') problem = 'must be read_only or acting';
  if (/\/card_keys\/coverage$/.test(path) && found.keyword !== 'required')
    problem = 'must be trust-fields or interfaces';
  const segments = pointerSegments(path);
  if (segments[0] !== 'agents' || segments[1] === undefined || !/^\d+$/.test(segments[1])) {
    return new RegistryError('', segments.join('.'), problem);
  }
  const index = Number(segments[1]);
  const agents = (value as { agents?: unknown }).agents;
  const rawName = Array.isArray(agents) ? (agents[index] as { name?: unknown } | undefined)?.name : undefined;
  const label =
    typeof rawName === 'string' && REGISTRY_NAME_PATTERN.test(rawName)
      ? `agents[${index}] "${rawName}"`
      : `agents[${index}]`;
  const key = segments
    .slice(2)
    .map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`))
    .join('')
    .replace(/^\./, '');
  return new RegistryError(label, key, problem);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isSchema(value: unknown): value is TSchema {
  return isRecord(value);
}

function escapeSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
