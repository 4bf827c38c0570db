/**
 * The `a2a` backend's config schema: an existing A2A agent, named by its outbound registry
 * entry. Owned here, next to the backend that reads it; `src/config/schema.ts` composes it into
 * the whole config schema.
 *
 * @example
 * ```yaml
 * backend: { type: a2a, agent: travel }
 * ```
 */
import Type, { type Static } from 'typebox';

/**
 * An existing A2A agent, by its name in the outbound registry (`upstreams.registry`).
 *
 * @example
 * ```ts
 * Value.Check(UpstreamBackendSchema, { type: 'a2a', agent: 'travel' }); // true
 * ```
 */
export const UpstreamBackendSchema = Type.Object(
  {
    type: Type.Literal('a2a'),
    agent: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' }),
  },
  { additionalProperties: false },
);

/**
 * An `a2a` backend's config as validated.
 *
 * @example
 * ```ts
 * const config: UpstreamBackendConfig = { type: 'a2a', agent: 'travel' };
 * ```
 */
export type UpstreamBackendConfig = Static<typeof UpstreamBackendSchema>;
