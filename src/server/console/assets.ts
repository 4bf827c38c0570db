/**
 * The console's files, held as constants (no build step, no CDN, no external fonts), and the
 * headers every console response carries: a CSP that allows only this origin's own script,
 * style and requests (no inline code at all), no framing, no sniffing, no referrer, no caching.
 *
 * @example
 * ```ts
 * const asset = CONSOLE_ASSETS.get('/console/app.js');
 * res.writeHead(200, { ...CONSOLE_SECURITY_HEADERS, 'content-type': asset.contentType });
 * ```
 */
import { CONSOLE_HTML } from './page.js';
import { CONSOLE_JS } from './script.js';
import { CONSOLE_CSS } from './style.js';

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Sent with every response under /console (pages, assets and JSON alike). */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
});

export interface ConsoleAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

/** A small icon, so the browser does not go looking for /favicon.ico. */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0550ae"/>' +
  '<path d="M5 7V5a3 3 0 0 1 6 0v2h1v7H4V7zm2 0h2V5a1 1 0 0 0-2 0z" fill="#fff"/></svg>';

const html: ConsoleAsset = { contentType: 'text/html; charset=utf-8', body: Buffer.from(CONSOLE_HTML, 'utf8') };

/** Path → file. `/console` and `/console/` are the page. */
export const CONSOLE_ASSETS: ReadonlyMap<string, ConsoleAsset> = new Map([
  ['/console', html],
  ['/console/', html],
  ['/console/app.js', { contentType: 'text/javascript; charset=utf-8', body: Buffer.from(CONSOLE_JS, 'utf8') }],
  ['/console/app.css', { contentType: 'text/css; charset=utf-8', body: Buffer.from(CONSOLE_CSS, 'utf8') }],
  ['/console/favicon.svg', { contentType: 'image/svg+xml', body: Buffer.from(FAVICON_SVG, 'utf8') }],
]);
