/**
 * Airlock's guarded outbound transport: address policy, URL policy and the guarded HTTP client
 * every outbound request goes through (agent cards, JWKS, JSON-RPC calls, SSE streams).
 *
 * @example
 * ```ts
 * import { createGuardedClient, parseEnvSettings, OutboundError } from './net/index.js';
 *
 * const client = createGuardedClient(parseEnvSettings(process.env));
 * try {
 *   const res = await client.request({
 *     method: 'GET', url: 'https://agent.example/.well-known/agent-card.json',
 *     maxResponseBytes: 256 * 1024, timeouts: { connectMs: 5000, readMs: 10000, totalMs: 15000 },
 *   });
 * } catch (error) {
 *   if (error instanceof OutboundError) console.error(error.code, error.message);
 * } finally {
 *   await client.close();
 * }
 * ```
 */
export { OutboundError, isOutboundError } from './errors.js';
export type { OutboundErrorCode } from './errors.js';
export {
  classifyAddress,
  checkDestination,
  chooseRoute,
  isLoopbackHost,
  isAllowed,
  parseAllowEntry,
  carriedIPv4,
} from './address.js';
export type { AddressClass, AddressVerdict, DestinationInput, AllowEntry } from './address.js';
export { checkOutboundUrl } from './url-policy.js';
export type { OutboundTarget, UrlPolicy } from './url-policy.js';
export { parseEnvSettings, parseEgressProxy, maskCredentials, loadCaFile, validateAllowList } from './settings.js';
export type { GuardedClientSettings, EgressProxy } from './settings.js';
export { createGuardedClient } from './client.js';
export type { GuardedClient, GuardedRequestOptions, GuardedResponse, GuardedStream } from './client.js';
export { capBody, readCapped, checkDeclaredLength } from './body.js';
export { systemResolve } from './connector.js';
export type { Resolver } from './connector.js';
