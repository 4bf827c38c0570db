/**
 * The outbound side of a test against a hostile remote named `hostile` in a registry file the
 * test wrote into `dir`: Airlock's outbound client for it, and a gateway publishing `relay`, an
 * `a2a` backend relaying to it (client `a` with the token in `TOKEN_A`).
 *
 * @example
 * ```ts
 * const relay = await startRelayGateway(dir);
 * await relay.airlock.client.send({ agent: 'hostile', message: 'hi' });
 * await relay.close();
 * ```
 */
import { loadRegistryFile } from '../../src/client/registry.js';
import { join } from 'node:path';
import type { AgentBackend } from '../../src/agents/backend.js';
import { createUpstreamBackend } from '../../src/agents/upstream/index.js';
import { createOutboundClient, type OutboundRuntime } from '../../src/client/index.js';
import { createUpstreamConnector } from '../../src/client/upstream.js';
import { startGateway, type TestGateway } from './gateway.js';

export interface RelayGateway {
  airlock: OutboundRuntime;
  gw: TestGateway;
  close(): Promise<void>;
}

export async function startRelayGateway(dir: string): Promise<RelayGateway> {
  const airlock = createOutboundClient({
    registryPath: join(dir, 'registry.yaml'),
    env: { AIRLOCK_AUDIT_FILE: join(dir, 'audit.jsonl') },
    pinsPath: join(dir, 'pins.json'),
  });
  const connector = createUpstreamConnector({
    registryPath: join(dir, 'registry.yaml'),
    registry: loadRegistryFile(join(dir, 'registry.yaml'), {}),
    pinsPath: join(dir, 'upstream-pins.json'),
    env: {},
  });
  const backends: Record<string, AgentBackend> = {
    relay: createUpstreamBackend({ type: 'a2a', agent: 'hostile' }, { agent: 'relay', log: () => {} }, connector),
  };
  const gw = await startGateway(
    `server: { host: 127.0.0.1, port: 0, defaultAgent: relay }
agents:
  - slug: relay
    name: Relay
    description: Relays to a remote agent.
    skills: [{ id: relay, name: Relay, description: Relays, tags: [test] }]
    backend: { type: echo }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [relay] }
`,
    { backends },
  );
  return {
    airlock,
    gw,
    close: async () => {
      await gw.close();
      await connector.close();
      await airlock.close();
    },
  };
}
