/**
 * The outbound client with its real collaborators, built from deployment settings: the
 * registry file, the guarded transport (`src/net`), card trust with the pin file
 * (`src/trust`), an optional audit file and a ledger. What the CLI runs and what a program
 * embedding Airlock's outbound side should use.
 *
 * - Registry: `registryPath`, else `AIRLOCK_REGISTRY`; none is an error.
 * - Transport: `createOutboundTransport(parseEnvSettings(env))`, so AIRLOCK_PRIVATE_ALLOW,
 *   AIRLOCK_EGRESS_PROXY and AIRLOCK_CA_FILE are read by the transport's own parser. Every
 *   request, card and key set fetches included, carries the hop header (set by the transport).
 * - Pins: `pinsPath`, else `AIRLOCK_PINS`, else `.airlock/pins.json` (relative to the working
 *   directory).
 * - Audit: `AIRLOCK_AUDIT_FILE` → a hash-chained JSONL file with the `a2a.client.*` rows.
 * - Ledger: `ledger`, else a file ledger at `ledgerPath` when given, else in memory (tasks a
 *   caller started can be followed up only within the same process).
 *
 * @example
 * ```ts
 * const airlock = createOutboundClient({ env: process.env });
 * try {
 *   const result = await airlock.send({ agent: 'travel', message: 'Trains to Lyon?', confirm: true });
 * } finally {
 *   await airlock.close();
 * }
 * ```
 */
import { dirname, join, resolve } from 'node:path';
import { JsonlAuditSink } from '../audit/jsonl.js';
import { parseEnvSettings, type GuardedClient as NetClient } from '../net/index.js';
import type { GuardedClientSettings } from '../net/settings.js';
import { CardTrust, PinStore } from '../trust/index.js';
import { cardResolverFrom } from './card-resolver.js';
import { MemoryOutboundLedger, type AuditHook, type OutboundLedger } from './bookkeeping.js';
import type { CardResolver } from './contracts.js';
import { FileOutboundLedger } from './file-ledger.js';
import { createClient, type OutboundClient } from './create.js';
import { createOutboundTransport } from './outbound-transport.js';
import { RegistryError, loadRegistryFile, registryPath, type Registry } from './registry.js';

/**
 * Where pins live when neither the option nor `AIRLOCK_PINS` says.
 *
 * @example
 * ```ts
 * DEFAULT_PINS_PATH; // '.airlock/pins.json'
 * ```
 */
export const DEFAULT_PINS_PATH = '.airlock/pins.json';

/**
 * The name of the CLI's task ledger, next to the pin file.
 *
 * @example
 * ```ts
 * join(dirname(pinsPath), LEDGER_FILE_NAME); // '.airlock/outbound-tasks.json'
 * ```
 */
export const LEDGER_FILE_NAME = 'outbound-tasks.json';

/**
 * One operator log line: a fixed event name and identifiers, URLs or digests; never content
 * or secrets. Receives both the client's events (`a2a.client.*`) and card trust's
 * (`card_pinned_tofu`, `card_pin_drift`, `card_pin_mismatch`, `card_signature_refused`).
 *
 * @example
 * ```ts
 * const log: OutboundLog = (event, fields) => logger.warn({ event, ...fields });
 * ```
 */
export type OutboundLog = (event: string, fields: Readonly<Record<string, string | number | boolean>>) => void;

/**
 * Settings of {@link createOutboundClient}.
 *
 * @example
 * ```ts
 * const setup: OutboundSetup = { registryPath: 'registry.yaml', env: process.env, pinsPath: '/var/lib/airlock/pins.json' };
 * ```
 */
export interface OutboundSetup {
  /** The registry file (`--registry`); `AIRLOCK_REGISTRY` otherwise. */
  registryPath?: string;
  /** Where secrets and network settings come from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Whether this client sends or reads remote tasks, and so writes `a2a.client.*` rows to
   * `AIRLOCK_AUDIT_FILE` (default true). A read-only run (listing agents, pinning cards) says
   * false: it neither opens nor locks the audit file, so it runs beside a gateway or an
   * `airlock mcp` that holds it.
   */
  audit?: boolean;
  /** The pin file; `AIRLOCK_PINS` otherwise, else `.airlock/pins.json`. */
  pinsPath?: string;
  /** Keep mirrors (task ownership) in this file instead of memory. */
  ledgerPath?: string;
  /** A ledger of your own (e.g. `ledgerFromTaskStore`); wins over `ledgerPath`. */
  ledger?: OutboundLedger;
  log?: OutboundLog;
  /** For tests: replaces DNS in the guarded transport. */
  resolve?: GuardedClientSettings['resolve'];
}

