/**
 * Tool pins on disk: one small JSON file (by default `.airlock/tool-pins.json`) holding, per
 * tool server, the digest of its tool list and of each tool, as first seen (trust on first use)
 * or as `airlock tools pin <server>` took them. Same pattern as the card pins
 * (`src/trust/pins.ts`): every read goes to the file, every write re-reads, changes one server
 * and replaces the file atomically (`writeStateFile`, mode 0600); a file that exists but cannot
 * be read is an error, never "no pins".
 *
 * File shape:
 * ```json
 * { "version": 1, "servers": { "files": { "digest": "…", "pinnedAt": "2026-…Z", "source": "tofu",
 *   "tools": { "read_file": "…", "write_file": "…" } } } }
 * ```
 *
 * @example
 * ```ts
 * const pins = new ToolPinStore('.airlock/tool-pins.json');
 * await pins.set('files', { digest, tools: { read_file: d1 } }, 'operator');
 * ```
 */
import { readFile } from 'node:fs/promises';
import { readStateBody, writeStateFile } from '../state/file.js';
import { ToolServerError } from './errors.js';

/**
 * Who pinned: trust on first use, or the operator (`airlock tools pin`).
 *
 * @example
 * ```ts
 * const source: ToolPinSource = 'tofu';
 * ```
 */
export type ToolPinSource = 'tofu' | 'operator';

/**
 * One server's pin.
 *
 * @example
 * ```ts
 * const record: ToolPinRecord = { digest, pinnedAt: '2026-12-02T00:00:00.000Z', source: 'tofu', tools: { read_file: d } };
 * ```
 */
export interface ToolPinRecord {
  /** The server digest (`serverDigest`) of the pinned list. */
  readonly digest: string;
  readonly pinnedAt: string;
  readonly source: ToolPinSource;
  /** Tool name → its digest (`toolDigest`). */
  readonly tools: Readonly<Record<string, string>>;
}

const FILE_VERSION = 1;
const MAX_FILE_BYTES = 4 * 1024 * 1024;
const HEX = /^[0-9a-f]{64}$/;

/**
 * The tool pin file. Methods are async and go to the file each time.
 *
 * @example
 * ```ts
 * const record = await new ToolPinStore(path).get('files');
 * ```
 */
export class ToolPinStore {
  readonly path: string;
  readonly #now: () => number;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(path: string, options: { now?: () => number } = {}) {
    this.path = path;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The pin of `server`, or undefined.
   *
   * @example
   * ```ts
   * (await pins.get('files'))?.tools.read_file;
   * ```
   */
  async get(server: string): Promise<ToolPinRecord | undefined> {
    return (await this.#load()).get(server);
  }

  /**
   * Every stored pin, by server name.
   *
   * @example
   * ```ts
   * for (const [server, record] of await pins.list()) console.log(server, record.digest);
   * ```
   */
  async list(): Promise<Map<string, ToolPinRecord>> {
    return this.#load();
  }

  /**
   * Pins `server`'s list, replacing any earlier pin. Throws `TypeError` for a malformed digest.
   *
   * @example
   * ```ts
   * await pins.set('files', { digest: serverDigest(digests), tools: Object.fromEntries(digests) }, 'operator');
   * ```
   */
  async set(
    server: string,
    pinned: { digest: string; tools: Readonly<Record<string, string>> },
    source: ToolPinSource,
  ): Promise<ToolPinRecord> {
    if (!HEX.test(pinned.digest) || !Object.values(pinned.tools).every((digest) => HEX.test(digest))) {
      throw new TypeError('A tool pin must hold SHA-256 digests in hex');
    }
    const record: ToolPinRecord = {
      digest: pinned.digest,
      pinnedAt: new Date(this.#now()).toISOString(),
      source,
      tools: Object.fromEntries(Object.entries(pinned.tools)),
    };
    const run = this.#queue.then(
      () => this.#rewrite(server, record),
      () => this.#rewrite(server, record),
    );
    this.#queue = run.catch(() => undefined);
    await run;
    return record;
  }

  async #rewrite(server: string, record: ToolPinRecord): Promise<void> {
    const pins = await this.#load();
    pins.set(server, record);
    const names = [...pins.keys()].sort();
    const body = { version: FILE_VERSION, servers: Object.fromEntries(names.map((name) => [name, pins.get(name)])) };
    await writeStateFile(this.path, `${JSON.stringify(body, null, 2)}\n`);
  }

