/**
 * The configuration as the loader hands it out (`AirlockConfig` and its parts): what the rest
 * of Airlock reads, as opposed to the file's raw shape (`schema.ts`).
 *
 * @example
 * ```ts
 * import type { AirlockConfig } from './airlock-config.js';
 * function port(config: AirlockConfig): number { return config.server.port; }
 * ```
 */
import type { PublicJwk, SigningKey } from '../trust/signing/index.js';
import type { TaskStoreSpec } from '../tasks/stores/index.js';
import type { AgentConfig, AuditConfig, JwtConfig, LimitsConfig, PushSettings, ToolsConfig } from './schema.js';
import type { ResolvedToken } from './tokens.js';
import type { MetricsSettings } from './metrics.js';
import type { TelemetrySettings } from '../telemetry/config.js';

/**
 * A client admitted by the config: its token's digest and the agents it may call.
 *
 * @example
 * ```ts
 * const client: ClientEntry = { id: 'demo', tokenDigest: hashToken(token), agents: new Set(['echo']), tokenOrigin: 'env' };
 * ```
 */
export interface ClientEntry {
  id: string;
  /** SHA-256 of the token. */
  tokenDigest: Buffer;
  agents: ReadonlySet<string>;
  tokenOrigin: ResolvedToken['origin'];
  /** The person who decides this client's guarded actions (`approvals.people` id). */
  owner?: string;
  /** The TLS client certificate that names this client (`clients[].certificate`), normalized. */
  certificate?: ClientCertificate;
}

/**
 * A client's certificate as loaded: the subject as sorted `KEY=value` lines (as
 * `X509Certificate.subject` lists them, sorted), the fingerprint as `AB:CD:…`; both must match.
 *
 * @example
 * ```ts
 * const certificate: ClientCertificate = { subject: 'CN=ci-bot', alone: false, required: true };
 * ```
 */
export interface ClientCertificate {
  subject?: string;
  fingerprint256?: string;
  /** The certificate alone authenticates (no token needed). */
  alone: boolean;
  /** The token is refused without this certificate. */
  required: boolean;
}

/**
 * `server.tls` as loaded: the paths (watched for changes) and the PEM text read at start.
 *
 * @example
 * ```ts
 * const tls: TlsSettings = { certFile: 'tls.crt', keyFile: 'tls.key', cert, key, clientCertificates: 'off' };
 * ```
 */
export interface TlsSettings {
  certFile: string;
  keyFile: string;
  caFile?: string;
  cert: string;
  key: string;
  ca?: string;
  clientCertificates: 'off' | 'request' | 'require';
}

/**
 * A person who signs in to decide guarded actions (`approvals.people`).
 *
 * @example
 * ```ts
 * const person: PersonEntry = { id: 'alice', tokenDigest: hashToken(token) };
 * ```
 */
export interface PersonEntry {
  id: string;
  /** SHA-256 of the person's own token. */
  tokenDigest: Buffer;
  /** Where the token came from (the banner tells the person where to find it, never the token). */
  tokenOrigin?: ClientEntry['tokenOrigin'];
}

/**
 * Human approvals as loaded (`approvals`); absent when the section is not in the config.
 *
 * @example
 * ```ts
 * config.approvals?.ttlMs; // 900000
 * ```
 */
export interface ApprovalsSettings {
  ttlMs: number;
  serviceMaxLevel: 'L1' | 'L2';
  maxPending: number;
  /** Actions and questions awaiting a person for one principal (over all agents). */
  maxPendingPerPrincipal: number;
  console: boolean;
  people: PersonEntry[];
  /** What marks a JWT as a person's own (`approvals.persons`, defaults applied). */
  persons: JwtPersonRule;
}

/**
 * Which JWTs are people (`approvals.persons`): no `act`, the marker scope, and, when listed,
 * one of the allowed clients. `issuer` is `auth.jwt.issuer` (absent without JWT auth).
 *
 * @example
 * ```ts
 * const rule: JwtPersonRule = { requiredScope: 'airlock:person', allowedAzp: ['console-login'] };
 * ```
 */
export interface JwtPersonRule {
  issuer?: string;
  requiredScope: string;
  allowedAzp?: string[];
}

/**
 * A configuration as loaded: validated, defaults applied, secrets resolved, keys read.
 *
 * @example
 * ```ts
 * const config: AirlockConfig = loadConfigFile('airlock.yaml');
 * config.agents.map((agent) => agent.slug);
 * ```
 */
