/**
 * URL policy for outbound requests: pure, no I/O. Runs before anything touches the network, so
 * a refused URL never causes a DNS query or a connection.
 *
 * - only `https:`, except plain `http:` to a loopback host (localhost, 127.x.x.x, [::1]);
 * - no `user:password@` in the URL (it would travel in clear text in logs and Referer-like places);
 * - an IP-literal host is judged here, with the spelling it was written in (Node never looks an
 *   IP literal up, so no resolver hook would ever see it);
 * - with an egress proxy, an IPv6 literal that would go through the proxy is refused.
 *
 * @example
 * ```ts
 * const target = checkOutboundUrl('https://agent.example/a2a?x=1', {
 *   privateNetwork: false, privateAllow: [], proxyConfigured: false,
 * });
 * target.origin; // 'https://agent.example'
 * target.path;   // '/a2a?x=1'
 * ```
 */
import { isIP } from 'node:net';
import { checkDestination, chooseRoute, isLoopbackHost } from './address.js';
import { OutboundError } from './errors.js';

/** Longest URL accepted; longer ones are refused rather than parsed. */
export const MAX_URL_LENGTH = 8192;

/** The policy context a URL is judged in. */
export interface UrlPolicy {
  privateNetwork: boolean;
  privateAllow: readonly string[];
  proxyConfigured: boolean;
}

/** A URL that passed {@link checkOutboundUrl}. */
export interface OutboundTarget {
  /** The parsed URL, fragment removed. */
  url: URL;
  /** `scheme://host[:port]`: what undici dials and what error messages name. */
  origin: string;
  /** Path and query, as sent on the request line. */
  path: string;
  /** The host as policy sees it: the URL's host name, or an IP literal as it was written. */
  host: string;
  /** The normalised address when the host is an IP literal. */
  literal: string | undefined;
}

/**
 * Parses and judges an outbound URL, or throws an {@link OutboundError} (`insecure_url`,
 * `url_has_credentials` or `address_blocked`).
 *
 * @example
 * ```ts
 * checkOutboundUrl('http://agent.example/', policy);          // throws insecure_url
 * checkOutboundUrl('https://u:p@agent.example/', policy);     // throws url_has_credentials
 * checkOutboundUrl('https://0xa9fea9fe/', policy);            // throws address_blocked (169.254.169.254)
 * checkOutboundUrl('http://127.0.0.1:8080/a2a', policy).host; // '127.0.0.1'
 * ```
 */
export function checkOutboundUrl(raw: string, policy: UrlPolicy): OutboundTarget {
  if (typeof raw !== 'string' || raw.length === 0) throw new OutboundError('insecure_url', 'the URL is empty');
  if (raw.length > MAX_URL_LENGTH) {
    throw new OutboundError('insecure_url', `the URL is longer than ${MAX_URL_LENGTH} characters`);
  }
  const facts = readOutboundUrl(raw);
  if (facts === undefined) throw new OutboundError('insecure_url', 'the URL is not a valid absolute URL');
  const { url, host, literal } = facts;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new OutboundError(
      'insecure_url',
      `${url.protocol.replace(/[^a-z0-9+.-]/gi, '')} URLs are not allowed; use https`,
    );
  }
  // url.origin never includes the credentials, so it is safe to name.
  const origin = url.origin;
  if (facts.hasCredentials) {
    throw new OutboundError('url_has_credentials', `the URL for ${origin} contains user:password@; remove it`);
  }
  url.hash = '';
  const spelled = host === url.hostname ? '' : ` (written as ${printable(host)})`;

  if (url.protocol === 'http:' && !isLoopbackHost(host)) {
    throw new OutboundError(
      'insecure_url',
      `plain http is allowed only to loopback (localhost, 127.x.x.x, [::1]); use https for ${origin}${spelled}`,
    );
  }
  if (literal !== undefined) {
    const verdict = checkDestination({ host, address: literal, ...policy });
    if (!verdict.ok) throw new OutboundError('address_blocked', `${origin}${spelled} refused: ${verdict.reason}`);
    const route = chooseRoute({ address: literal, ...policy });
    if (route === 'proxy' && isIP(literal) === 6) {
      throw new OutboundError(
        'address_blocked',
        `${origin} is an IPv6 literal, which is not sent through the egress proxy; name the host instead`,
      );
    }
  }
  return { url, origin, path: `${url.pathname}${url.search}`, host, literal };
}

/**
 * What an outbound URL says, before any policy judges it: the parse (fragment kept), whether it
 * carries `user:password@`, and its host as policy must see it. Shared by
 * {@link checkOutboundUrl} and the registry's load-time check, so both read a URL alike.
 *
 * @example
 * ```ts
 * readOutboundUrl('http://0x7f.1/')?.host;        // '0x7f.1' (as written, not 127.0.0.1)
 * readOutboundUrl('not a url');                   // undefined
 * readOutboundUrl('https://u:p@a.example/')?.hasCredentials; // true
 * ```
 */
export interface OutboundUrlFacts {
  /** As parsed, fragment kept. */
  url: URL;
  hasCredentials: boolean;
  /** The URL's host name, or an IP literal as it was written (see {@link OutboundTarget.host}). */
  host: string;
  /** The normalised address when the host is an IP literal. */
  literal: string | undefined;
}

/**
 * Reads an absolute URL into {@link OutboundUrlFacts}, or undefined when it does not parse.
 *
 * @example
 * ```ts
 * const facts = readOutboundUrl('https://agent.example/a2a#top');
 * facts?.url.hash; // '#top'
 * ```
 */
export function readOutboundUrl(raw: string): OutboundUrlFacts | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const literal = literalOf(url.hostname);
  const written = rawHostOf(raw);
  // The WHATWG parser turns 0x7f.1 into 127.0.0.1; policy must see what was written, so that an
  // odd spelling never counts as the operator's own "127.0.0.1".
  const host =
    literal !== undefined && written !== undefined && written.toLowerCase() !== url.hostname ? written : url.hostname;
  return { url, hasCredentials: url.username !== '' || url.password !== '', host, literal };
}

/** The normalised address of an IP-literal host name, or undefined for a name. */
function literalOf(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/**
 * The host exactly as written between `//` and the path (userinfo and port removed), or
 * undefined when the text does not have that shape (then the normalised host is used, which can
 * only make the loopback exemption stricter).
 */
function rawHostOf(raw: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\\]*)/i.exec(raw);
  if (match === null) return undefined;
  let authority = match[1] as string;
  const at = authority.lastIndexOf('@');
  if (at !== -1) authority = authority.slice(at + 1);
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    return end === -1 ? undefined : authority.slice(0, end + 1);
  }
  const colon = authority.indexOf(':');
  return colon === -1 ? authority : authority.slice(0, colon);
}

function printable(text: string): string {
  const cleaned = text.replace(/[^\x20-\x7e]/g, '?');
  return cleaned.length > 64 ? `${cleaned.slice(0, 64)}…` : cleaned;
}