  async #load(): Promise<Map<string, ToolPinRecord>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') return new Map();
      throw error;
    }
    return parseToolPinFile(text, this.path);
  }
}

/**
 * Reads a tool pin file's text; throws {@link ToolServerError} (`tool_pins_invalid`) naming
 * the file for anything that is not one.
 *
 * @example
 * ```ts
 * parseToolPinFile('{"version":1,"servers":{}}', 'tool-pins.json').size; // 0
 * ```
 */
export function parseToolPinFile(text: string, path: string): Map<string, ToolPinRecord> {
  const fail = (problem: string): ToolServerError =>
    new ToolServerError('tool_pins_invalid', '', `the tool pin file ${path} is not valid: ${problem}`);
  const servers = readStateBody(
    text,
    { version: FILE_VERSION, key: 'servers', shape: 'object', maxBytes: MAX_FILE_BYTES },
    fail,
  );
  const out = new Map<string, ToolPinRecord>();
  for (const [name, raw] of Object.entries(servers)) {
    if (
      !isRecord(raw) ||
      typeof raw.digest !== 'string' ||
      !HEX.test(raw.digest) ||
      typeof raw.pinnedAt !== 'string' ||
      (raw.source !== 'tofu' && raw.source !== 'operator') ||
      !isRecord(raw.tools) ||
      !Object.values(raw.tools).every((digest) => typeof digest === 'string' && HEX.test(digest))
    ) {
      throw fail(`the pin of "${name.slice(0, 80)}" is malformed`);
    }
    out.set(name, {
      digest: raw.digest,
      pinnedAt: raw.pinnedAt,
      source: raw.source,
      tools: raw.tools as Record<string, string>,
    });
  }
  return out;
}

/**
 * Where a listed tool stands against the pins:
 * - `pinned`: its digest is the pinned one;
 * - `unpinned`: the server's pin does not know it (a new tool): not exposed until pinned;
 * - `changed`: its digest differs from the pin (a "rug pull"), or a configured server digest no
 *   longer matches: disabled until re-pinned.
 *
 * @example
 * ```ts
 * const state: ToolPinState = 'changed';
 * ```
 */
export type ToolPinState = 'pinned' | 'unpinned' | 'changed';

/**
 * The pin state of each listed tool. With a configured server digest (`pin:` in the config) the
 * whole list is held to it: every tool is `pinned` when it matches, `changed` when not. With a
 * stored pin each tool is judged by its own digest. With neither, every tool is `unpinned`
 * (the hub pins on first use).
 *
 * @example
 * ```ts
 * pinStates(new Map([['a', d]]), { tools: { a: d } }, undefined, serverDigest(...)).get('a'); // 'pinned'
 * ```
 */
export function pinStates(
  digests: ReadonlyMap<string, string | undefined>,
  stored: Pick<ToolPinRecord, 'tools'> | undefined,
  configured: string | undefined,
  listDigest: string,
): Map<string, ToolPinState> {
  const out = new Map<string, ToolPinState>();
  for (const [name, digest] of digests) {
    if (configured !== undefined) {
      out.set(name, configured === listDigest ? 'pinned' : 'changed');
    } else if (stored === undefined || !Object.hasOwn(stored.tools, name)) {
      out.set(name, 'unpinned');
    } else {
      out.set(name, digest !== undefined && stored.tools[name] === digest ? 'pinned' : 'changed');
    }
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
