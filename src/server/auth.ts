/**
 * Who is calling: a thin re-export of `./auth/` (client tokens, API keys, JWTs, principals), so
 * existing imports of `./auth.js` keep working.
 *
 * @example
 * ```ts
 * import { ClientAuthenticator } from './auth.js';
 * const auth = new ClientAuthenticator(config.clients);
 * const outcome = auth.authenticate(req.headers.authorization, 'echo', isLoopback, agent.anonymousLoopback);
 * ```
 */
export * from './auth/index.js';
