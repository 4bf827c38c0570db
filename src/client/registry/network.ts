/**
 * The registry's network side: the environment's private-network allowlist and egress proxy
 * (read by the transport's own parser), and the load-time checks of an entry's URLs and
 * literal addresses against the transport's own URL reading and address policy (`src/net`).
 *
 * @example
 * ```ts
 * const network = readNetwork(process.env);
 * const cardUrl = checkUrl(raw.card_url, label, 'card_url');
 * checkHosts([cardUrl], raw.private_network, label, network);
 * ```
 */
import { inspect } from 'node:util';
import ipaddr from 'ipaddr.js';
import { classifyAddress, isAllowed, isLoopbackHost } from '../../net/address.js';
import {
  maskCredentials,
  parseEgressProxy,
  parseEnvSettings,
  type EgressProxy as ParsedProxy,
} from '../../net/settings.js';
import { readOutboundUrl } from '../../net/url-policy.js';
import { RegistryError, oneLine } from './error.js';

/**
 * The operator's egress proxy (`AIRLOCK_EGRESS_PROXY`, `http://host:port`), as the guarded
 * transport parses it (`src/net`). Proxy credentials, when the URL carries them, stay in a
 * private field; `url` and every printed form omit them.
 *
 * @example
 * ```ts
 * registry.network.egressProxy?.url; // 'http://proxy.internal:3128'
 * ```
 */
export class RegistryEgressProxy {
  /** `http://host:port`, without credentials. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly #authorization: string | undefined;

  constructor(parsed: ParsedProxy) {
    this.host = parsed.host;
    this.port = parsed.port;
    this.url = parsed.display.replace('//***@', '//');
    this.#authorization = parsed.authorization;
  }

  /** The `Proxy-Authorization` value for CONNECT, when the URL named credentials. */
  proxyAuthorization(): string | undefined {
    return this.#authorization;
  }

  toString(): string {
    return this.url;
  }

  toJSON(): string {
    return this.url;
  }

  [inspect.custom](): string {
    return `RegistryEgressProxy(${this.url})`;
  }
}

/**
 * Network settings shared by every entry, from the environment, read by `src/net`'s
 * `parseEnvSettings` (the same reading the guarded transport gets).
 *
 * @example
 * ```ts
 * registry.network.privateAllow; // ['10.20.0.0/16', 'w.corp']
 * ```
 */
export interface NetworkSettings {
  /** `AIRLOCK_PRIVATE_ALLOW`: hosts, IPs and CIDRs a `private_network` entry may reach (as written). */
  readonly privateAllow: readonly string[];
  /** `AIRLOCK_EGRESS_PROXY`, parsed. */
  readonly egressProxy?: RegistryEgressProxy;
}

/**
 * A registry URL, read as the transport reads it (`readOutboundUrl`) and held to the registry's
 * load-time rules, in the registry's words: absolute, no white space, no credentials, no
 * fragment, https (or plain http to a loopback host).
 *
 * @example
 * ```ts
 * checkUrl('https://travel.example/.well-known/agent-card.json', 'agents[0] "travel"', 'card_url').href;
 * ```
 * @throws RegistryError
 */
export function checkUrl(text: string, label: string, key: string): URL {
  const facts = readOutboundUrl(text);
  if (facts === undefined) throw new RegistryError(label, key, 'is not an absolute URL');
  const { url } = facts;
  if (/\s/.test(text)) throw new RegistryError(label, key, 'must not contain white space');
  if (facts.hasCredentials) {
    // The URL itself is not echoed: it holds the credentials.
    throw new RegistryError(label, key, 'must not carry credentials (user:password@); use auth.bearer_env');
  }
  if (url.hash !== '') throw new RegistryError(label, key, 'must not have a #fragment');
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:') {
    // The parsed host, as the registry has always judged it; the transport judges the written
    // spelling again at request time (src/net/url-policy.ts).
    if (isLoopbackHost(url.hostname)) return url;
    throw new RegistryError(label, key, 'must be https (plain http is allowed only to a loopback host)');
  }
  throw new RegistryError(label, key, 'must be an https URL');
}

/** `[::1]` → `::1`: URL keeps the brackets on IPv6 hostnames. */
function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** The literal address a hostname spells, for messages (an IPv4-mapped address shown as IPv4). */
function literalAddress(hostname: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const host = bareHost(hostname);
  // URL has already normalised IPv4 forms (127.1, 0x7f.1, 2130706433) to dotted quads.
  if (!ipaddr.isValid(host)) return undefined;
  return ipaddr.process(host);
}

