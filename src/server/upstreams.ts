/**
 * The upstream agents `a2a` backends relay to: the outbound registry named by `upstreams` in
 * the config, reached through the guarded outbound client (card trust and pins, address checks,
 * byte caps), shared by every `a2a` backend of the gateway.
 *
 * @example
 * ```ts
 * const upstreams = await createUpstreams({ registry: 'registry.yaml', pins: '.airlock/pins.json' }, { logger });
 * const backends = await prepareBackends(config, { logger, upstream: upstreams.backendFor });
 * // … on shutdown
 * await upstreams.close();
 * ```
 */
import { resolve } from 'node:path';
import type { AgentBackend, BackendContext } from '../agents/backend.js';
import { createUpstreamBackend } from '../agents/upstream/index.js';
import { loadRegistryFileOffThread } from '../client/registry/off-thread.js';
import { createUpstreamConnector } from '../client/upstream.js';
import type { UpstreamAuditHook } from '../client/upstream-audit.js';
import type { UpstreamBackendConfig } from '../config/schema.js';
import type { Logger } from './log.js';

export interface Upstreams {
  /** Makes the `a2a` backend of one agent; a name the registry lacks is a BackendConfigError. */
  readonly backendFor: (config: UpstreamBackendConfig, context: BackendContext) => AgentBackend;
  close(): Promise<void>;
}

/**
 * Loads the upstream registry (its schema check in a worker thread; a RegistryError names the
 * bad key) and returns the factory of `a2a` backends over it.
 *
 * @example
 * ```ts
 * await createUpstreams({ registry: 'missing.yaml', pins: '.airlock/pins.json' }, { logger }); // rejects with RegistryError
 * ```
 */
export async function createUpstreams(
  setup: { registry: string; pins: string },
  options: {
    logger: Logger;
    env?: NodeJS.ProcessEnv;
    instanceId?: string;
    /** Where the rows of upstream calls go (the gateway's `recordAudit`, once it exists). */
    audit?: UpstreamAuditHook;
  },
): Promise<Upstreams> {
  const { logger } = options;
  // Resolved first, as the connector resolves it: messages name the absolute path.
  const registry = await loadRegistryFileOffThread(resolve(setup.registry), options.env ?? process.env);
  const connector = createUpstreamConnector({
    registryPath: setup.registry,
    registry,
    pinsPath: setup.pins,
    ...(options.env !== undefined && { env: options.env }),
    ...(options.instanceId !== undefined && { instanceId: options.instanceId }),
    ...(options.audit !== undefined && { audit: options.audit }),
    log: (event, fields) => {
      // Pin drift and relay failures need a person's attention; the rest is routine.
      const record = { event, ...fields };
      if (event.startsWith('card_pin_') || event.startsWith('a2a.upstream.')) logger.warn(record);
      else logger.info(record);
    },
  });
  return {
    backendFor: (config, context) => createUpstreamBackend(config, context, connector),
    close: () => connector.close(),
  };
}
