/**
 * Which dialect a request speaks: the `A2A-Version` header (digest §1) and the JSON-RPC method
 * name (the two method-name sets do not overlap, so the name alone identifies the dialect).
 *
 * @example
 * ```ts
 * const version = parseA2AVersion(req.headers['a2a-version']); // '0.3' when absent
 * const dialect = dialectForMethod(call.method);               // v10, v03 or undefined
 * ```
 */
import { A2AError } from './errors.js';
import type { Dialect, DialectVersion } from './dialect.js';
import { v03 } from './v03/index.js';
import { v10 } from './v10/index.js';

/**
 * The versions Airlock speaks, newest first.
 *
 * @example
 * ```ts
 * SUPPORTED_VERSIONS.join(', '); // '1.0, 0.3'
 * ```
 */
export const SUPPORTED_VERSIONS: readonly DialectVersion[] = ['1.0', '0.3'];

/** `Major.Minor` only: patch numbers are never sent (§3.2.6). No leading zeros, no signs. */
const VERSION_PATTERN = /^(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})$/;

/**
 * The dialect version a caller asked for with `A2A-Version`.
 *
 * - missing, empty or whitespace → `'0.3'` ("Agents MUST interpret empty value as 0.3", §3.6.2);
 * - `'1.0'` / `'0.3'` (surrounding whitespace ignored) → that version;
 * - anything else, including other `Major.Minor` values, patch versions and lists →
 *   `A2AError('VERSION_NOT_SUPPORTED')` (-32009) naming the supported versions.
 *
 * @example
 * ```ts
 * parseA2AVersion(undefined); // '0.3'
 * parseA2AVersion(' 1.0 ');   // '1.0'
 * parseA2AVersion('2.0');     // throws VERSION_NOT_SUPPORTED
 * ```
 */
export function parseA2AVersion(header: string | undefined): DialectVersion {
  const value = header?.trim() ?? '';
  if (value === '') return '0.3';
  if (VERSION_PATTERN.test(value)) {
    if (value === '1.0') return '1.0';
    if (value === '0.3') return '0.3';
  }
  throw new A2AError('VERSION_NOT_SUPPORTED', versionMessage(value));
}

/**
 * The error message. The caller's value is echoed only when it has the version shape (short,
 * digits and one dot), so a hostile header cannot inject text into responses or logs.
 */
function versionMessage(value: string): string {
  const supported = SUPPORTED_VERSIONS.join(', ');
  return VERSION_PATTERN.test(value)
    ? `A2A version ${value} is not supported; supported versions: ${supported}`
    : `The A2A-Version header must be one of: ${supported}`;
}

/**
 * The dialect that owns a JSON-RPC method name, or undefined for an unknown method.
 * Unknown methods are best answered in the v0.3 dialect (as a2a-js does): callers that send
 * no version are v0.3 callers.
 *
 * @example
 * ```ts
 * dialectForMethod('SendMessage')?.version;  // '1.0'
 * dialectForMethod('message/send')?.version; // '0.3'
 * dialectForMethod('nope');                  // undefined
 * ```
 */
export function dialectForMethod(method: string): Dialect | undefined {
  if (v10.hasMethod(method)) return v10;
  if (v03.hasMethod(method)) return v03;
  return undefined;
}

/**
 * The dialect of a version, e.g. to answer an error before the method is known.
 *
 * @example
 * ```ts
 * dialectForVersion(parseA2AVersion(header)).encodeError(error);
 * ```
 */
export function dialectForVersion(version: DialectVersion): Dialect {
  return version === '1.0' ? v10 : v03;
}

/**
 * The `A2A-Version` a request asked for: the header when it was sent (even empty, which means
 * 0.3), else the `A2A-Version` query parameter (§3.6), else undefined. Only a URL with a query
 * is parsed, so a plain request costs one `indexOf`.
 *
 * @example
 * ```ts
 * requestedVersion(undefined, '/a2a/echo?A2A-Version=1.0'); // '1.0'
 * requestedVersion('', '/a2a/echo?A2A-Version=1.0');        // '' (the header wins: 0.3)
 * ```
 */
export function requestedVersion(header: string | undefined, url: string | undefined): string | undefined {
  if (header !== undefined || url === undefined) return header;
  const query = url.indexOf('?');
  if (query === -1) return undefined;
  return new URLSearchParams(url.slice(query + 1)).get('A2A-Version') ?? undefined;
}
