/**
 * Card pins on disk: one small JSON file (e.g. `.airlock/pins.json`) mapping registry entry
 * names to the trust digest Airlock accepts for them, and a drift record when a fetched card
 * no longer matched.
 *
 * The file is shared by two processes: the gateway marks drift, and `airlock registry pin`
 * (a separate CLI run) re-pins. So every read goes to the file (it is tiny, and the gateway
 * reads it once per card refresh), and every write re-reads, changes one entry and replaces
 * the file atomically (temp file in the same directory, fsync, rename), with mode 0600.
 * Writes within one process are serialised; between processes the read-modify-write window
 * is a few milliseconds, and losing a race only loses the other entry's most recent change
 * (a TOFU pin is re-taken on the next fetch, a lost drift mark is re-detected).
 *
 * A file that exists but cannot be read as a pin file is an error, never "no pins": treating
 * it as empty would re-pin every entry on first use and defeat the pins.
 *
 * File shape:
 * ```json
 * { "version": 1, "pins": { "weather": { "digest": "…", "pinnedAt": "2026-…Z", "source": "tofu",
 *   "drift": { "digest": "…", "seenAt": "2026-…Z" } } } }
 * ```
 *
 * @example
 * ```ts
 * const pins = new PinStore('.airlock/pins.json');
 * await pins.set('weather', digest, 'operator'); // what `airlock registry pin weather` does
 * ```
 */
import { readFile } from 'node:fs/promises';
import { normalizeDigest } from './digest.js';
import { readStateBody, writeStateFile } from '../state/file.js';

/**
 * Who pinned a digest: the registry's `card_sha256`, trust on first use, or an operator
 * running `airlock registry pin`.
 *
 * @example
 * ```ts
 * const source: PinSource = 'tofu';
 * ```
 */
export type PinSource = 'configured' | 'tofu' | 'operator';

/**
 * One entry's pin. `drift` is present while the entry is disabled: a fetched card had
 * `drift.digest` instead of `digest`.
 *
 * @example
 * ```ts
 * const record: PinRecord = { digest, pinnedAt: '2026-10-24T12:00:00.000Z', source: 'tofu' };
 * ```
 */
export interface PinRecord {
  digest: string;
  /** ISO 8601 UTC. */
  pinnedAt: string;
  source: PinSource;
  drift?: { digest: string; seenAt: string };
}

/**
 * Options for a `PinStore`.
 *
 * @example
 * ```ts
 * new PinStore('.airlock/pins.json', { now: () => Date.parse('2026-10-24T12:00:00Z') });
 * ```
 */
export interface PinStoreOptions {
  /** Epoch milliseconds; defaults to `Date.now`. */
  now?: () => number;
}

const FILE_VERSION = 1;
const SOURCES: ReadonlySet<unknown> = new Set<PinSource>(['configured', 'tofu', 'operator']);
/** A pin file holds short records; anything much larger is not ours. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/**
 * The pin file. Methods are async and go to the file each time (see the module comment).
 *
 * @example
 * ```ts
 * const pins = new PinStore(join(stateDir, 'pins.json'));
 * if (await pins.isDisabled('weather')) console.log('run: airlock registry pin weather');
 * ```
 */
export class PinStore {
  readonly path: string;
  private readonly now: () => number;
  /** Serialises this process's writes, so two of them never interleave read and rename. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(path: string, options: PinStoreOptions = {}) {
    this.path = path;
    this.now = options.now ?? Date.now;
  }

  /**
   * The pin of `name`, or undefined if none is stored.
   *
   * @example
   * ```ts
   * (await pins.get('weather'))?.source; // 'tofu'
   * ```
   */
  async get(name: string): Promise<PinRecord | undefined> {
    return (await this.load()).get(name);
  }

  /**
   * Every stored pin, by entry name (for `airlock registry` listings).
   *
   * @example
   * ```ts
   * for (const [name, record] of await pins.list()) console.log(name, record.digest);
   * ```
   */
  async list(): Promise<Map<string, PinRecord>> {
    return this.load();
  }

  /**
   * Pins `digest` for `name`, replacing any earlier pin and clearing drift (re-enabling the
   * entry). Throws `TypeError` unless `digest` is 64 hex digits.
   *
   * @example
   * ```ts
   * await pins.set('weather', cardTrustDigest(card), 'operator');
   * ```
   */
  async set(name: string, digest: string, source: PinSource): Promise<PinRecord> {
    const normal = normalizeDigest(digest);
    if (normal === undefined) throw new TypeError('A pin must be a SHA-256 digest in hex');
    if (!SOURCES.has(source)) throw new TypeError('Unknown pin source');
    const record: PinRecord = { digest: normal, pinnedAt: this.timestamp(), source };
    await this.update((pins) => {
      pins.set(name, record);
    });
    return record;
  }