/**
 * The client and what it was built from. `close()` releases the transport's connections and
 * closes the audit file.
 *
 * @example
 * ```ts
 * const { registry, trust, pins, cards } = createOutboundClient({ env: process.env });
 * ```
 */
export interface OutboundRuntime extends OutboundClient {
  registry: Registry;
  transport: NetClient;
  trust: CardTrust;
  pins: PinStore;
  cards: CardResolver;
  ledger: OutboundLedger;
  /** The pin file in use (absolute). */
  pinsPath: string;
  /** The audit file in use (absolute), when AIRLOCK_AUDIT_FILE is set. */
  auditPath?: string;
  close(): Promise<void>;
}

/**
 * Which pin file: the option, else `AIRLOCK_PINS`, else `.airlock/pins.json`; absolute.
 *
 * @example
 * ```ts
 * pinsPathFrom(undefined, { AIRLOCK_PINS: '/var/lib/airlock/pins.json' }); // '/var/lib/airlock/pins.json'
 * ```
 */
export function pinsPathFrom(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = nonEmpty(option) ?? nonEmpty(env.AIRLOCK_PINS) ?? DEFAULT_PINS_PATH;
  return resolve(chosen);
}

/**
 * Loads the registry named by the option or `AIRLOCK_REGISTRY`.
 *
 * @example
 * ```ts
 * const registry = loadRegistry(options.registry, process.env);
 * ```
 * @throws RegistryError when neither names a file, or the file is invalid
 */
export function loadRegistry(option: string | undefined, env: NodeJS.ProcessEnv = process.env): Registry {
  const path = registryPath(option, env);
  if (path === undefined) {
    throw new RegistryError('', '', 'no registry: pass --registry FILE or set AIRLOCK_REGISTRY');
  }
  return loadRegistryFile(path, env);
}

/**
 * Builds the outbound client from the registry, the environment and the local state files.
 * Throws (one line, naming the file or variable) when the registry, a secret, a network
 * variable, the CA file or the audit file is unusable: nothing is contacted before that.
 *
 * @example
 * ```ts
 * const airlock = createOutboundClient({ registryPath: 'registry.yaml', env: process.env });
 * airlock.listAgents();
 * await airlock.close();
 * ```
 */
export function createOutboundClient(setup: OutboundSetup = {}): OutboundRuntime {
  const env = setup.env ?? process.env;
  const registry = loadRegistry(setup.registryPath, env);
  const settings = parseEnvSettings(env);
  if (setup.resolve !== undefined) settings.resolve = setup.resolve;
  const log: OutboundLog = setup.log ?? (() => undefined);
  const pinsPath = pinsPathFrom(setup.pinsPath, env);
  const pins = new PinStore(pinsPath);
  const auditFile = setup.audit === false ? undefined : nonEmpty(env.AIRLOCK_AUDIT_FILE);
  // Opened before the transport, so a bad audit file leaves nothing to close.
  const sink = auditFile === undefined ? undefined : new JsonlAuditSink(auditFile);
  let transport: NetClient;
  try {
    transport = createOutboundTransport(settings);
  } catch (error) {
    sink?.close();
    throw error;
  }
  const trust = new CardTrust({ client: transport, pins, log });
  const cards = cardResolverFrom(trust);
  const ledger =
    setup.ledger ??
    (setup.ledgerPath !== undefined ? new FileOutboundLedger(resolve(setup.ledgerPath)) : new MemoryOutboundLedger());
  const audit: AuditHook | undefined = sink === undefined ? undefined : (event) => sink.write(event);
  const client = createClient({ registry, transport, cards, ledger, log, ...(audit !== undefined && { audit }) });
  let closed = false;
  return {
    ...client,
    registry,
    transport,
    trust,
    pins,
    cards,
    ledger,
    pinsPath,
    ...(sink !== undefined && { auditPath: sink.path }),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await transport.close();
      } finally {
        sink?.close();
      }
    },
  };
}

/**
 * The CLI's ledger file: next to the pin file, so one directory holds Airlock's local state.
 *
 * @example
 * ```ts
 * ledgerPathFor('/work/.airlock/pins.json'); // '/work/.airlock/outbound-tasks.json'
 * ```
 */
export function ledgerPathFor(pinsPath: string): string {
  return join(dirname(resolve(pinsPath)), LEDGER_FILE_NAME);
}

// Kept here too: it was first exported from this module.
export { withHopHeader } from './outbound-transport.js';

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim().length > 0 ? value.trim() : undefined;
}
