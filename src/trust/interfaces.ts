/**
 * Which endpoint of a remote card Airlock calls, over which binding, and whether the card's
 * endpoints are acceptable at all.
 *
 * The binding: JSON-RPC whenever the card lists it (v1.0 first, else v0.3), else HTTP+JSON
 * (v1.0 only: the v0.3 REST shapes are another codec Airlock does not have). gRPC is never
 * called. A card listing none of these is refused, naming what it does list.
 *
 * Every interface of the chosen binding is checked, not only the one chosen: a card that
 * points any of that traffic somewhere else is not a card we trust, and checking them all
 * means a later change of preference cannot slip an unchecked URL in. The rules:
 *
 * - https; plain http only when the card URL's host and the interface's host are both
 *   loopback (`localhost`, 127.0.0.0/8, ::1): local development and tests, never the network;
 * - the interface's origin is the card URL's origin or the registry entry's `rpc_url`
 *   origin, so a card served by one site cannot send Airlock, and whatever credentials the
 *   entry carries, to another;
 * - no user info in the URL.
 *
 * Interfaces of a binding that is not chosen are not checked: Airlock never connects to them.
 * They are still part of the pinned digest (`digest.ts`).
 *
 * @example
 * ```ts
 * const endpoint = chooseInterface(card, { cardUrl: 'https://a.example/.well-known/agent-card.json' });
 * endpoint; // { url: 'https://a.example/rpc', version: '1.0', binding: 'JSONRPC' }
 * ```
 */
import { isLoopbackHost } from '../net/index.js';
import type { AgentCard, AgentInterface } from '../protocol/model.js';
import { CardTrustError, showUrl } from './errors.js';

/**
 * A binding Airlock calls: JSON-RPC, or HTTP+JSON when the card lists no JSON-RPC interface.
 *
 * @example
 * ```ts
 * const binding: CalledBinding = 'HTTP+JSON';
 * ```
 */
export type CalledBinding = 'JSONRPC' | 'HTTP+JSON';

/**
 * The endpoint to call: the URL, binding and dialect of the chosen interface, and its tenant
 * when the card names one (a v1.0 client copies it into every request, spec §8.3.2).
 *
 * @example
 * ```ts
 * const endpoint: ChosenEndpoint = { url: 'https://a.example/rpc', version: '0.3', binding: 'JSONRPC' };
 * ```
 */
export interface ChosenEndpoint {
  url: string;
  version: '1.0' | '0.3';
  binding: CalledBinding;
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

/** How a binding is named in messages. */
const BINDING_NAME: Readonly<Record<AgentInterface['protocolBinding'], string>> = {
  JSONRPC: 'JSON-RPC',
  'HTTP+JSON': 'HTTP+JSON',
  GRPC: 'gRPC',
};

/** The versions Airlock speaks per binding, in preference order. */
const CALLED_VERSIONS: Readonly<Record<CalledBinding, readonly AgentInterface['protocolVersion'][]>> = {
  JSONRPC: ['1.0', '0.3'],
  'HTTP+JSON': ['1.0'],
};

/**
 * Picks the binding and interface to call (see the module comment), checks every interface of
 * that binding, and returns the chosen one. Pure: the card and the context in, an endpoint or
 * an error out. Throws `CardTrustError('card_invalid')` naming the first interface that breaks
 * a rule, or, when the card lists nothing Airlock calls, naming what it does list. Throws
 * `TypeError` when `cardUrl` or `rpcUrl` is not an absolute URL (a configuration error, not
 * the card's fault).
 *
 * @example
 * ```ts
 * chooseInterface(card, { cardUrl, rpcUrl: entry.rpcUrl }); // { url, version, binding }
 * ```
 */
export function chooseInterface(card: AgentCard, context: InterfaceContext): ChosenEndpoint {
  const cardUrl = parseConfigUrl(context.cardUrl, 'card URL');
  const allowedOrigins = new Set([cardUrl.origin]);
  if (context.rpcUrl !== undefined) allowedOrigins.add(parseConfigUrl(context.rpcUrl, 'rpc_url').origin);
  const cardHostIsLoopback = isLoopbackHost(cardUrl.hostname);

  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    const listed = card.interfaces.filter((i) => i.protocolBinding === binding);
    let chosen: AgentInterface | undefined;
    for (const version of CALLED_VERSIONS[binding]) chosen ??= listed.find((i) => i.protocolVersion === version);
    if (chosen === undefined) continue;
    for (const candidate of listed) {
      const problem = interfaceProblem(candidate.url, allowedOrigins, cardHostIsLoopback);
      if (problem !== undefined) {
        throw new CardTrustError(
          'card_invalid',
          context.entry,
          `${BINDING_NAME[binding]} interface ${showUrl(candidate.url)} is refused: ${problem}`,
        );
      }
    }
    return endpointOf(chosen, binding);
  }
  throw new CardTrustError(
    'card_invalid',
    context.entry,
    `the card lists no interface Airlock calls (JSON-RPC 1.0 or 0.3, HTTP+JSON 1.0); it offers ${offered(card)}`,
  );
}

/** The bindings and versions a card lists, for the refusal: `gRPC 1.0, HTTP+JSON 0.3`, or `none`. */
function offered(card: AgentCard): string {
  const kinds = new Set(card.interfaces.map((i) => `${BINDING_NAME[i.protocolBinding]} ${i.protocolVersion}`));
  return kinds.size === 0 ? 'none Airlock can read' : [...kinds].sort().join(', ');
}

function endpointOf(chosen: AgentInterface, binding: CalledBinding): ChosenEndpoint {
  const endpoint: ChosenEndpoint = { url: chosen.url, version: chosen.protocolVersion, binding };
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
