/**
 * The MCP autonomy levels and their parser, kept apart from the tools so the CLI can check
 * `--autonomy` without loading the MCP SDK or the outbound client.
 */

/**
 * Whether acting entries may be called over MCP, the operator's ceiling: `read_only` (the
 * default) refuses them; `confirm` asks the person in the host before each call (MCP
 * elicitation) and refuses when the host cannot ask; `acting` lets them through (the host sees
 * `a2a_send` annotated destructive and should ask its user).
 *
 * @example
 * ```ts
 * const autonomy: McpAutonomy = parseAutonomy(process.env.AIRLOCK_MCP_AUTONOMY);
 * ```
 */
export type McpAutonomy = 'read_only' | 'confirm' | 'acting';

/**
 * The autonomy values, in order of what they allow.
 *
 * @example
 * ```ts
 * MCP_AUTONOMIES.includes('acting'); // true
 * ```
 */
export const MCP_AUTONOMIES: readonly McpAutonomy[] = ['read_only', 'confirm', 'acting'];

/**
 * The environment variable that sets the autonomy when no option does.
 *
 * @example
 * ```ts
 * process.env[AUTONOMY_ENV] = 'acting';
 * ```
 */
export const AUTONOMY_ENV = 'AIRLOCK_MCP_AUTONOMY';

/**
 * Reads an autonomy value: unset or empty means `read_only`; anything other than the three
 * values is an error (a typo must not silently grant, or silently deny, what was meant).
 *
 * @example
 * ```ts
 * parseAutonomy(undefined); // 'read_only'
 * parseAutonomy('acting');  // 'acting'
 * parseAutonomy('yes');     // throws
 * ```
 * @throws Error naming the accepted values
 */
export function parseAutonomy(value: string | undefined, source = AUTONOMY_ENV): McpAutonomy {
  if (value === undefined || value.trim() === '') return 'read_only';
  const trimmed = value.trim();
  if (trimmed === 'read_only' || trimmed === 'confirm' || trimmed === 'acting') return trimmed;
  throw new Error(`${source} must be read_only, confirm or acting`);
}
