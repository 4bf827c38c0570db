/**
 * Webhook validation: what a push config may say, checked when it is set and again before every
 * delivery. Pure, no I/O: a refused URL never causes a DNS query or a connection. The resolved
 * address is judged later, at connect, by the guarded outbound client (`src/net/`).
 *
 * Refused: anything but https (plain http only to a loopback host, and only when the operator
 * allows it for tests); `user:password@`; IP literals of metadata, link-local, reserved and
 * private classes unless allowlisted (`push.allowPrivate`); a loopback host unless allowlisted;
 * URLs, tokens and credentials over their caps; CR, LF or any control character in a value
 * that becomes a header.
 *
 * @example
 * ```ts
 * checkPushConfig({ url: 'https://hooks.example/a2a', token: 't-1' }, settings); // passes
 * checkPushConfig({ url: 'https://169.254.169.254/' }, settings);              // throws INVALID_PARAMS (url)
 * ```
 */
import { isAllowed, isLoopbackHost } from '../net/address.js';
import { OutboundError } from '../net/errors.js';
import { checkOutboundUrl, type OutboundTarget } from '../net/url-policy.js';
import { A2AError } from '../protocol/errors.js';
import type { PushConfigInput } from '../protocol/model.js';
import type { PushSettings } from './config.js';

/** Visible ASCII and space: what may travel in a header value (no CR, LF, NUL or DEL). */
const HEADER_VALUE = /^[\x20-\x7e]+$/;
/** An HTTP auth scheme is a token (RFC 9110 §11.1). */
const AUTH_SCHEME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

/** The part of the settings validation reads. */
export type PushUrlPolicy = Pick<
  PushSettings,
  'allowPrivate' | 'allowHttpLoopback' | 'maxUrlLength' | 'maxTokenLength'
>;

function refused(field: string, problem: string): A2AError {
  return new A2AError('INVALID_PARAMS', `Invalid params: ${field} ${problem}`, { field });
}

/**
 * Judges a webhook URL; returns the parsed target or throws INVALID_PARAMS naming `field`.
 * The message names the origin at most, never the path, query or a credential.
 *
 * @example
 * ```ts
 * checkWebhookUrl('https://hooks.example/a2a?k=v', policy, 'url').origin; // 'https://hooks.example'
 * ```
 */
export function checkWebhookUrl(raw: string, policy: PushUrlPolicy, field: string): OutboundTarget {
  if (raw.length > policy.maxUrlLength) throw refused(field, `must be at most ${policy.maxUrlLength} characters`);
  let target: OutboundTarget;
  try {
    target = checkOutboundUrl(raw, {
      privateNetwork: policy.allowPrivate.length > 0,
      privateAllow: policy.allowPrivate,
      proxyConfigured: false,
    });
  } catch (error) {
    if (error instanceof OutboundError) throw refused(field, `is refused: ${error.message}`);
    throw error;
  }
  if (target.url.protocol === 'http:' && !policy.allowHttpLoopback) {
    throw refused(field, 'must use https');
  }
  // The net policy lets loopback through when the host is written as loopback (a local agent);
  // a webhook is the caller's choice, not the operator's, so loopback must be allowlisted too.
  if (isLoopbackHost(target.host) && !isAllowed(target.host, target.literal ?? '', policy.allowPrivate)) {
    throw refused(field, `is refused: ${target.origin} is a loopback address and not in push.allowPrivate`);
  }
  return target;
}

function checkHeaderValue(value: string, field: string, max: number): void {
  if (value.length > max) throw refused(field, `must be at most ${max} characters`);
  if (!HEADER_VALUE.test(value)) throw refused(field, 'must be printable ASCII (no control characters)');
}

/**
 * Validates a whole push config (URL, token, authentication). Throws INVALID_PARAMS; the
 * field is `url`, `token`, `authentication.scheme` or `authentication.credentials`.
 *
 * @example
 * ```ts
 * checkPushConfig({ url: 'https://h.example/', token: 'a\r\nX-Evil: 1' }, policy); // throws: token
 * ```
 */
export function checkPushConfig(config: PushConfigInput, policy: PushUrlPolicy): OutboundTarget {
  const target = checkWebhookUrl(config.url, policy, 'url');
  if (config.token !== undefined) checkHeaderValue(config.token, 'token', policy.maxTokenLength);
  const auth = config.authentication;
  if (auth !== undefined) {
    if (!AUTH_SCHEME.test(auth.scheme)) throw refused('authentication.scheme', 'must be an HTTP auth scheme name');
    if (auth.credentials !== undefined) {
      checkHeaderValue(auth.credentials, 'authentication.credentials', policy.maxTokenLength);
    }
  }
  return target;
}
