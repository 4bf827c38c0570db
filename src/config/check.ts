/**
 * Schema checking with one problem reported: of everything a typebox validator finds wrong,
 * the deepest error (a union's mismatch says less than the field inside it), with an unknown
 * key named as such. Given the schema too, a union is judged first by what it is: a union of
 * literals by its values (`must be one of full, normal`), a union of objects by its
 * discriminator (`type`): the branch it names, or the values it could name. The config loader
 * and the outbound registry both report through this, each in its own wording and error class.
 *
 * @example
 * ```ts
 * const problem = firstSchemaProblem(validator, value);
 * if (problem !== undefined) throw new ConfigError(pointerToKey(problem.pointer), problem.problem);
 * ```
 */
import type { TSchema } from 'typebox';
import Value from 'typebox/value';

/**
 * What {@link firstSchemaProblem} needs of a compiled validator (`Compile(schema)` fits).
 *
 * @example
 * ```ts
 * const validator: SchemaValidator = Compile(ConfigSchema);
 * ```
 */
export interface SchemaValidator {
  Errors(value: unknown): Iterable<{ instancePath: string; keyword: string; message: string; params: unknown }>;
}

/**
 * One schema problem: the JSON pointer of the offending key, what is wrong with it, and the
 * schema keyword that failed.
 *
 * @example
 * ```ts
 * const problem: SchemaProblem = { pointer: '/server/port', problem: 'must be integer', keyword: 'type' };
 * ```
 */
export interface SchemaProblem {
  pointer: string;
  problem: string;
  keyword: string;
}

/**
 * The one problem to report of `value`, or undefined when the validator names none. A key the
 * schema does not know (`additionalProperties: false`) is `is not a known setting` at that key;
 * with `namesMissingKey`, a missing required key is `is required` at that key (otherwise the
 * validator's own message at the parent). With `schema` (the one the validator was compiled
 * from), a problem inside a union is found first by {@link unionProblem}.
 *
 * @example
 * ```ts
 * firstSchemaProblem(validator, { server: { prot: 1 } });
 * // { pointer: '/server/prot', problem: 'is not a known setting', keyword: 'additionalProperties' }
 * ```
 */
export function firstSchemaProblem(
  validator: SchemaValidator,
  value: unknown,
  options: { namesMissingKey?: boolean; schema?: unknown } = {},
): SchemaProblem | undefined {
  if (options.schema !== undefined) {
    const inUnion = unionProblem(options.schema, value);
    if (inUnion !== undefined) return inUnion;
  }
  return pickProblem([...validator.Errors(value)], options.namesMissingKey === true);
}

type ValidatorError = ReturnType<SchemaValidator['Errors']> extends Iterable<infer E> ? E : never;

/** The one problem of a validator's errors: the deepest, with unknown and missing keys named. */
function pickProblem(errors: ValidatorError[], namesMissingKey: boolean): SchemaProblem | undefined {
  // Prefer the deepest error: a union's mismatch says less than the field inside it.
  errors.sort((a, b) => b.instancePath.length - a.instancePath.length);
  const error = errors[0];
  if (error === undefined) return undefined;
  const { keyword } = error;
  // `additionalProperties: false` reports the extra key itself as failing a `false` schema.
  if (keyword === 'boolean') return { pointer: error.instancePath, problem: 'is not a known setting', keyword };
  const params = error.params as { additionalProperties?: string[]; requiredProperties?: string[] };
  const extra = params.additionalProperties;
  if (extra !== undefined && extra.length > 0) {
    return { pointer: `${error.instancePath}/${extra[0]}`, problem: 'is not a known setting', keyword };
  }
  const missing = params.requiredProperties;
  if (namesMissingKey && keyword === 'required' && missing !== undefined && missing.length > 0) {
    return { pointer: `${error.instancePath}/${missing[0]}`, problem: 'is required', keyword };
  }
  return { pointer: error.instancePath, problem: error.message, keyword };
}

