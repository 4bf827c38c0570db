/**
 * The tool hub: the gateway's connections to its MCP tool servers, and where each tool stands
 * against its pin. Servers are connected at boot (`start`, called by `airlock serve`): each is
 * connected, its tools listed, digested and held to the pins. A server that fails stops the
 * boot with one line naming it, unless it is `optional` (then it is logged, its tools answer
 * `refused`, and it is reconnected on the next turn that could use it). A server whose program
 * exits or whose session ends is reconnected on the next call, and every (re)connect re-checks
 * the pins. A tool that is not `pinned` (changed, or new) is never offered or run; the hub
 * re-reads the pin file before refusing it, so `airlock tools pin` takes effect without a
 * restart.
 *
 * @example
 * ```ts
 * const hub = new ToolHub(config.tools, { guarded, env: process.env, logger });
 * await hub.start();               // throws ToolServerError for a required server that fails
 * const tool = await hub.resolve('files', 'read_file');
 * if (tool.kind === 'ready') await hub.call('files', 'read_file', { path: 'a.txt' }, signal);
 * await hub.close();
 * ```
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { GuardedClient } from '../net/index.js';
import { normalizeDigest } from '../trust/digest.js';
import type { ToolServerConfig, ToolsConfig } from './config.js';
import { connectToolServer, toolServerError, type ToolServerConnection } from './connection.js';
import { serverDigest, toolDigests, type ListedTool } from './digest.js';
import { ToolServerError } from './errors.js';
import { pinStates, ToolPinStore, type ToolPinState } from './pins.js';

/** How long a server that failed to connect is left alone by background reconnects. */
const RETRY_AFTER_MS = 10_000;

/**
 * What the hub needs besides the `tools` config.
 *
 * @example
 * ```ts
 * const options: ToolHubOptions = { guarded: createGuardedClient(parseEnvSettings(process.env)), env: process.env };
 * ```
 */
export interface ToolHubOptions {
  /** The guarded outbound client HTTP servers are reached through. */
  readonly guarded: GuardedClient;
  /** Close `guarded` with the hub (it was made for the hub alone). */
  readonly ownsGuarded?: boolean;
  /** Airlock's environment (program lookup, `passEnv`). */
  readonly env: NodeJS.ProcessEnv;
  /** Where pins are kept; by default `tools.pins`. */
  readonly pins?: ToolPinStore;
  /** Lines for the operator (an optional server that failed, a changed tool). */
  readonly log?: (level: 'info' | 'warn', event: string, fields: Record<string, unknown>) => void;
  /**
   * Pin a server's list on first use (no stored pin, none configured). Default true; `airlock
   * tools list` and `airlock tools pin` look without pinning.
   */
  readonly pinOnFirstUse?: boolean;
  /** Connect to a server (tests substitute this); by default {@link connectToolServer}. */
  readonly connect?: typeof connectToolServer;
}

/**
 * What the hub knows of one server's tool, for offering and calling it:
 * - `ready`: listed and pinned; `listed` is what was pinned;
 * - `disabled`: listed but changed since pinned, or new and not pinned yet;
 * - `absent`: the server does not list it (anymore);
 * - `unavailable`: the server could not be reached.
 *
 * @example
 * ```ts
 * const tool = await hub.resolve('files', 'read_file');
 * if (tool.kind !== 'ready') return refuse(tool.reason);
 * ```
 */
export type ResolvedTool =
  | { readonly kind: 'ready'; readonly listed: ListedTool }
  | { readonly kind: 'disabled' | 'absent' | 'unavailable'; readonly reason: string };

/**
 * One server as `airlock tools list` shows it.
 *
 * @example
 * ```ts
 * for (const server of hub.describe()) console.log(server.name, server.digest);
 * ```
 */
export interface ServerView {
  readonly name: string;
  readonly connected: boolean;
  /** The server digest of what it listed now (undefined when never connected). */
  readonly digest?: string;
  readonly error?: string;
  readonly tools: readonly {
    readonly name: string;
    readonly digest?: string;
    readonly state: ToolPinState;
    readonly level?: string;
  }[];
}

interface Listing {
  readonly connection: ToolServerConnection;
  readonly tools: ReadonlyMap<string, ListedTool>;
  readonly digests: ReadonlyMap<string, string | undefined>;
  readonly digest: string;
  states: Map<string, ToolPinState>;
}

interface ServerSlot {
  readonly config: ToolServerConfig;
  listing?: Listing;
  error?: string;
  /** When the last connection attempt failed (epoch ms). */
  failedAt?: number;
  connecting?: Promise<Listing>;
}

/** The hub; see the module comment. */
export class ToolHub {
  readonly #slots = new Map<string, ServerSlot>();
  readonly #options: ToolHubOptions;
  readonly #pins: ToolPinStore;
  #closed = false;

  constructor(config: Pick<ToolsConfig, 'servers' | 'pins'>, options: ToolHubOptions) {
    this.#options = options;
    this.#pins = options.pins ?? new ToolPinStore(config.pins);
    for (const server of config.servers) this.#slots.set(server.name, { config: server });
  }

