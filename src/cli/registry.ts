/**
 * `airlock registry pin <name>`: fetch a registry entry's card, show its trust digest and the
 * endpoint Airlock would call, and store that digest as an operator pin (clearing a drift
 * lock). Also the setup the outbound commands share (`send`, `agents`): the registry, the
 * real transport, card trust with the pin file, the task ledger next to it, stderr logging
 * and TTY-only progress.
 *
 * @example
 * ```sh
 * airlock registry pin travel --registry registry.yaml
 * # agent     travel
 * # card      https://travel.example.com/.well-known/agent-card.json
 * # digest    3a820d13cbd2b8f9a1eaeddf0e5a2ae4ed6186d1ebb0c54ff107a24cc112b221
 * # endpoint  https://travel.example.com/a2a (JSON-RPC 1.0)
 * # pinned    operator (was 1f0c…e2 from tofu; drift cleared)
 * ```
 */
import {
  REGISTRY_NAME_PATTERN,
  cardTrustEntry,
  createOutboundClient,
  ledgerPathFor,
  pinsPathFrom,
  type OutboundRuntime,
} from '../client/index.js';

/**
 * Where a command writes, and what it reads from its process. Tests pass their own.
 *
 * @example
 * ```ts
 * const io: CommandIO = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), isTTY: false, env: {} };
 * ```
 */
export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** stderr is a terminal: progress is shown only then. */
  isTTY: boolean;
  env: NodeJS.ProcessEnv;
}

/**
 * The real process.
 *
 * @example
 * ```ts
 * process.exitCode = await registryPinCommand('travel', {}, PROCESS_IO);
 * ```
 */
export const PROCESS_IO: CommandIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  get isTTY() {
    return process.stderr.isTTY === true;
  },
  get env() {
    return process.env;
  },
};

/**
 * The outbound client for one CLI run: registry from `--registry` or AIRLOCK_REGISTRY, pins
 * at AIRLOCK_PINS or `.airlock/pins.json`, the task ledger in a file next to the pins (so a
 * later `send --task` finds the task an earlier run started), operator log lines on stderr.
 *
 * @example
 * ```ts
 * const runtime = openOutbound(options.registry, io); // sends: writes a2a.client.* audit rows
 * const readOnly = openOutbound(options.registry, io, { audit: false }); // lists or pins: never opens the audit file
 * ```
 * @throws RegistryError, or an Error naming the variable or file that is unusable
 */
export function openOutbound(
  registry: string | undefined,
  io: CommandIO,
  use: { readonly audit: boolean } = { audit: true },
): OutboundRuntime {
  const pinsPath = pinsPathFrom(undefined, io.env);
  return createOutboundClient({
    audit: use.audit,
    ...(registry !== undefined && { registryPath: registry }),
    env: io.env,
    pinsPath,
    ledgerPath: ledgerPathFor(pinsPath),
    log: (event, fields) => {
      const line = logLine(event, fields);
      if (line !== undefined) io.stderr(`airlock: ${line}\n`);
    },
  });
}

/** Operator lines worth showing on a terminal run; the refusals themselves come back as results. */
function logLine(event: string, fields: Readonly<Record<string, string | number | boolean>>): string | undefined {
  const entry = typeof fields.entry === 'string' ? fields.entry : '';
  if (event === 'card_pinned_tofu') {
    return `pinned the card of "${entry}" on first use (digest ${String(fields.digest)}); check it with \`airlock agents\``;
  }
  if (event.startsWith('a2a.client.')) {
    const detail = Object.entries(fields)
      .map(([key, value]) => `${key}=${String(value)}`)
      .join(' ');
    return `warning: ${event.slice('a2a.client.'.length)} ${detail}`.trim();
  }
  return undefined;
}

/**
 * A one-line status on stderr, redrawn in place, only when stderr is a terminal. `stop()`
 * clears it.
 *
 * @example
 * ```ts
 * const progress = startProgress(io, 'calling travel');
 * progress.update('calling travel (3 s)');
 * progress.stop();
 * ```
 */
