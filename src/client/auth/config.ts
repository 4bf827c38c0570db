/**
 * The registry's OAuth 2.0 auth kinds: the validated, secret-holding form an entry carries
 * (`OAuthSettings`; the schema is ./schema.ts). Secrets (client secret,
 * client assertion key, configured subject and actor tokens) come from `AIRLOCK_SECRET_*`
 * variables, are read at load, and sit in private fields: no printed form of an entry shows them.
 *
 * @example
 * ```yaml
 * auth:
 *   oauth2_client_credentials:
 *     token_endpoint: https://idp.example.com/oauth2/token
 *     client_id: airlock
 *     client_secret_env: AIRLOCK_SECRET_TRAVEL_CLIENT
 *     scopes: [a2a.send]
 *     audience: https://travel.example.com
 * ```
 */
import { inspect } from 'node:util';
import { MIN_SECRET_LENGTH } from '../../content/redact.js';
import { collectProblems, RegistryError } from '../registry/error.js';
import { checkHosts, checkUrl, type NetworkSettings } from '../registry/network.js';

/**
 * The validated `auth` mapping as the schema gives it.
 *
 * @example
 * ```ts
 * const raw: RawAuth = { bearer_env: 'AIRLOCK_SECRET_TRAVEL', from_card: false };
 * ```
 */
export type RawAuth = {
  bearer_env?: string;
  oauth2_client_credentials?: RawClient;
  token_exchange?: RawClient & { subject_token_env?: string; actor_token_env?: string };
  jwt_bearer?: RawClient & { assertion_key_env: string; assertion_subject: string; assertion_issuer?: string };
  from_card: boolean;
  card_scheme?: string;
};

type RawClient = {
  token_endpoint: string;
  client_id: string;
  client_secret_env?: string;
  client_assertion_key_env?: string;
  scopes: string[];
  audience?: string;
  resource?: string;
};

/**
 * A secret from an `AIRLOCK_SECRET_*` variable: the name is safe to show, the value is not.
 *
 * @example
 * ```ts
 * String(secret); // '[secret from AIRLOCK_SECRET_TRAVEL_CLIENT]'
 * ```
 */
export class EnvSecret {
  readonly env: string;
  readonly #value: string;

  constructor(env: string, value: string) {
    this.env = env;
    this.#value = value;
  }

