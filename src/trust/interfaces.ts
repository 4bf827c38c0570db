/**
 * Which endpoint of a remote card Airlock calls, and whether the card's endpoints are
 * acceptable at all.
 *
 * Every JSON-RPC interface is checked, not only the one chosen: a card that points any
 * JSON-RPC traffic somewhere else is not a card we trust, and checking them all means a
 * later change of preference cannot slip an unchecked URL in. The rules:
 *
 * - https; plain http only when the card URL's host and the interface's host are both
 *   loopback (`localhost`, 127.0.0.0/8, ::1): local development and tests, never the network;
 * - the interface's origin is the card URL's origin or the registry entry's `rpc_url`
 *   origin, so a card served by one site cannot send Airlock, and whatever credentials the
 *   entry carries, to another;
 * - no user info in the URL.
 *
 * gRPC and HTTP+JSON interfaces are not checked here: Airlock speaks only JSON-RPC and never
 * connects to them. They are still part of the pinned digest (`digest.ts`).
 *
 * @example
 * ```ts
 * const endpoint = chooseInterface(card, { cardUrl: 'https://a.example/.well-known/agent-card.json' });
 * endpoint; // { url: 'https://a.example/rpc', version: '1.0' }
 * ```
 */
import { isLoopbackHost } from '../net/index.js';
import type { AgentCard, AgentInterface } from '../protocol/model.js';
import { CardTrustError, showUrl } from './errors.js';

/**
 * The endpoint to call: the URL and dialect of the chosen JSON-RPC interface, and its tenant
 * when the card names one (a v1.0 client copies it into every request, spec §8.3.2).
 *
 * @example
 * ```ts
 * const endpoint: ChosenEndpoint = { url: 'https://a.example/rpc', version: '0.3' };
 * ```
 */
export interface ChosenEndpoint {
  url: string;
  version: '1.0' | '0.3';
  tenant?: string;
}

/**
 * Where the card came from and which other origin the registry entry allows.
 *
 * @example
 * ```ts
 * const where: InterfaceContext = { cardUrl: 'https://a.example/.well-known/agent-card.json', rpcUrl: 'https://rpc.a.example' };
 * ```
 */
export interface InterfaceContext {
  /** The URL the card was fetched from. */
  cardUrl: string;
  /** The registry entry's `rpc_url`: its origin is allowed too. */
  rpcUrl?: string;
  /** The registry entry's name, for error messages. */
  entry?: string;
}

/**
 * Checks every JSON-RPC interface of `card` and returns the first v1.0 one, else the first
 * v0.3 one (the card lists interfaces in preference order). Throws
 * `CardTrustError('card_invalid')` naming the first interface that breaks a rule, or when the
 * card has no JSON-RPC interface. Throws `TypeError` when `cardUrl` or `rpcUrl` is not an
 * absolute URL (a configuration error, not the card's fault).
 *
 * @example
 * ```ts
 * chooseInterface(card, { cardUrl, rpcUrl: entry.rpcUrl }); // { url, version }
 * ```
 */
export function chooseInterface(card: AgentCard, context: InterfaceContext): ChosenEndpoint {
  const cardUrl = parseConfigUrl(context.cardUrl, 'card URL');
  const allowedOrigins = new Set([cardUrl.origin]);
  if (context.rpcUrl !== undefined) allowedOrigins.add(parseConfigUrl(context.rpcUrl, 'rpc_url').origin);
  const cardHostIsLoopback = isLoopbackHost(cardUrl.hostname);

  const jsonRpc = card.interfaces.filter((i) => i.protocolBinding === 'JSONRPC');
  for (const candidate of jsonRpc) {
    const problem = interfaceProblem(candidate.url, allowedOrigins, cardHostIsLoopback);
    if (problem !== undefined) {
      throw new CardTrustError(
        'card_invalid',
        context.entry,
        `JSON-RPC interface ${showUrl(candidate.url)} is refused: ${problem}`,
      );
    }
  }
  const chosen = jsonRpc.find((i) => i.protocolVersion === '1.0') ?? jsonRpc.find((i) => i.protocolVersion === '0.3');
  if (chosen === undefined) {
    throw new CardTrustError(
      'card_invalid',
      context.entry,
      'the card lists no JSON-RPC interface at version 1.0 or 0.3 (the only binding Airlock calls)',
    );
  }
  return endpointOf(chosen);
}

function endpointOf(chosen: AgentInterface): ChosenEndpoint {
  const endpoint: ChosenEndpoint = { url: chosen.url, version: chosen.protocolVersion };
  if (chosen.tenant !== undefined) endpoint.tenant = chosen.tenant;
  return endpoint;
}

/** Why an interface URL is refused, or undefined when it is acceptable. */
function interfaceProblem(
  value: string,
  allowedOrigins: ReadonlySet<string>,
  cardHostIsLoopback: boolean,
): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'it is not an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'it carries user info';
  if (url.protocol === 'http:') {
    // Plain http is for a gateway and an agent on the same machine, both ends on loopback.
    if (!cardHostIsLoopback || !isLoopbackHost(url.hostname)) {
      return 'plain http is allowed only from a loopback card URL to a loopback host';
    }
  } else if (url.protocol !== 'https:') {
    return 'the scheme must be https';
  }
  if (!allowedOrigins.has(url.origin)) {
    return `its origin is neither the card's origin nor the entry's rpc_url origin (allowed: ${[...allowedOrigins].join(', ')})`;
  }
  return undefined;
}

function parseConfigUrl(value: string, what: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new TypeError(`The registry entry's ${what} is not an absolute URL`);
  }
}