/**
 * The first problem inside a union that the validator's own errors would misreport, found by
 * walking `value` along `schema`: a union of literals whose value is none of them
 * (`must be one of L1, L2, L3, L4`); a union of objects told apart by one literal key (the
 * discriminator, e.g. `type`) whose value names no branch (`must be one of echo, writer, …`,
 * the list read from the schema) or names one that fails (that branch's first problem, a
 * missing key as `required for type openai`). Undefined when no union is at fault.
 *
 * @example
 * ```ts
 * unionProblem(ConfigSchema, { agents: [{ slug: 'a', backend: { type: 'openai' } }] });
 * // { pointer: '/agents/0/backend/model', problem: 'required for type openai', keyword: 'required' }
 * ```
 */
export function unionProblem(schema: unknown, value: unknown, pointer = ''): SchemaProblem | undefined {
  if (!isRecord(schema)) return undefined;
  if (Array.isArray(schema.anyOf)) return unionMemberProblem(schema.anyOf, value, pointer);
  if (isRecord(schema.properties) && isRecord(value)) {
    for (const [key, child] of Object.entries(value)) {
      const sub = schema.properties[key];
      const found = sub === undefined ? undefined : unionProblem(sub, child, `${pointer}/${escapeSegment(key)}`);
      if (found !== undefined) return found;
    }
  }
  if (isRecord(schema.items) && Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unionProblem(schema.items, item, `${pointer}/${index}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function unionMemberProblem(members: unknown[], value: unknown, pointer: string): SchemaProblem | undefined {
  const literals = members.map((member) => (isRecord(member) ? member.const : undefined));
  if (literals.every((literal) => typeof literal === 'string' || typeof literal === 'number')) {
    if (literals.includes(value as string)) return undefined;
    return { pointer, problem: `must be one of ${literals.join(', ')}`, keyword: 'anyOf' };
  }
  const tagged = discriminator(members);
  if (tagged === undefined || !isRecord(value)) return undefined;
  const names = [...tagged.branches.keys()].join(', ');
  const tagPointer = `${pointer}/${escapeSegment(tagged.key)}`;
  const tag = value[tagged.key];
  if (tag === undefined) return { pointer: tagPointer, problem: `is required: one of ${names}`, keyword: 'required' };
  const branch = typeof tag === 'string' ? tagged.branches.get(tag) : undefined;
  if (typeof tag !== 'string' || branch === undefined) {
    return { pointer: tagPointer, problem: `must be one of ${names}`, keyword: 'const' };
  }
  const nested = unionProblem(branch, value, pointer);
  if (nested !== undefined) return nested;
  const found = pickProblem([...Value.Errors(branch as TSchema, value)], true);
  if (found === undefined) return undefined;
  const problem = found.problem === 'is required' ? `required for ${tagged.key} ${tag}` : found.problem;
  return { pointer: `${pointer}${found.pointer}`, problem, keyword: found.keyword };
}

/** The key whose literal value tells a union's object branches apart, and the branch for each value. */
function discriminator(members: unknown[]): { key: string; branches: Map<string, unknown> } | undefined {
  const first = members[0];
  if (!isRecord(first) || !isRecord(first.properties)) return undefined;
  for (const key of Object.keys(first.properties)) {
    const branches = new Map<string, unknown>();
    for (const member of members) {
      const property = isRecord(member) && isRecord(member.properties) ? member.properties[key] : undefined;
      const literal = isRecord(property) ? property.const : undefined;
      if (typeof literal !== 'string' || branches.has(literal)) break;
      branches.set(literal, member);
    }
    if (branches.size === members.length) return { key, branches };
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function escapeSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The unescaped segments of a JSON pointer.
 *
 * @example
 * ```ts
 * pointerSegments('/agents/0/card_keys'); // ['agents', '0', 'card_keys']
 * ```
 */
export function pointerSegments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * A JSON pointer as a config key.
 *
 * @example
 * ```ts
 * pointerToKey('/agents/0/slug'); // 'agents[0].slug'
 * ```
 */
export function pointerToKey(pointer: string): string {
  let out = '';
  for (const key of pointerSegments(pointer)) {
    out += /^\d+$/.test(key) ? `[${key}]` : out.length > 0 ? `.${key}` : key;
  }
  return out;
}
