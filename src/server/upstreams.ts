/**
 * The upstream agents `a2a` backends relay to: the outbound registry named by `upstreams` in
 * the config, reached through the guarded outbound client. Placeholder until the relay lands.
 */
import type { AgentBackend, BackendContext } from '../agents/backend.js';
import type { UpstreamBackendConfig } from '../config/schema.js';
import type { Logger } from './log.js';

export interface Upstreams {
  readonly backendFor: (config: UpstreamBackendConfig, context: BackendContext) => AgentBackend;
  close(): Promise<void>;
}

export function createUpstreams(
  setup: { registry: string; pins: string },
  options: { logger: Logger; env?: NodeJS.ProcessEnv },
): Upstreams {
  void setup;
  void options;
  throw new Error('a2a upstream backends: not implemented yet');
}
