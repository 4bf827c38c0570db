/**
 * One token request: a form POST to the entry's token endpoint through the guarded transport
 * (https or loopback http, checked addresses, no redirects, a byte cap, timeouts), and the
 * answer read strictly. The client authenticates with `client_secret_basic` or
 * `private_key_jwt` (RFC 7523 §2.2: a short-lived assertion signed with the entry's key).
 * Nothing the endpoint says is passed on but the token, its type and lifetime; an error
 * code is named only when it is one of RFC 6749's.
 *
 * @example
 * ```ts
 * const token = await requestToken(transport, oauth, { grant_type: 'client_credentials' }, options);
 * token.accessToken; // never logged
 * ```
 */
import { isOutboundError } from '../../net/errors.js';
import type { GuardedClient } from '../contracts.js';
import { errorTypeOf } from '../call-failure.js';
import { signAssertion } from './assertion.js';
import type { OAuthSettings } from './config.js';
import { OutboundAuthError } from './errors.js';

/**
 * A token response's cap: a token response is small; anything larger is refused while reading.
 *
 * @example
 * ```ts
 * DEFAULT_MAX_TOKEN_RESPONSE_BYTES; // 65536
 * ```
 */
export const DEFAULT_MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/**
 * How a token request is sent: the entry's network setting and timeouts, the cap, the clock.
 *
 * @example
 * ```ts
 * const options: TokenRequestOptions = { privateNetwork: false, timeouts, maxResponseBytes: 65536, now: Date.now };
 * ```
 */
export interface TokenRequestOptions {
  readonly privateNetwork: boolean;
  readonly timeouts: { connectMs: number; readMs: number; totalMs: number };
  readonly maxResponseBytes: number;
  readonly now: () => number;
}

/**
 * An issued token. `expiresAt` is epoch milliseconds (undefined when the endpoint gave no lifetime).
 *
 * @example
 * ```ts
 * const token: IssuedToken = { accessToken: 'eyJ…', expiresAt: Date.now() + 3_600_000 };
 * ```
 */
export interface IssuedToken {
  readonly accessToken: string;
  readonly expiresAt?: number;
}

/** RFC 6749 §5.2 and RFC 8693 §2.2.2 error codes: the only endpoint words ever repeated. */
const KNOWN_ERRORS = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
]);

/** What a token may look like to go into a header (and be redacted): printable ASCII, no spaces. */
const TOKEN_PATTERN = /^[\x21-\x7e]{8,16384}$/;

/**
 * POSTs `params` (plus the client's authentication) to the token endpoint and reads the token.
 *
 * @example
 * ```ts
 * const token = await requestToken(transport, oauth, { grant_type: 'client_credentials', scope: 'a2a' }, options);
 * ```
 * @throws OutboundAuthError (the transport's refusals keep their error types)
 */
export async function requestToken(
  transport: GuardedClient,
  oauth: OAuthSettings,
  params: Readonly<Record<string, string>>,
  options: TokenRequestOptions,
): Promise<IssuedToken> {
  const form = new URLSearchParams(params);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    'accept-encoding': 'identity',
  };
  if (oauth.clientSecret !== undefined) {
    // RFC 6749 §2.3.1: both parts form-urlencoded before base64.
    const user = encodeURIComponent(oauth.clientId);
    const pass = encodeURIComponent(oauth.clientSecret.reveal());
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  } else if (oauth.assertionKey !== undefined) {
    form.set('client_id', oauth.clientId);
    form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    form.set('client_assertion', await clientAssertion(oauth, options.now));
  }
  let response;
  try {
    response = await transport.request({
      method: 'POST',
      url: oauth.tokenEndpoint,
      headers,
      body: form.toString(),
      maxResponseBytes: options.maxResponseBytes,
      timeouts: options.timeouts,
      privateNetwork: options.privateNetwork,
    });
  } catch (error) {
    const type = errorTypeOf(error, 'network_error');
    const detail = isOutboundError(error) && error.detail !== undefined ? `: ${error.detail}` : '';
    throw new OutboundAuthError(
      'token_endpoint_unreachable',
      type,
      `the token endpoint could not be used (${type})${detail}`,
    );
  }
  const encoding = (headerOf(response.headers, 'content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    throw new OutboundAuthError(
      'token_response_invalid',
      'invalid_response',
      'the token endpoint sent a compressed response',
    );
  }
  const body = parseJson(response.body);
  if (response.status < 200 || response.status >= 300) {
    const code = typeof body?.error === 'string' && KNOWN_ERRORS.has(body.error) ? ` ${body.error}` : '';
    throw new OutboundAuthError(
      'token_endpoint_refused',
      'remote_auth_failed',
      `the token endpoint refused the request (HTTP ${response.status}${code})`,
    );
  }
  const token = body?.access_token;
  if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) {
    throw new OutboundAuthError(
      'token_response_invalid',
      'invalid_response',
      'the token endpoint did not answer with a usable access_token',
    );
  }
  const type = body?.token_type;
  if (typeof type !== 'string' || type.toLowerCase() !== 'bearer') {
    throw new OutboundAuthError(
      'token_response_invalid',
      'invalid_response',
      'the token endpoint did not issue a bearer token',
    );
  }
  const expiresIn = body?.expires_in;
  const lifetime = typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined;
  return { accessToken: token, ...(lifetime !== undefined && { expiresAt: options.now() + lifetime * 1000 }) };
}

/** RFC 7523 §3: iss = sub = client id, aud = the token endpoint, short-lived, unique. */
function clientAssertion(oauth: OAuthSettings, now: () => number): Promise<string> {
  return signAssertion(
    oauth.assertionKey!,
    { iss: oauth.clientId, sub: oauth.clientId, aud: oauth.tokenEndpoint },
    now,
  );
}

function parseJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function headerOf(headers: Record<string, string> | undefined, name: string): string | undefined {
  for (const key of Object.keys(headers ?? {})) if (key.toLowerCase() === name) return headers![key];
  return undefined;
}
