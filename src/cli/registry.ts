/**
 * `airlock registry pin <name>`: fetch a registry entry's card, show its trust digest, the
 * endpoint Airlock would call and what changed since the pin, and (confirmed on a terminal,
 * or with `--yes`) store that digest as an operator pin (clearing a drift lock). Also the
 * setup the outbound commands share (`send`, `agents`): the registry, the real transport,
 * card trust with the pin file, the task ledger next to it, stderr logging and TTY-only
 * progress.
 *
 * @example
 * ```sh
 * airlock registry pin travel --registry registry.yaml --yes
 * # agent     travel
 * # card      https://travel.example.com/.well-known/agent-card.json
 * # digest    3a820d13cbd2b8f9a1eaeddf0e5a2ae4ed6186d1ebb0c54ff107a24cc112b221
 * # endpoint  https://travel.example.com/a2a (JSON-RPC 1.0)
 * #
 * # changed since the pin (tofu, 2026-11-30T09:12:44.120Z):
 * #   digest        1f0c…e2
 * #              →  3a820d13cbd2b8f9a1eaeddf0e5a2ae4ed6186d1ebb0c54ff107a24cc112b221
 * #   interface[0]  https://travel.example.com/a2a (JSONRPC 0.3)
 * #              →  https://travel.example.com/a2a (JSONRPC 1.0)
 * # pinned    operator, in /work/.airlock/pins.json
 * # replaces  the tofu pin of 2026-11-30T09:12:44.120Z; drift cleared
 * ```
 */
import { createInterface } from 'node:readline/promises';
import {
  REGISTRY_NAME_PATTERN,
  RegistryError,
  cardTrustEntry,
  createOutboundClient,
  ledgerPathFor,
  pinsPathFrom,
  type OutboundRuntime,
} from '../client/index.js';
import { trustFieldsOf, type PinRecord, type TrustedCard } from '../trust/index.js';
import { changeLines, trustChanges } from './registry-changes.js';
import { PinnedCardFile, pinnedCardsPathFor } from './registry-snapshots.js';
import { outputWidth, wrapLines } from './table.js';

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
  /** stdout's width when it is a terminal; tables fit 80 columns when it is not known. */
  columns?: number;
  /**
   * Asks a yes/no question on the terminal and resolves true for yes; absent when stdin or
   * stderr is not a terminal (there is nobody to ask).
   */
  confirm?: (question: string) => Promise<boolean>;
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
  get columns() {
    return process.stdout.isTTY === true ? process.stdout.columns : undefined;
  },
  get confirm() {
    return process.stdin.isTTY === true && process.stderr.isTTY === true ? askOnTerminal : undefined;
  },
};

/** One question on stderr, one answer line from stdin: `y` or `yes` (any case) is yes. */
async function askOnTerminal(question: string): Promise<boolean> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^\s*y(es)?\s*$/i.test(await terminal.question(question));
  } finally {
    terminal.close();
  }
}

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
 * An error as one line: its message without control characters, cut to `max` characters
 * (300 by default). A registry file with several problems is the exception: a line saying how
 * many, then one indented line per problem, naming its entry and key.
 *
 * @example
 * ```ts
 * io.stderr(`airlock: ${errorLine(error)}\n`);
 * // airlock: registry: 2 problems:
 * //   agents[0] "travel": card_url: must be an https URL
 * //   agents[1] "wiki": auth.bearer_env: environment variable AIRLOCK_SECRET_WIKI is not set
 * ```
 */
export function errorLine(error: unknown, max = 300): string {
  if (error instanceof RegistryError && error.problems.length > 1) {
    const lines = error.problems.map((problem) => `  ${flatLine(problem.line.replace(/^registry: /, ''), max)}`);
    return [`registry: ${error.problems.length} problems:`, ...lines].join('\n');
  }
  return flatLine(error instanceof Error ? error.message : String(error), max);
}

function flatLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
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
 * const options: RegistryPinOptions = { registry: 'registry.yaml', yes: true };
 * ```
 */
export interface RegistryPinOptions {
  registry?: string;
  /** Pin without asking (the only way without a terminal). */
  yes?: boolean;
}

/**
 * `airlock registry pin <name>`: shows the card, then what changed in its trust fields since
 * the pin (old → new), then asks on a terminal unless `yes`; without a terminal and without
 * `yes` it refuses. Exit codes: 0 pinned (or nothing to pin: the configured `card_sha256` or
 * the stored pin matches), 1 anything else (unknown entry, card refused or unreachable, a
 * configured `card_sha256` that no longer matches, not confirmed).
 *
 * @example
 * ```ts
 * process.exitCode = await registryPinCommand('travel', { registry: 'registry.yaml', yes: true });
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
    const width = outputWidth(io.columns);
    const { endpoint } = trusted;
    const field = (label: string, value: string) =>
      wrapLines(value, { width, indent: label.padEnd(10), hangingIndent: ' '.repeat(10) });
    io.stdout(
      [
        ...field('agent', entry.name),
        ...field('card', entry.cardUrl),
        ...field('digest', trusted.digest),
        ...field(
          'endpoint',
          `${endpoint.url} (${endpoint.binding === 'JSONRPC' ? 'JSON-RPC' : endpoint.binding} ${endpoint.version})`,
        ),
        ...(trusted.signature === undefined
          ? []
          : field('signature', `${trusted.signature.alg} by kid ${trusted.signature.kid} (verified with card_keys)`)),
        '',
      ].join('\n'),
    );
    if (entry.cardSha256 !== undefined) {
      if (entry.cardSha256 === trusted.digest) {
        io.stdout(`${field('pinned', 'by card_sha256 in the registry (it matches); nothing to store').join('\n')}\n`);
        return 0;
      }
      io.stderr(
        `airlock: registry entry "${entry.name}" pins card_sha256 ${entry.cardSha256}, which no longer matches; review the card, then update card_sha256 in the registry\n`,
      );
      return 1;
    }
    const previous = await runtime.pins.get(entry.name);
    const snapshots = new PinnedCardFile(pinnedCardsPathFor(runtime.pinsPath));
    // The record is for display only: failing to write it never changes the outcome.
    const record = () => snapshots.record(entry.name, trusted).catch(() => undefined);
    if (previous !== undefined && previous.digest === trusted.digest && previous.drift === undefined) {
      await record();
      io.stdout(`${field('pinned', `${previous.source}: the card matches its pin; nothing changed`).join('\n')}\n`);
      return 0;
    }
    io.stdout(`${(await reviewLines(entry.name, previous, trusted, snapshots, width)).join('\n')}\n`);
    const refusal = await confirmPin(entry.name, options, io);
    if (refusal !== undefined) {
      io.stderr(`airlock: ${refusal}\n`);
      return 1;
    }
    await runtime.pins.set(entry.name, trusted.digest, 'operator');
    await record();
    // The old digest is in the changes above; here, what the new pin replaced.
    const replaced =
      previous === undefined
        ? 'no earlier pin'
        : `the ${previous.source} pin of ${previous.pinnedAt}${previous.drift !== undefined ? '; drift cleared' : ''}`;
    io.stdout(
      `${[...field('pinned', `operator, in ${runtime.pinsPath}`), ...field('replaces', replaced)].join('\n')}\n`,
    );
    return 0;
  } catch (error) {
    progress.stop();
    io.stderr(`airlock: ${errorLine(error)}\n`);
    return 1;
  } finally {
    await runtime.close();
  }
}

/** What pinning would change: the trust fields, old → new, or why there is nothing to compare. */
async function reviewLines(
  name: string,
  previous: PinRecord | undefined,
  trusted: TrustedCard,
  snapshots: PinnedCardFile,
  width: number,
): Promise<string[]> {
  if (previous === undefined) return ['', 'no earlier pin: this card would be pinned for the first time'];
  const pinned = await snapshots.get(name, previous.digest);
  const now = {
    digest: trusted.digest,
    fields: trustFieldsOf(trusted.card),
    signature: trusted.signature === undefined ? null : { kid: trusted.signature.kid, alg: trusted.signature.alg },
  };
  const changes = trustChanges(
    {
      digest: previous.digest,
      signature: pinned?.signature ?? null,
      ...(pinned !== undefined && { fields: pinned.fields }),
    },
    now,
  );
  const lines = ['', `changed since the pin (${previous.source}, ${previous.pinnedAt}):`];
  if (changes.length === 0)
    lines.push('  nothing: the card matches the pinned digest again; pinning clears the drift lock');
  lines.push(...changeLines(changes, width));
  if (pinned === undefined && changes.length > 0) {
    lines.push(
      ...wrapLines(
        `the pinned card's fields were not recorded (they are, from the next pin or \`airlock agents\` on); \`airlock card fetch ${name}\` shows the card now`,
        { width, indent: '  ' },
      ),
    );
  }
  return lines;
}

/** Undefined when the pin may be written; else the one-line reason it is not. */
async function confirmPin(name: string, options: RegistryPinOptions, io: CommandIO): Promise<string | undefined> {
  if (options.yes === true) return undefined;
  if (io.confirm === undefined) {
    return `not pinned: no terminal to confirm on; pass --yes to pin the card of "${name}"`;
  }
  return (await io.confirm(`pin this card for "${name}"? [y/N] `)) ? undefined : 'not pinned: not confirmed';
}
