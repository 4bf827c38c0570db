/**
 * HTTP headers Airlock itself defines on the A2A wire.
 *
 * @example
 * ```ts
 * if (req.headers[HOP_HEADER] !== undefined) refuse(403); // a call relayed by an Airlock gateway
 * ```
 */

/**
 * Set on every request Airlock's outbound client sends; Airlock's inbound side refuses any
 * request that carries it, so an agent behind Airlock can never be reached through another
 * Airlock (no loops at the operator's model cost). Lower case, as node:http presents headers.
 */
export const HOP_HEADER = 'x-airlock-hop';