  /** The value, for the token request or for redaction; never for output. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return `[secret from ${this.env}]`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * The OAuth grant kinds an entry may use.
 *
 * @example
 * ```ts
 * const kind: OAuthKind = 'token_exchange';
 * ```
 */
export type OAuthKind = 'oauth2_client_credentials' | 'token_exchange' | 'jwt_bearer';

/**
 * An entry's OAuth settings, validated; secrets held as {@link EnvSecret}.
 *
 * @example
 * ```ts
 * entry.oauth?.tokenEndpoint; // 'https://idp.example.com/oauth2/token'
 * ```
 */
export interface OAuthSettings {
  readonly kind: OAuthKind;
  readonly tokenEndpoint: string;
  readonly clientId: string;
  readonly clientSecret?: EnvSecret;
  /** A private JWK for private_key_jwt client authentication. */
  readonly assertionKey?: EnvSecret;
  readonly scopes: readonly string[];
  readonly audience?: string;
  readonly resource?: string;
  readonly subjectToken?: EnvSecret;
  readonly actorToken?: EnvSecret;
  /** `jwt_bearer`: the grant assertion's signing key (a private JWK), subject and issuer. */
  readonly assertion?: { readonly key: EnvSecret; readonly subject: string; readonly issuer: string };
  /** Read the card's requirements (`from_card`), for the scheme named `cardScheme`. */
  readonly fromCard: boolean;
  readonly cardScheme?: string;
}

/**
 * The OAuth settings of an entry's `auth`, or undefined for `bearer_env` (or none). Checks: one
 * kind only, exactly one client authentication, the token endpoint's URL and literal address
 * with the registry's own rules, the secrets present and usable, `card_scheme` with
 * `from_card`. Every problem is reported at once.
 *
 * @example
 * ```ts
 * const oauth = buildOAuth(raw.auth, 'agents[0] "travel"', env, network, raw.private_network);
 * ```
 * @throws RegistryError naming the entry and key of each problem
 */
export function buildOAuth(
  raw: RawAuth,
  label: string,
  env: NodeJS.ProcessEnv,
  network: NetworkSettings | undefined,
  privateNetwork: boolean,
): OAuthSettings | undefined {
  const kinds = (['bearer_env', 'oauth2_client_credentials', 'token_exchange', 'jwt_bearer'] as const).filter(
    (key) => raw[key] !== undefined,
  );
  const problems: RegistryError[] = [];
  if (kinds.length !== 1) {
    problems.push(
      new RegistryError(
        label,
        'auth',
        'must name exactly one of bearer_env, oauth2_client_credentials, token_exchange, jwt_bearer',
      ),
    );
  }
  if (raw.from_card && raw.card_scheme === undefined) {
    problems.push(
      new RegistryError(
        label,
        'auth.card_scheme',
        "is required with from_card: the card's name of the scheme this entry supplies",
      ),
    );
  }
  if (raw.card_scheme !== undefined && !raw.from_card) {
    problems.push(new RegistryError(label, 'auth.card_scheme', 'needs from_card: true'));
  }
  const kind = kinds[0];
  if (kind === undefined || kind === 'bearer_env') {
    if (kind === 'bearer_env' && raw.from_card) {
      problems.push(
        new RegistryError(
          label,
          'auth.from_card',
          'needs an OAuth kind (oauth2_client_credentials, token_exchange or jwt_bearer)',
        ),
      );
    }
    if (problems.length > 0) throw RegistryError.all(problems);
    return undefined;
  }
  const client = raw[kind]!;
  const at = (key: string) => `auth.${kind}.${key}`;
  // Each check's RegistryError is kept for the report and the next check runs.
  const check = collectProblems(problems);
  const tokenUrl = check(() => checkUrl(client.token_endpoint, label, at('token_endpoint')));
  if (tokenUrl !== undefined && network !== undefined) {
    check(() => {
      try {
        checkHosts([tokenUrl], privateNetwork, label, network);
      } catch (error) {
        if (!(error instanceof RegistryError)) throw error;
        // checkHosts names card_url; this is the token endpoint.
        throw RegistryError.all(
          error.problems.map(
            (p) => new RegistryError(label, p.key === 'card_url' ? at('token_endpoint') : p.key, p.problem),
          ),
        );
      }
    });
  }
  if (client.resource !== undefined) check(() => checkUrl(client.resource!, label, at('resource')));
  const secretCount =
    Number(client.client_secret_env !== undefined) + Number(client.client_assertion_key_env !== undefined);
  if (secretCount !== 1) {
    problems.push(
      new RegistryError(
        label,
        at('client_secret_env'),
        'name exactly one of client_secret_env, client_assertion_key_env',
      ),
    );
  }
  const read = (name: string | undefined, key: string) =>
    name === undefined ? undefined : check(() => readSecret(name, label, at(key), env));
  const clientSecret = read(client.client_secret_env, 'client_secret_env');
  const assertionKey = read(client.client_assertion_key_env, 'client_assertion_key_env');
  if (assertionKey !== undefined) check(() => checkPrivateJwk(assertionKey, label, at('client_assertion_key_env')));
  const exchange = kind === 'token_exchange' ? raw.token_exchange! : undefined;
  const subjectToken = read(exchange?.subject_token_env, 'subject_token_env');
  const actorToken = read(exchange?.actor_token_env, 'actor_token_env');
  const bearer = kind === 'jwt_bearer' ? raw.jwt_bearer! : undefined;
  const grantKey = read(bearer?.assertion_key_env, 'assertion_key_env');
  if (grantKey !== undefined) check(() => checkPrivateJwk(grantKey, label, at('assertion_key_env')));
  if (problems.length > 0 || tokenUrl === undefined) throw RegistryError.all(problems);
  return Object.freeze({
    kind,
    tokenEndpoint: tokenUrl.href,
    clientId: client.client_id,
    ...(clientSecret !== undefined && { clientSecret }),
    ...(assertionKey !== undefined && { assertionKey }),
    scopes: Object.freeze([...client.scopes]),
    ...(client.audience !== undefined && { audience: client.audience }),
    ...(client.resource !== undefined && { resource: client.resource }),
    ...(subjectToken !== undefined && { subjectToken }),
    ...(actorToken !== undefined && { actorToken }),
    ...(bearer !== undefined &&
      grantKey !== undefined && {
        assertion: Object.freeze({
          key: grantKey,
          subject: bearer.assertion_subject,
          issuer: bearer.assertion_issuer ?? client.client_id,
        }),
      }),
    fromCard: raw.from_card,
    ...(raw.card_scheme !== undefined && { cardScheme: raw.card_scheme }),
  });
}

const VALUE_PATTERN = /^[\x21-\x7e]{1,16384}$/;

function readSecret(name: string, label: string, key: string, env: NodeJS.ProcessEnv): EnvSecret {
  const value = env[name];
  if (value === undefined || value.length === 0) {
    throw new RegistryError(label, key, `environment variable ${name} is not set`);
  }
  // The value is never echoed: only what is wrong with it.
  if (!VALUE_PATTERN.test(value)) {
    throw new RegistryError(
      label,
      key,
      `environment variable ${name} must hold printable ASCII without spaces or line breaks`,
    );
  }
  if (value.length < MIN_SECRET_LENGTH) {
    throw new RegistryError(
      label,
      key,
      `environment variable ${name} must hold at least ${MIN_SECRET_LENGTH} characters, so that an echo of it can be redacted`,
    );
  }
  return new EnvSecret(name, value);
}

function checkPrivateJwk(secret: EnvSecret, label: string, key: string): void {
  let jwk: unknown;
  try {
    jwk = JSON.parse(secret.reveal());
  } catch {
    throw new RegistryError(label, key, `environment variable ${secret.env} must hold a private JWK as JSON`);
  }
  const record = jwk !== null && typeof jwk === 'object' ? (jwk as Record<string, unknown>) : {};
  if (typeof record.d !== 'string' || !['EC', 'OKP', 'RSA'].includes(String(record.kty))) {
    throw new RegistryError(
      label,
      key,
      `environment variable ${secret.env} must hold a private EC, OKP or RSA JWK (with "d")`,
    );
  }
}