/**
 * Startup check of literal addresses, with the transport's own address policy (`src/net`):
 * host names are checked by the transport at connect time, against what they resolve to then;
 * a literal can be judged now, so a mistake is reported before the first call rather than at it.
 *
 * @example
 * ```ts
 * checkHosts([cardUrl, rpcUrl], entry.private_network, label, registry.network);
 * ```
 * @throws RegistryError naming `card_url` or `rpc_url`
 */
export function checkHosts(
  urls: readonly (URL | undefined)[],
  privateNetwork: boolean,
  label: string,
  network: NetworkSettings,
): void {
  // Every problem is reported: the two URLs, and the setting, each on its own.
  const problems: RegistryError[] = [];
  if (privateNetwork && network.privateAllow.length === 0) {
    problems.push(
      new RegistryError(
        label,
        'private_network',
        'needs AIRLOCK_PRIVATE_ALLOW to list the hosts or CIDRs it may reach',
      ),
    );
  }
  urls.forEach((url, index) => {
    if (url === undefined) return;
    const key = index === 0 ? 'card_url' : 'rpc_url';
    const address = literalAddress(url.hostname);
    if (address === undefined) return;
    const shown = address.toString();
    const kind = classifyAddress(bareHost(url.hostname));
    switch (kind) {
      case 'loopback':
        return;
      case 'public':
        if (privateNetwork && network.egressProxy !== undefined) {
          problems.push(
            new RegistryError(
              label,
              key,
              `host ${shown} is a public address; a private_network entry reaches only private addresses while AIRLOCK_EGRESS_PROXY is set`,
            ),
          );
        }
        return;
      case 'private':
        if (!privateNetwork) {
          problems.push(
            new RegistryError(
              label,
              key,
              `host ${shown} is a private address; set private_network: true and list it in AIRLOCK_PRIVATE_ALLOW`,
            ),
          );
          return;
        }
        if (!isAllowed(url.hostname, bareHost(url.hostname), network.privateAllow)) {
          problems.push(new RegistryError(label, key, `host ${shown} is not in AIRLOCK_PRIVATE_ALLOW`));
        }
        return;
      default:
        // metadata, link-local, reserved: never reachable, whatever the entry says.
        problems.push(new RegistryError(label, key, `host ${shown} is in a blocked range (${kind})`));
    }
  });
  if (problems.length > 0) throw RegistryError.all(problems);
}

const NETWORK_VARIABLES = ['AIRLOCK_PRIVATE_ALLOW', 'AIRLOCK_EGRESS_PROXY'] as const;

/**
 * AIRLOCK_PRIVATE_ALLOW and AIRLOCK_EGRESS_PROXY, read by the transport's own parser
 * (`parseEnvSettings`), so the registry and the transport can never disagree about them.
 * AIRLOCK_CA_FILE is left to the transport: checking the registry reads no other file.
 *
 * @example
 * ```ts
 * readNetwork({ AIRLOCK_PRIVATE_ALLOW: '10.20.0.0/16' }).privateAllow; // ['10.20.0.0/16']
 * ```
 * @throws RegistryError naming the variable
 */
export function readNetwork(env: NodeJS.ProcessEnv): NetworkSettings {
  const subset: NodeJS.ProcessEnv = {};
  for (const name of NETWORK_VARIABLES) if (env[name] !== undefined) subset[name] = env[name];
  let privateAllow: readonly string[];
  let egressProxy: RegistryEgressProxy | undefined;
  try {
    const settings = parseEnvSettings(subset);
    privateAllow = Object.freeze([...(settings.privateAllow ?? [])]);
    egressProxy =
      settings.egressProxy === undefined
        ? undefined
        : new RegistryEgressProxy(parseEgressProxy(settings.egressProxy, 'AIRLOCK_EGRESS_PROXY'));
  } catch (error) {
    throw networkError(error, subset);
  }
  return Object.freeze({ privateAllow, ...(egressProxy !== undefined && { egressProxy }) });
}

/** The transport's one-line message as a RegistryError, keyed by the variable it names. */
function networkError(error: unknown, env: NodeJS.ProcessEnv): RegistryError {
  const message = error instanceof Error ? error.message : String(error);
  const match = /^(AIRLOCK_[A-Z_]+): (.*)$/s.exec(message);
  const variable = match?.[1] ?? '';
  let problem = match?.[2] ?? message;
  if (variable === 'AIRLOCK_EGRESS_PROXY') {
    // The value is quoted again with every character up to the last `@` hidden, whatever
    // shape it has: a scheme-less `user:password@host` must not be echoed either.
    const why = /" ([^"]*)$/.exec(problem)?.[1] ?? 'is not a valid egress proxy; expected http://host:port';
    const value = (env.AIRLOCK_EGRESS_PROXY ?? '').trim();
    problem = `"${oneLine(maskCredentials(value)).slice(0, 200)}" ${why}`;
  }
  return new RegistryError('', variable, problem);
}
