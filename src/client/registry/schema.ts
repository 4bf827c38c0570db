/**
 * The registry file's schema (snake_case, as operators write it) and its first-problem report,
 * through the config loader's schema-checking machinery (`src/config/check.ts`).
 *
 * @example
 * ```ts
 * const raw = checkRegistryDocument(Value.Default(RegistrySchema, document));
 * raw.agents[0]?.card_url;
 * ```
 */
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { firstSchemaProblem, pointerSegments } from '../../config/check.js';
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
    auth: Type.Optional(
      Type.Object({ bearer_env: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
    ),
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
 * Checks a registry document (defaults already applied) against the schema; throws the first problem.
 *
 * @example
 * ```ts
 * const raw = checkRegistryDocument(Value.Default(RegistrySchema, document));
 * ```
 * @throws RegistryError naming the entry (`agents[1] "travel"`) and key
 */
export function checkRegistryDocument(value: unknown): RawRegistry {
  if (!validator.Check(value)) throw firstSchemaError(value);
  return value;
}

/** The first schema problem, with the entry named by index and (when it has one) name. */
function firstSchemaError(value: unknown): RegistryError {
  const found = firstSchemaProblem(validator, value, { namesMissingKey: true });
  if (found === undefined) return new RegistryError('', '', 'invalid registry');
  const path = found.pointer;
  let problem = found.problem;
  // A union of literals reports "must be equal to constant"; say which values are meant.
  if (/\/effect$/.test(path) && found.keyword !== 'required') problem = 'must be read_only or acting';
  if (/\/card_keys\/coverage$/.test(path)) problem = 'must be trust-fields or interfaces';
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