  /** The pin store (for `airlock tools pin`). */
  get pins(): ToolPinStore {
    return this.#pins;
  }

  /**
   * Connects every server, lists and checks its tools. Rejects with {@link ToolServerError}
   * for the first required server that fails (the others are closed again by `close`).
   *
   * @example
   * ```ts
   * await hub.start();
   * ```
   */
  async start(): Promise<void> {
    const results = await Promise.allSettled([...this.#slots.keys()].map((name) => this.#connect(name)));
    let failure: ToolServerError | undefined;
    [...this.#slots.values()].forEach((slot, index) => {
      const result = results[index];
      if (result?.status !== 'rejected') return;
      const error = toolServerError(slot.config.name, result.reason, 'could not connect');
      if (slot.config.optional) {
        this.#options.log?.('warn', 'tool_server_unavailable', { server: slot.config.name, error: error.message });
      } else {
        failure ??= error;
      }
    });
    if (failure !== undefined) throw failure;
  }

  /**
   * Where `tool` of `server` stands now, reconnecting the server first when it is down. Never
   * throws.
   *
   * @example
   * ```ts
   * (await hub.resolve('files', 'write_file')).kind; // 'ready'
   * ```
   */
  async resolve(server: string, tool: string): Promise<ResolvedTool> {
    const slot = this.#slots.get(server);
    if (slot === undefined) return { kind: 'absent', reason: `there is no tool server "${server}"` };
    let listing: Listing;
    try {
      listing = await this.#live(slot);
    } catch (error) {
      return { kind: 'unavailable', reason: toolServerError(server, error, 'could not connect').message };
    }
    const listed = listing.tools.get(tool);
    if (listed === undefined) return { kind: 'absent', reason: `the tool server "${server}" no longer lists ${tool}` };
    if (listing.states.get(tool) !== 'pinned' && slot.config.pin === undefined) {
      // The operator may have re-pinned since (another process): look again.
      listing.states = await this.#states(slot.config, listing.digests, listing.digest);
    }
    const state = listing.states.get(tool);
    if (state === 'pinned') return { kind: 'ready', listed };
    const fix =
      slot.config.pin !== undefined
        ? `the server's tool list no longer matches tools.servers "${server}" pin; check it, then update the pin`
        : state === 'unpinned'
          ? `${server}.${tool} is new and not pinned; check it, then run \`airlock tools pin ${server}\``
          : `${server}.${tool} changed since it was pinned; check it, then run \`airlock tools pin ${server}\``;
    return { kind: 'disabled', reason: `the tool is disabled: ${fix}` };
  }

  /**
   * What a turn may offer of `server` right now, without waiting: the tools that are listed
   * and pinned. A server that is down is reconnected in the background (lazily), so a later
   * turn may find it back.
   *
   * @example
   * ```ts
   * hub.readyTools('files').get('read_file')?.description;
   * ```
   */
  readyTools(server: string): ReadonlyMap<string, ListedTool> {
    const slot = this.#slots.get(server);
    if (slot === undefined) return new Map();
    const listing = slot.listing;
    if (listing === undefined || !listing.connection.alive) {
      // At most one background attempt per RETRY_AFTER_MS after a failure (a call still tries at once).
      const due = slot.failedAt === undefined || Date.now() - slot.failedAt >= RETRY_AFTER_MS;
      if (!this.#closed && due) this.#live(slot).catch(() => undefined);
      if (listing === undefined) return new Map();
    }
    const ready = new Map<string, ListedTool>();
    for (const [name, listed] of listing.tools) if (listing.states.get(name) === 'pinned') ready.set(name, listed);
    return ready;
  }

  /**
   * Calls a tool the hub resolved `ready`. Rejects when the server fails, times out (the
   * server's `timeoutSeconds`: a {@link ToolServerError} `tool_call_timeout`) or `signal` aborts.
   *
   * @example
   * ```ts
   * const result = await hub.call('files', 'read_file', { path: 'a.txt' }, signal);
   * ```
   */
  async call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    const slot = this.#slots.get(server);
    if (slot === undefined) throw new ToolServerError('tool_server_unavailable', server, 'not configured');
    const listing = await this.#live(slot);
    const deadline = AbortSignal.timeout(slot.config.timeoutSeconds * 1000);
    try {
      return await listing.connection.call(tool, args, AbortSignal.any([signal, deadline]));
    } catch (error) {
      if (deadline.aborted && !signal.aborted) {
        throw new ToolServerError(
          'tool_call_timeout',
          server,
          `${tool} did not answer within ${slot.config.timeoutSeconds} s`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  /**
   * The configured timeout of `server`, in seconds.
   *
   * @example
   * ```ts
   * hub.timeoutSeconds('files'); // 30
   * ```
   */
  timeoutSeconds(server: string): number {
    return this.#slots.get(server)?.config.timeoutSeconds ?? 0;
  }

  /**
   * Every server and tool as the hub sees them now (for `airlock tools list`).
   *
   * @example
   * ```ts
   * hub.describe()[0]?.tools[0]?.state; // 'pinned'
   * ```
   */
  describe(): ServerView[] {
    return [...this.#slots.values()].map((slot) => {
      const listing = slot.listing;
      const levels = slot.config.tools;
      const tools = listing === undefined ? [] : [...listing.tools.keys()].sort();
      return {
        name: slot.config.name,
        connected: listing?.connection.alive === true,
        ...(listing !== undefined && { digest: listing.digest }),
        ...(slot.error !== undefined && { error: slot.error }),
        tools: tools.map((name) => {
          const digest = listing?.digests.get(name);
          const level = Object.hasOwn(levels, name) ? levels[name]?.level : undefined;
          return {
            name,
            ...(digest !== undefined && { digest }),
            state: listing?.states.get(name) ?? 'unpinned',
            ...(level !== undefined && { level }),
          };
        }),
      };
    });
  }

  /**
   * The digests `server` lists now (connecting it if needed), for `airlock tools pin`.
   *
   * @example
   * ```ts
   * const { digest, tools } = await hub.currentDigests('files');
   * ```
   */
  async currentDigests(server: string): Promise<{ digest: string; tools: Record<string, string | undefined> }> {
    const slot = this.#slots.get(server);
    if (slot === undefined) throw new ToolServerError('tool_server_unavailable', server, 'not configured');
    const listing = await this.#live(slot);
    return { digest: listing.digest, tools: Object.fromEntries(listing.digests) };
  }

  /**
   * Closes every connection (stdio programs are ended). Idempotent.
   *
   * @example
   * ```ts
   * await hub.close();
   * ```
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closing: Promise<void>[] = [];
    for (const slot of this.#slots.values()) {
      if (slot.listing !== undefined) closing.push(slot.listing.connection.close());
      if (slot.connecting !== undefined) {
        closing.push(slot.connecting.then((listing) => listing.connection.close()).catch(() => undefined));
      }
      delete slot.listing;
    }
    await Promise.all(closing);
    if (this.#options.ownsGuarded === true) await this.#options.guarded.close();
  }

  /** The slot's listing over a live connection: reconnected (once at a time) when down. */
  async #live(slot: ServerSlot): Promise<Listing> {
    if (slot.listing !== undefined && slot.listing.connection.alive) return slot.listing;
    return this.#connect(slot.config.name);
  }

  #connect(name: string): Promise<Listing> {
    const slot = this.#slots.get(name)!;
    if (slot.connecting !== undefined) return slot.connecting;
    const connecting = (async (): Promise<Listing> => {
      if (this.#closed) throw new ToolServerError('tool_server_unavailable', name, 'the gateway is closing');
      const old = slot.listing;
      delete slot.listing;
      await old?.connection.close();
      const connect = this.#options.connect ?? connectToolServer;
      const connection = await connect(slot.config, { guarded: this.#options.guarded, env: this.#options.env });
      if (this.#closed) {
        await connection.close();
        throw new ToolServerError('tool_server_unavailable', name, 'the gateway is closing');
      }
      try {
        const tools = new Map<string, ListedTool>();
        for (const tool of connection.tools) if (!tools.has(tool.name)) tools.set(tool.name, tool);
        const digests = toolDigests([...tools.values()]);
        const digest = serverDigest(digests);
        const states = await this.#states(slot.config, digests, digest, true);
        const listing: Listing = { connection, tools, digests, digest, states };
        for (const [tool, state] of states) {
          if (state === 'changed') {
            this.#options.log?.('warn', 'tool_pin_changed', { server: name, tool, fix: `airlock tools pin ${name}` });
          }
        }
        return listing;
      } catch (error) {
        await connection.close();
        throw error;
      }
    })();
    slot.connecting = connecting;
    connecting.then(
      (listing) => {
        slot.listing = listing;
        delete slot.error;
        delete slot.failedAt;
        delete slot.connecting;
      },
      (error: unknown) => {
        slot.failedAt = Date.now();
        slot.error = toolServerError(name, error, 'could not connect').message;
        delete slot.connecting;
      },
    );
    return connecting;
  }

  /** Pin states of a listing; on first use (no pin, none configured) the list is pinned now. */
  async #states(
    config: ToolServerConfig,
    digests: ReadonlyMap<string, string | undefined>,
    digest: string,
    firstUse = false,
  ): Promise<Map<string, ToolPinState>> {
    if (config.pin !== undefined) return pinStates(digests, undefined, normalizeDigest(config.pin), digest);
    let stored = await this.#pins.get(config.name);
    if (
      stored === undefined &&
      firstUse &&
      this.#options.pinOnFirstUse !== false &&
      [...digests.values()].every((value) => value !== undefined)
    ) {
      stored = await this.#pins.set(
        config.name,
        { digest, tools: Object.fromEntries(digests) as Record<string, string> },
        'tofu',
      );
      this.#options.log?.('info', 'tool_server_pinned', { server: config.name, digest, tools: digests.size });
    }
    return pinStates(digests, stored, undefined, digest);
  }
}