  /**
   * Records that a card for `name` had `seenDigest` instead of the pinned digest; the entry
   * stays disabled until `set` is called for it. Throws `Error` if `name` has no pin (drift
   * is a change from a pin) and `TypeError` for a malformed digest.
   *
   * @example
   * ```ts
   * await pins.markDrift('weather', digest);
   * await pins.isDisabled('weather'); // true
   * ```
   */
  async markDrift(name: string, seenDigest: string): Promise<void> {
    const normal = normalizeDigest(seenDigest);
    if (normal === undefined) throw new TypeError('A digest must be SHA-256 in hex');
    await this.update((pins) => {
      const record = pins.get(name);
      if (record === undefined) throw new Error(`No pin is stored for registry entry "${name}"`);
      pins.set(name, { ...record, drift: { digest: normal, seenAt: this.timestamp() } });
    });
  }

  /**
   * True while `name` is disabled by drift.
   *
   * @example
   * ```ts
   * if (await pins.isDisabled(entry.name)) refuse();
   * ```
   */
  async isDisabled(name: string): Promise<boolean> {
    return (await this.get(name))?.drift !== undefined;
  }

  /**
   * Removes the pin of `name` (e.g. when an entry leaves the registry). True if one existed.
   *
   * @example
   * ```ts
   * await pins.delete('old-entry');
   * ```
   */
  async delete(name: string): Promise<boolean> {
    let existed = false;
    await this.update((pins) => {
      existed = pins.delete(name);
    });
    return existed;
  }

  private timestamp(): string {
    return new Date(this.now()).toISOString();
  }

  /** Runs read-modify-write after this process's earlier writes, whatever their outcome. */
  private update(change: (pins: Map<string, PinRecord>) => void): Promise<void> {
    const run = this.queue.then(
      () => this.rewrite(change),
      () => this.rewrite(change),
    );
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async rewrite(change: (pins: Map<string, PinRecord>) => void): Promise<void> {
    const pins = await this.load();
    change(pins);
    await this.writeAtomically(serialise(pins));
  }

  private async load(): Promise<Map<string, PinRecord>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return new Map();
      throw error;
    }
    return parsePinFile(text, this.path);
  }

  private async writeAtomically(text: string): Promise<void> {
    await writeStateFile(this.path, text);
  }
}

function serialise(pins: Map<string, PinRecord>): string {
  // fromEntries keeps a name such as `__proto__` an own key, so it round-trips.
  const names = [...pins.keys()].sort();
  const body = { version: FILE_VERSION, pins: Object.fromEntries(names.map((name) => [name, pins.get(name)])) };
  return `${JSON.stringify(body, null, 2)}\n`;
}

/**
 * Reads a pin file's text. Throws `Error` naming the file for anything that is not a valid
 * pin file: the caller must not carry on as if no pins existed.
 *
 * @example
 * ```ts
 * parsePinFile('{"version":1,"pins":{}}', 'pins.json').size; // 0
 * ```
 */
export function parsePinFile(text: string, path: string): Map<string, PinRecord> {
  const fail = (problem: string): Error => new Error(`The pin file ${path} is not valid: ${problem}`);
  const pins = readStateBody(
    text,
    { version: FILE_VERSION, key: 'pins', shape: 'object', maxBytes: MAX_FILE_BYTES },
    fail,
  );
  const out = new Map<string, PinRecord>();
  // JSON.parse makes every key, `__proto__` included, an own property.
  for (const [name, raw] of Object.entries(pins)) {
    const record = readRecord(raw);
    if (record === undefined) throw fail(`the pin of "${name.slice(0, 80)}" is malformed`);
    out.set(name, record);
  }
  return out;
}

function readRecord(raw: unknown): PinRecord | undefined {
  if (!isRecord(raw)) return undefined;
  const { digest, pinnedAt, source, drift } = raw;
  if (!isDigest(digest) || !isTimestamp(pinnedAt) || !SOURCES.has(source)) return undefined;
  const record: PinRecord = { digest, pinnedAt, source: source as PinSource };
  if (drift !== undefined) {
    if (!isRecord(drift) || !isDigest(drift.digest) || !isTimestamp(drift.seenAt)) return undefined;
    record.drift = { digest: drift.digest, seenAt: drift.seenAt };
  }
  return record;
}

function isDigest(value: unknown): value is string {
  return typeof value === 'string' && normalizeDigest(value) === value;
}

function isTimestamp(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 40 && !Number.isNaN(Date.parse(value));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isErrno(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
