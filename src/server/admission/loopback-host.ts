/**
 * The Host check of anonymous loopback callers (DNS rebinding): an agent with
 * `anonymousLoopback: true` admits callers without credentials because they are on this
 * machine, but a web page whose name was rebound to 127.0.0.1 reaches it from this machine
 * too, through the user's browser. The browser then sends the page's own name as `Host`, so an
 * anonymous caller is admitted only when `Host` names loopback: `localhost` (or a name under
 * `.localhost`, which browsers resolve to loopback themselves), an address in 127.0.0.0/8, or
 * `[::1]`, with any port. Callers that present credentials are judged by them, not by `Host`.
 *
 * @example
 * ```ts
 * isLoopbackHost('localhost:41241'); // true
 * isLoopbackHost('evil.example:41241'); // false
 * ```
 */

/** The host part: `name`, `127.0.0.1`, `[::1]`, then an optional `:port`. */
const LOOPBACK_HOST =
  /^(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.localhost|127(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}|\[(?:::1|0:0:0:0:0:0:0:1)\])(?::\d{1,5})?$/i;

/**
 * Whether a `Host` header value names loopback. A request without `Host` (HTTP/1.0; Node
 * refuses an HTTP/1.1 one) was not sent by a browser, and passes.
 *
 * @example
 * ```ts
 * if (!isLoopbackHost(req.headers.host)) refuse403();
 * ```
 */
export function isLoopbackHost(host: string | undefined): boolean {
  return host === undefined || (host.length <= 260 && LOOPBACK_HOST.test(host));
}
