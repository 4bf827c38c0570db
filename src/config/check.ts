/**
 * Schema checking with one problem reported: of everything a typebox validator finds wrong,
 * the deepest error (a union's mismatch says less than the field inside it), with an unknown
 * key named as such. The config loader and the outbound registry both report through this,
 * each in its own wording and error class.
 *
 * @example
 * ```ts
 * const problem = firstSchemaProblem(validator, value);
 * if (problem !== undefined) throw new ConfigError(pointerToKey(problem.pointer), problem.problem);
 * ```
 */

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
 * validator's own message at the parent).
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
  options: { namesMissingKey?: boolean } = {},
): SchemaProblem | undefined {
  const errors = [...validator.Errors(value)];
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
  if (options.namesMissingKey === true && keyword === 'required' && missing !== undefined && missing.length > 0) {
    return { pointer: `${error.instancePath}/${missing[0]}`, problem: 'is required', keyword };
  }
  return { pointer: error.instancePath, problem: error.message, keyword };
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
