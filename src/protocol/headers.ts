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

/**
 * The extensions header of v1.0 (`A2A-Extensions`) and its v0.3 spelling (`X-A2A-Extensions`),
 * lower case as node:http presents them.
 *
 * @example
 * ```ts
 * const requested = parseExtensions(EXTENSIONS_HEADERS.map((name) => req.headers[name]));
 * ```
 */
export const EXTENSIONS_HEADERS = ['a2a-extensions', 'x-a2a-extensions'] as const;

/** Most extension URIs a request may name, and the longest URI read. */
const MAX_EXTENSIONS = 32;
const MAX_EXTENSION_URI = 512;

/**
 * The extension URIs a request asks for (§3.2.6, §14.2.2): the comma-separated values of either
 * header (both are read; repeated headers are joined), trimmed, without empty items or
 * duplicates. Items longer than 512 characters or past the 32nd are dropped: a URI no card
 * declares is ignored anyway.
 *
 * @example
 * ```ts
 * parseExtensions(['https://a.example/ext/v1, https://b.example/x', undefined]);
 * // ['https://a.example/ext/v1', 'https://b.example/x']
 * ```
 */
export function parseExtensions(values: readonly (string | readonly string[] | undefined)[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    if (value === undefined) continue;
    for (const line of typeof value === 'string' ? [value] : value) {
      for (const item of line.split(',')) {
        const uri = item.trim();
        if (uri === '' || uri.length > MAX_EXTENSION_URI || out.includes(uri)) continue;
        if (out.length === MAX_EXTENSIONS) return out;
        out.push(uri);
      }
    }
  }
  return out;
}

/**
 * An extension a card declares (`capabilities.extensions[]`).
 *
 * @example
 * ```ts
 * const declared: DeclaredExtension = { uri: 'https://a.example/ext/v1', required: true };
 * ```
 */
export interface DeclaredExtension {
  uri: string;
  required: boolean;
}

/**
 * Which requested extensions are activated (those the card declares; the server echoes them in
 * `A2A-Extensions`), or, when the card declares a required extension the request did not ask
 * for, the URI missing (answered -32008 ExtensionSupportRequiredError). An undeclared request is
 * ignored (§4.6.3).
 *
 * @example
 * ```ts
 * activateExtensions(['https://a.example/ext/v1'], [{ uri: 'https://a.example/ext/v1', required: true }]);
 * // { activated: ['https://a.example/ext/v1'] }
 * activateExtensions([], [{ uri: 'https://a.example/ext/v1', required: true }]);
 * // { missing: 'https://a.example/ext/v1' }
 * ```
 */
export function activateExtensions(
  requested: readonly string[],
  declared: readonly DeclaredExtension[],
): { activated: string[] } | { missing: string } {
  for (const extension of declared) {
    if (extension.required && !requested.includes(extension.uri)) return { missing: extension.uri };
  }
  return { activated: requested.filter((uri) => declared.some((extension) => extension.uri === uri)) };
}
