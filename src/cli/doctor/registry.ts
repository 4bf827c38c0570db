/**
 * The registry check of `airlock doctor`: for a config with `upstreams`, each registry entry's
 * card is fetched through the outbound client's guarded transport and judged by card trust
 * exactly as a relay would judge it (endpoint origins, signature, pin), except that nothing is
 * written: a first-use pin or a drift mark is reported instead of stored.
 *
 * @example
 * ```ts
 * const lines = await registryLines({ registry: 'registry.yaml', pins: '.airlock/pins.json' }, process.env);
 * ```
 */
import { cardTrustEntry, errorTypeOf, loadRegistryFile, type RegistryEntry } from '../../client/index.js';
import { createOutboundTransport } from '../../client/outbound-transport.js';
import { parseEnvSettings } from '../../net/index.js';
import { CardTrust, PinStore, type CardPins, type PinRecord, type PinSource } from '../../trust/index.js';
import { errorLine } from '../registry.js';
import type { CheckLine } from './check.js';

/** Each card gets this long, as in `airlock agents`. */
const CARD_TIMEOUT_MS = 5000;

/**
 * A pin file that is read, never written: what card trust would store is kept here instead.
 *
 * @example
 * ```ts
 * const pins = new ReadOnlyPins(new PinStore('.airlock/pins.json'));
 * new CardTrust({ client, pins });
 * ```
 */
export class ReadOnlyPins implements CardPins {
  /** Entries card trust would pin on first use, with the digest. */
  readonly wouldPin = new Map<string, string>();
  private readonly store: PinStore;

  constructor(store: PinStore) {
    this.store = store;
  }

  get(name: string): Promise<PinRecord | undefined> {
    return this.store.get(name);
  }

  set(name: string, digest: string, source: PinSource): Promise<PinRecord> {
    this.wouldPin.set(name, digest);
    return Promise.resolve({ digest, pinnedAt: new Date().toISOString(), source });
  }

  markDrift(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * One line per registry entry (or one for the registry itself when it cannot be loaded).
 *
 * @example
 * ```ts
 * await registryLines(undefined, {}); // [{ status: 'skip', check: 'registry', detail: 'no upstreams configured' }]
 * ```
 */
export async function registryLines(
  upstreams: { registry: string; pins: string } | undefined,
  env: NodeJS.ProcessEnv,
): Promise<CheckLine[]> {
  if (upstreams === undefined) return [{ status: 'skip', check: 'registry', detail: 'no upstreams configured' }];
  let entries: RegistryEntry[];
  try {
    entries = loadRegistryFile(upstreams.registry, env).entries();
  } catch (error) {
    return [{ status: 'fail', check: 'registry', detail: `${upstreams.registry}: ${errorLine(error)}` }];
  }
  if (entries.length === 0)
    return [{ status: 'ok', check: 'registry', detail: `${upstreams.registry} lists no agents` }];
  const transport = createOutboundTransport(parseEnvSettings(env));
  const pins = new ReadOnlyPins(new PinStore(upstreams.pins));
  const trust = new CardTrust({ client: transport, pins });
  try {
    return await Promise.all(entries.map((entry) => entryLine(trust, pins, entry)));
  } finally {
    await transport.close();
  }
}

async function entryLine(trust: CardTrust, pins: ReadOnlyPins, entry: RegistryEntry): Promise<CheckLine> {
  try {
    const trusted = await withDeadline(trust.resolve(cardTrustEntry(entry, { capMs: CARD_TIMEOUT_MS })));
    const signed = trusted.signature !== undefined ? ' (signed)' : '';
    const digest = trusted.digest.slice(0, 12);
    const pinned = pins.wouldPin.has(entry.name)
      ? `not pinned yet: the first call pins ${digest}`
      : `matches its ${(await pins.get(entry.name))?.source ?? 'configured'} pin ${digest}`;
    return { status: 'ok', check: 'registry', detail: `${entry.name}: card ok${signed}, ${pinned}` };
  } catch (error) {
    const type = errorTypeOf(error, 'card_invalid');
    return { status: 'fail', check: 'registry', detail: `${entry.name}: ${type}: ${errorLine(error)}` };
  }
}

async function withDeadline<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${CARD_TIMEOUT_MS / 1000} s`)),
          CARD_TIMEOUT_MS + 250,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
