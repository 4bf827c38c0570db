/**
 * HTTP headers Airlock itself defines on the A2A wire.
 *
 * @example
 * ```ts
 * const chain = parseHopChain(req.headers[HOP_HEADER]); // ['gw-a-1f3c…'] or undefined (malformed)
 * ```
 */

/**
 * The gateways a request passed, oldest first (a `Via`-like chain of instance ids, comma
 * separated). Every request of an Airlock outbound client carries it: its own instance id, and
 * for a relay (an `a2a` backend) the chain its inbound request came with before it. Airlock's
 * inbound side refuses a request whose chain holds its own id (a loop) or is as long as
 * `limits.maxHops`; a peer Airlock's call is served. Lower case, as node:http presents headers.
 */
export const HOP_HEADER = 'x-airlock-hop';

/** Most instance ids a chain holds; a longer header is malformed. */
export const MAX_HOP_CHAIN = 16;

const INSTANCE_ID = /^[A-Za-z0-9_-]{8,64}$/;

/**
 * Whether `id` is a valid instance id: 8–64 characters of `[A-Za-z0-9_-]`.
 *
 * @example
 * ```ts
 * isInstanceId('gw-a-1f3c9d2e'); // true
 * ```
 */
export function isInstanceId(id: string): boolean {
  return INSTANCE_ID.test(id);
}

/**
 * The chain a hop header holds: `[]` when absent, `undefined` when malformed (not a list of at
 * most {@link MAX_HOP_CHAIN} instance ids, or sent twice).
 *
 * @example
 * ```ts
 * parseHopChain('gw-a-1f3c9d2e, gw-b-77aa01ff'); // ['gw-a-1f3c9d2e', 'gw-b-77aa01ff']
 * parseHopChain(undefined); // []
 * parseHopChain('1'); // undefined
 * ```
 */
export function parseHopChain(value: string | readonly string[] | undefined): string[] | undefined {
  if (value === undefined) return [];
  if (typeof value !== 'string') return undefined;
  const ids = value.split(',').map((id) => id.trim());
  if (ids.length > MAX_HOP_CHAIN || !ids.every(isInstanceId)) return undefined;
  return ids;
}

/**
 * The header value of a chain.
 *
 * @example
 * ```ts
 * formatHopChain(['gw-a-1f3c9d2e', 'gw-b-77aa01ff']); // 'gw-a-1f3c9d2e, gw-b-77aa01ff'
 * ```
 */
export function formatHopChain(chain: readonly string[]): string {
  return chain.join(', ');
}