export function startProgress(
  io: CommandIO,
  text: string,
  options: { tick?: (elapsedS: number) => string } = {},
): { update(text: string): void; stop(): void } {
  if (!io.isTTY) return { update: () => undefined, stop: () => undefined };
  const started = Date.now();
  let shown = false;
  const draw = (line: string) => {
    io.stderr(`\r\x1b[K${line}`);
    shown = true;
  };
  draw(text);
  const timer =
    options.tick === undefined
      ? undefined
      : setInterval(() => draw(options.tick!(Math.round((Date.now() - started) / 1000))), 1000);
  timer?.unref();
  return {
    update: draw,
    stop: () => {
      if (timer !== undefined) clearInterval(timer);
      if (shown) io.stderr('\r\x1b[K');
      shown = false;
    },
  };
}

/**
 * An error as one line: its message without control characters, cut to 300 characters.
 *
 * @example
 * ```ts
 * io.stderr(`airlock: ${errorLine(error)}\n`);
 * ```
 */
export function errorLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

/** A name from the command line, shown only when it has a registry name's shape. */
export function shownName(name: string): string {
  return REGISTRY_NAME_PATTERN.test(name) ? name : '(that name)';
}

/**
 * Options of `airlock registry pin`.
 *
 * @example
 * ```ts
 * const options: RegistryPinOptions = { registry: 'registry.yaml' };
 * ```
 */
export interface RegistryPinOptions {
  registry?: string;
}

/**
 * `airlock registry pin <name>`. Exit codes: 0 pinned (or the configured `card_sha256`
 * matches), 1 anything else (unknown entry, card refused or unreachable, a configured
 * `card_sha256` that no longer matches).
 *
 * @example
 * ```ts
 * process.exitCode = await registryPinCommand('travel', { registry: 'registry.yaml' });
 * ```
 */
export async function registryPinCommand(
  name: string,
  options: RegistryPinOptions,
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  let runtime: OutboundRuntime;
  try {
    runtime = openOutbound(options.registry, io, { audit: false });
  } catch (error) {
    io.stderr(`airlock: ${errorLine(error)}\n`);
    return 1;
  }
  const progress = startProgress(io, `fetching the card of ${shownName(name)}…`);
  try {
    const entry = runtime.registry.get(name);
    const trusted = await runtime.trust.inspect(cardTrustEntry(entry));
    progress.stop();
    const { endpoint } = trusted;
    io.stdout(
      [
        `agent     ${entry.name}`,
        `card      ${entry.cardUrl}`,
        `digest    ${trusted.digest}`,
        `endpoint  ${endpoint.url} (JSON-RPC ${endpoint.version})`,
        ...(trusted.signature === undefined
          ? []
          : [`signature ${trusted.signature.alg} by kid ${trusted.signature.kid} (verified with card_keys)`]),
        '',
      ].join('\n'),
    );
    if (entry.cardSha256 !== undefined) {
      if (entry.cardSha256 === trusted.digest) {
        io.stdout('pinned    by card_sha256 in the registry (it matches); nothing to store\n');
        return 0;
      }
      io.stderr(
        `airlock: registry entry "${entry.name}" pins card_sha256 ${entry.cardSha256}, which no longer matches; review the card, then update card_sha256 in the registry\n`,
      );
      return 1;
    }
    const previous = await runtime.pins.get(entry.name);
    await runtime.pins.set(entry.name, trusted.digest, 'operator');
    const was =
      previous === undefined
        ? 'no earlier pin'
        : `was ${previous.digest === trusted.digest ? 'the same digest' : previous.digest} from ${previous.source}${previous.drift !== undefined ? '; drift cleared' : ''}`;
    io.stdout(`pinned    operator (${was}) in ${runtime.pinsPath}\n`);
    return 0;
  } catch (error) {
    progress.stop();
    io.stderr(`airlock: ${errorLine(error)}\n`);
    return 1;
  } finally {
    await runtime.close();
  }
}
