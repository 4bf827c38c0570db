/**
 * Who may use the gateway, as loaded: the clients (tokens as digests, the agents each may
 * call) and the people of `approvals` who decide guarded actions.
 *
 * @example
 * ```ts
 * const clients = resolveClients(raw, env);
 * const approvals = resolveApprovals(raw, clients, env);
 * ```
 */
import type { ApprovalsSettings, ClientEntry, JwtPersonRule } from './airlock-config.js';
import { ConfigError } from './errors.js';
import type { RawConfig } from './schema.js';
import { hashToken, resolveToken } from './tokens.js';

/**
 * The clients: ids and tokens unique, every listed agent configured, tokens resolved (env, file
 * or generated) and kept as digests only.
 *
 * @example
 * ```ts
 * const clients = resolveClients(raw, process.env);
 * ```
 * @throws ConfigError naming the key
 */
export function resolveClients(raw: RawConfig, env: NodeJS.ProcessEnv): ClientEntry[] {
  const slugs = new Set(raw.agents.map((agent) => agent.slug));
  const ids = new Set<string>();
  const digests = new Map<string, string>();
  return raw.clients.map((client, index) => {
    const key = `clients[${index}]`;
    if (ids.has(client.id)) throw new ConfigError(`${key}.id`, `"${client.id}" is used twice`);
    ids.add(client.id);
    client.agents.forEach((slug, agentIndex) => {
      if (!slugs.has(slug)) throw new ConfigError(`${key}.agents[${agentIndex}]`, `no agent has slug "${slug}"`);
    });
    const token = resolveToken(client.token, env, `${key}.token`);
    const digest = hashToken(token.value);
    const hex = digest.toString('hex');
    const other = digests.get(hex);
    if (other !== undefined) {
      throw new ConfigError(`${key}.token`, `clients "${other}" and "${client.id}" share a token; give each its own`);
    }
    digests.set(hex, client.id);
    return {
      id: client.id,
      tokenDigest: digest,
      agents: new Set(client.agents),
      tokenOrigin: token.origin,
      ...(client.owner !== undefined && { owner: client.owner }),
    };
  });
}

/**
 * The approvals section: people's tokens hashed (each distinct from every client token, so no
 * caller can decide and no person can call), and every client owner a configured person.
 *
 * @example
 * ```ts
 * const approvals = resolveApprovals(raw, clients, process.env); // undefined without the section
 * ```
 */
export function resolveApprovals(
  raw: RawConfig,
  clients: readonly ClientEntry[],
  env: NodeJS.ProcessEnv,
): ApprovalsSettings | undefined {
  const section = raw.approvals;
  if (section === undefined) {
    const owned = raw.clients.findIndex((client) => client.owner !== undefined);
    if (owned !== -1) {
      throw new ConfigError(`clients[${owned}].owner`, 'an owner decides guarded actions: add an approvals section');
    }
    const acting = raw.agents.findIndex((agent) => agent.actions !== undefined && agent.actions.maxLevel >= 'L3');
    if (acting !== -1) {
      throw new ConfigError(
        `agents[${acting}].actions.maxLevel`,
        'acting levels (L3, L4) need a person to approve each action: add an approvals section',
      );
    }
    return undefined;
  }
  const clientDigests = new Set(clients.map((client) => client.tokenDigest.toString('hex')));
  const ids = new Set<string>();
  const digests = new Set<string>();
  const people = section.people.map((person, index) => {
    const key = `approvals.people[${index}]`;
    if (ids.has(person.id)) throw new ConfigError(`${key}.id`, `"${person.id}" is used twice`);
    ids.add(person.id);
    const token = resolveToken(person.token, env, `${key}.token`);
    const digest = hashToken(token.value);
    const hex = digest.toString('hex');
    if (clientDigests.has(hex)) {
      throw new ConfigError(`${key}.token`, `person "${person.id}" uses a client's token; a person needs their own`);
    }
    if (digests.has(hex)) throw new ConfigError(`${key}.token`, `two people share a token; give each their own`);
    digests.add(hex);
    return { id: person.id, tokenDigest: digest, tokenOrigin: token.origin };
  });
  raw.clients.forEach((client, index) => {
    if (client.owner !== undefined && !ids.has(client.owner)) {
      throw new ConfigError(`clients[${index}].owner`, `no person in approvals.people has id "${client.owner}"`);
    }
  });
  return {
    ttlMs: Math.round(section.ttlMinutes * 60_000),
    serviceMaxLevel: section.serviceMaxLevel,
    maxPending: section.maxPending,
    maxPendingPerPrincipal: section.maxPendingPerPrincipal,
    console: section.console,
    people,
    persons: resolvePersons(raw),
  };
}

/** The default marker of a person's JWT (`approvals.persons.requiredScope`). */
const DEFAULT_PERSON_SCOPE = 'airlock:person';

/**
 * `approvals.persons` with its defaults: the issuer is `auth.jwt.issuer` (a different one is
 * refused: only that issuer's tokens are verified), and the marker scope must not also grant an
 * agent (`agentsPrefix` + a slug), or every person could call that agent and vice versa.
 */
function resolvePersons(raw: RawConfig): JwtPersonRule {
  const section = raw.approvals?.persons;
  const jwt = raw.auth?.jwt;
  const requiredScope = section?.requiredScope ?? DEFAULT_PERSON_SCOPE;
  if (section?.issuer !== undefined && section.issuer !== jwt?.issuer) {
    throw new ConfigError(
      'approvals.persons.issuer',
      jwt === undefined
        ? 'JWT people need auth.jwt: add it, or drop approvals.persons.issuer'
        : 'must equal auth.jwt.issuer',
    );
  }
  if (jwt !== undefined) {
    const prefix = jwt.agentsPrefix ?? 'a2a:';
    const granted = raw.agents.find((agent) => `${prefix}${agent.slug}` === requiredScope);
    if (granted !== undefined) {
      throw new ConfigError(
        'approvals.persons.requiredScope',
        `"${requiredScope}" also grants agent "${granted.slug}"; pick a scope outside ${prefix}<slug>`,
      );
    }
  }
  return {
    ...(jwt !== undefined && { issuer: jwt.issuer }),
    requiredScope,
    ...(section?.allowedAzp !== undefined && { allowedAzp: [...section.allowedAzp] }),
  };
}