export interface AirlockConfig {
  server: {
    host: string;
    port: number;
    publicUrl?: string;
    basePath: string;
    defaultAgent?: string;
    maxBodyBytes: number;
    allowNonLoopback: boolean;
    /** Plain HTTP beyond loopback accepted (a TLS-terminating proxy in front); absent means off. */
    allowInsecureNetwork?: boolean;
    /** HTTPS, when configured: the certificate files as read at start (watched for changes). */
    tls?: TlsSettings;
    /** IPs or CIDRs, each checked to parse at load. */
    trustedProxies: string[];
    /** Origins admitted on the A2A routes, normalized as browsers send them (`http://localhost:3000`). */
    allowedOrigins: string[];
    apiKeyHeader: boolean;
    publicCard: boolean;
    rest: boolean;
    /** The A2A HTTP+JSON binding beside JSON-RPC; absent means on (the schema's default). */
    httpJson?: boolean;
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
    /** On SIGTERM, how long running turns may take to finish before they are failed. */
    drainSeconds: number;
    /** This gateway's id in relayed calls' hop chains; absent: the process's own (random). */
    instanceId?: string;
  };
  /** Retention defaults applied; `DATABASE_URL` and `--data` are weighed at serve time (resolveTaskStoreSpec). */
  /** `leaseSeconds`: only a `postgres` section may set it (see DEFAULT_LEASE_SECONDS). */
  store: TaskStoreSpec & { maxTasks: number; taskTtlMinutes: number; leaseSeconds?: number };
  /** Processes serving this config; above 1 a shared store is required. */
  replicas: number;
  redis?: { url: string };
  limits: LimitsConfig;
  /** JWT bearer verification, when configured; its key material is read at load. */
  jwt?: JwtSettings;
  /**
   * Values never to leave in a reply (a backend's own credentials, say). Client tokens are not
   * listed: Airlock keeps only their digests and no backend ever sees one.
   */
  scrubSecrets: string[];
  audit: AuditConfig;
  /** The outbound registry that `a2a` backends relay to; required when one is configured. */
  upstreams?: { registry: string; pins: string };
  /** MCP tool servers and budgets (`tools`); absent when the section is not in the config. */
  tools?: ToolsConfig;
  /** Card signing, when configured: its keys are read and checked at load. */
  signing?: SigningSettings;
  /** Human approvals of guarded actions, when configured. */
  approvals?: ApprovalsSettings;
  /** Push notifications, defaults applied (`enabled: false` when the section is absent). */
  push: PushSettings;
  /** Prometheus metrics (`metrics`), when the section is present: the token only as its digest. */
  metrics?: MetricsSettings;
  /** Trace export (`telemetry`), when the section is present; header values stay in the environment. */
  telemetry?: TelemetrySettings;
  agents: AgentConfig[];
  clients: ClientEntry[];
}

/**
 * Where JWT verification keys come from: a JSON Web Key Set (from `jwksFile`), a PEM SPKI public
 * key (from `publicKeyFile`), or a JWKS fetched from `jwksUrl` at start and every
 * `refreshSeconds` through the guarded outbound client.
 *
 * @example
 * ```ts
 * const keys: JwtKeys = { kind: 'url', url: 'https://idp.example/jwks.json', refreshSeconds: 600, privateNetwork: false };
 * ```
 */
export type JwtKeys =
  | { kind: 'jwks'; jwks: { keys: Record<string, unknown>[] } }
  | { kind: 'pem'; pem: string }
  | { kind: 'url'; url: string; refreshSeconds: number; privateNetwork: boolean };

/**
 * JWT verification as loaded: the config's settings with the key source resolved.
 *
 * @example
 * ```ts
 * config.jwt?.keys.kind; // 'jwks' | 'pem' | 'url'
 * ```
 */
export interface JwtSettings extends Omit<
  JwtConfig,
  'jwksFile' | 'publicKeyFile' | 'jwksUrl' | 'jwksRefreshSeconds' | 'jwksPrivateNetwork'
> {
  keys: JwtKeys;
}

/**
 * Card signing as loaded: the private keys (each signs every served card, in this order), the
 * JWK Set `/.well-known/jwks.json` serves (public keys only, holding every signing key), and
 * the `jku` put in each signature header, if any.
 *
 * @example
 * ```ts
 * const { keys, jwks, jku } = config.signing!;
 * signCard(wireCard, keys, { ...(jku !== undefined && { jku }) });
 * ```
 */
export interface SigningSettings {
  keys: SigningKey[];
  jwks: { keys: PublicJwk[] };
  jku?: string;
}

/**
 * Default for `auth.jwt.jwksRefreshSeconds`.
 *
 * @example
 * ```ts
 * settings.refreshSeconds ?? DEFAULT_JWKS_REFRESH_SECONDS; // 600
 * ```
 */
export const DEFAULT_JWKS_REFRESH_SECONDS = 600;

/**
 * Default for `store.leaseSeconds`: with several replicas, a running turn's lease (and its
 * in-flight slot) lapses this long after its replica stopped renewing it.
 *
 * @example
 * ```ts
 * const ttlMs = (config.store.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000; // 30 000
 * ```
 */
export const DEFAULT_LEASE_SECONDS = 30;
