/**
 * `createClient`: the outbound client over given collaborators (registry, transport, card
 * resolver). `wiring.ts` builds the real ones from deployment settings.
 *
 * @example
 * ```ts
 * const client = createClient({ registry, transport, cards, ledger: new MemoryOutboundLedger() });
 * ```
 */
import type { AuditHook, OutboundLedger } from './bookkeeping.js';
import { OutboundCaller, type GetTaskRequest, type SendRequest } from './call.js';
import type { CardResolver, ClientLog, GuardedClient } from './contracts.js';
import { withHopHeader } from './outbound-transport.js';
import type { Registry, RegistryEntry } from './registry.js';
import type { CallResult } from './result.js';

/**
 * One registry entry as a caller may see it: the operator's words only. Nothing from the
 * remote's card (its name, description or skill text) is listed, so a card cannot talk to the
 * model through the tool list.
 *
 * @example
 * ```ts
 * const agent: AgentListing = { name: 'travel', description: 'Books trains.', effect: 'acting', skills: [] };
 * ```
 */
export interface AgentListing {
  name: string;
  description: string;
  effect: RegistryEntry['effect'];
  skills: string[];
}

/**
 * What {@link createClient} needs. `now` and `sleep` are for tests.
 *
 * @example
 * ```ts
 * const options: ClientOptions = { registry, transport, cards, audit: (event) => sink.write(event) };
 * ```
 */
export interface ClientOptions {
  registry: Registry;
  transport: GuardedClient;
  cards: CardResolver;
  audit?: AuditHook;
  ledger?: OutboundLedger;
  log?: ClientLog;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The outbound client's operations.
 *
 * @example
 * ```ts
 * const { send, getTask, listAgents } = createClient(options);
 * ```
 */
export interface OutboundClient {
  send(request: SendRequest): Promise<CallResult>;
  getTask(request: GetTaskRequest): Promise<CallResult>;
  listAgents(): AgentListing[];
}

/**
 * Builds the outbound client.
 *
 * @example
 * ```ts
 * const client = createClient({ registry, transport, cards, ledger: new MemoryOutboundLedger() });
 * const result = await client.getTask({ agent: 'travel', taskId: 't-1' });
 * ```
 */
export function createClient(options: ClientOptions): OutboundClient {
  // Whatever transport it is given, every request of the client carries the hop header.
  const caller = new OutboundCaller({ ...options, transport: withHopHeader(options.transport) });
  return {
    send: (request) => caller.send(request),
    getTask: (request) => caller.getTask(request),
    listAgents: () =>
      options.registry.entries().map((entry) => ({
        name: entry.name,
        description: entry.description,
        effect: entry.effect,
        skills: [...entry.skills],
      })),
  };
}
