/**
 * A real OAuth 2.0 authorization server on loopback for the outbound auth tests: `oidc-provider`
 * configured for the client credentials grant (JWT access tokens through resource indicators)
 * with `client_secret_basic` and `private_key_jwt` clients, plus RFC 8693 token exchange as a
 * registered grant type (the subject token is verified against the test's user issuer key; the
 * issued token keeps the subject and records the client as the actor, nesting any earlier `act`).
 * Every issued access token is kept in `issued`, so tests can scan outputs for them. Beside it,
 * the resource server (`startPeer`): an `@a2a-js/sdk` server behind a middleware that verifies
 * each bearer JWT against the authorization server's keys; and fake token endpoints
 * (`startFakeEndpoint`) that redirect or answer too much.
 *
 * @example
 * ```ts
 * const as = await startAuthServer({ resource: peer.base });
 * as.tokenEndpoint; // 'http://127.0.0.1:PORT/token'
 * await as.close();
 * ```
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Role, type Part } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { sdkAgentCard } from './sdk-card.js';

/** The little of oidc-provider's API used here (the package ships no types). */
interface KoaContextWithOIDC {
  status: number;
  body: unknown;
  oidc: { params?: Record<string, unknown>; client?: { clientId: string } };
}
interface OidcProvider {
  on(event: 'grant.success', listener: (ctx: KoaContextWithOIDC) => void): void;
  registerGrantType(name: string, handler: (ctx: KoaContextWithOIDC) => Promise<void>, params: string[]): void;
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
}
type ProviderClass = new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;

/** Loaded by name: a static import of the untyped package would fail the typecheck. */
async function loadProvider(): Promise<ProviderClass> {
  const name = 'oidc-provider';
  const loaded = (await import(name)) as { default: ProviderClass };
  return loaded.default;
}

/** RFC 8693's grant type. */
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 7523's authorization grant. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const CLIENT_ID = 'airlock';
export const CLIENT_SECRET = 'client-secret-0123456789abcdef';
export const JWT_CLIENT_ID = 'airlock-jwt';

export interface AuthServer {
  issuer: string;
  tokenEndpoint: string;
  /** The AS's public keys (what a resource server verifies access tokens with). */
  jwks: { keys: JWK[] };
  /** The private JWK of the `private_key_jwt` client (what goes into AIRLOCK_SECRET_*). */
  clientAssertionJwk: JWK;
  /** The private JWK a JWT bearer grant's assertion must be signed with (issuer: the client id). */
  grantAssertionJwk: JWK;
  /** Every access token issued, in order. */
  issued: string[];
  /** Grant types of the successful token requests, in order. */
  grants: string[];
  /** Access token lifetime in seconds, for tokens issued from now on. */
  setTtl(seconds: number): void;
  /** A user's token from the inbound issuer (the subject of a token exchange). */
  userToken(sub: string, extra?: JWTPayload): Promise<string>;
  /** The inbound issuer of `userToken` and its public keys (what a gateway verifies callers with). */
  userIssuer: string;
  userJwks: { keys: JWK[] };
  close(): Promise<void>;
}

export async function startAuthServer(options: { resource: string; ttlS?: number }): Promise<AuthServer> {
  const signing = await generateKeyPair('ES256', { extractable: true });
  const signingJwk: JWK = { ...(await exportJWK(signing.privateKey)), kid: 'as-1', alg: 'ES256', use: 'sig' };
  const publicJwk: JWK = { ...(await exportJWK(signing.publicKey)), kid: 'as-1', alg: 'ES256', use: 'sig' };
  const client = await generateKeyPair('ES256', { extractable: true });
  const clientAssertionJwk: JWK = { ...(await exportJWK(client.privateKey)), kid: 'c-1', alg: 'ES256' };
  const clientPublic: JWK = { ...(await exportJWK(client.publicKey)), kid: 'c-1', alg: 'ES256' };
  const grant = await generateKeyPair('ES256', { extractable: true });
  const grantAssertionJwk: JWK = { ...(await exportJWK(grant.privateKey)), kid: 'g-1', alg: 'ES256' };
  const grantKeys = createLocalJWKSet({ keys: [{ ...(await exportJWK(grant.publicKey)), kid: 'g-1', alg: 'ES256' }] });
  const user = await generateKeyPair('ES256');
  const userIssuer = 'https://users.test';
  let ttl = options.ttlS ?? 300;
  const issued: string[] = [];
  const grants: string[] = [];

  const server: Server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const grantTypes = ['client_credentials', TOKEN_EXCHANGE, JWT_BEARER];
  const Provider = await loadProvider();
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: grantTypes,
        redirect_uris: [],
        response_types: [],
        scope: 'a2a.send a2a.read',
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'ES256',
      },
      {
        client_id: JWT_CLIENT_ID,
        grant_types: grantTypes,
        redirect_uris: [],
        response_types: [],
        scope: 'a2a.send a2a.read',
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: 'ES256',
        id_token_signed_response_alg: 'ES256',
        jwks: { keys: [clientPublic] },
      },
    ],
    jwks: { keys: [signingJwk] },
    scopes: ['a2a.send', 'a2a.read'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'a2a.send a2a.read',
          audience: options.resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: ttl,
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
  });
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    const body = ctx.body as { access_token?: string } | undefined;
    if (typeof body?.access_token === 'string') issued.push(body.access_token);
    grants.push(String(ctx.oidc.params?.grant_type));
  });

  const userPublic: JWK = { ...(await exportJWK(user.publicKey)), alg: 'ES256', kid: 'u-1', use: 'sig' };
  const userKeys = createLocalJWKSet({ keys: [userPublic] });
  const privateKey = signing.privateKey;
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx: KoaContextWithOIDC) => {
      const params = ctx.oidc.params as Record<string, string | undefined>;
      let subject: JWTPayload;
      try {
        ({ payload: subject } = await jwtVerify(params.subject_token ?? '', userKeys, { issuer: userIssuer }));
      } catch {
        ctx.status = 400;
        ctx.body = { error: 'invalid_grant', error_description: 'subject_token does not verify' };
        return;
      }
      const clientId = ctx.oidc.client!.clientId;
      const audience = params.resource ?? params.audience ?? options.resource;
      const accessToken = await new SignJWT({
        scope: params.scope,
        client_id: clientId,
        // RFC 8693 §4.1: the acting party, with any earlier chain nested inside.
        act: { sub: clientId, ...(subject.act !== undefined && { act: subject.act }) },
      })
        .setProtectedHeader({ alg: 'ES256', kid: 'as-1', typ: 'at+jwt' })
        .setIssuer(issuer)
        .setSubject(String(subject.sub))
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime(`${ttl}s`)
        .sign(privateKey);
      ctx.body = {
        access_token: accessToken,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: ttl,
      };
    },
    [
      'subject_token',
      'subject_token_type',
      'actor_token',
      'actor_token_type',
      'requested_token_type',
      'audience',
      'resource',
      'scope',
    ],
  );

  provider.registerGrantType(
    JWT_BEARER,
    async (ctx: KoaContextWithOIDC) => {
      const params = ctx.oidc.params as Record<string, string | undefined>;
      const clientId = ctx.oidc.client!.clientId;
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(params.assertion ?? '', grantKeys, {
          issuer: clientId,
          audience: `${issuer}/token`,
          maxTokenAge: '2m',
        }));
      } catch {
        ctx.status = 400;
        ctx.body = { error: 'invalid_grant', error_description: 'assertion does not verify' };
        return;
      }
      const accessToken = await new SignJWT({ scope: params.scope, client_id: clientId })
        .setProtectedHeader({ alg: 'ES256', kid: 'as-1', typ: 'at+jwt' })
        .setIssuer(issuer)
        .setSubject(String(claims.sub))
        .setAudience(params.resource ?? params.audience ?? options.resource)
        .setIssuedAt()
        .setExpirationTime(`${ttl}s`)
        .sign(privateKey);
      ctx.body = { access_token: accessToken, token_type: 'Bearer', expires_in: ttl };
    },
    ['assertion', 'audience', 'resource', 'scope'],
  );

  server.on('request', provider.callback());
  return {
    issuer,
    tokenEndpoint: `${issuer}/token`,
    jwks: { keys: [publicJwk] },
    clientAssertionJwk,
    grantAssertionJwk,
    issued,
    grants,
    setTtl: (seconds) => {
      ttl = seconds;
    },
    userIssuer,
    userJwks: { keys: [userPublic] },
    userToken: (sub, extra = {}) =>
      new SignJWT(extra)
        .setProtectedHeader({ alg: 'ES256', kid: 'u-1' })
        .setIssuer(userIssuer)
        .setSubject(sub)
        .setAudience('airlock')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(user.privateKey),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// The resource server: an @a2a-js/sdk server behind a JWT check, and fake token endpoints

const RPC_PATH = '/a2a/jsonrpc';

function textPart(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** Echoes the text; `leak` answers with the bearer token it was called with (to be redacted). */
class EchoExecutor implements AgentExecutor {
  lastToken = '';
  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = context;
    let text = '';
    for (const part of userMessage.parts) if (part.content?.$case === 'text') text += part.content.value;
    const answer = text === 'leak' ? `your token is ${this.lastToken}` : `echo: ${text}`;
    bus.publish(
      AgentEvent.message({
        messageId: randomUUID(),
        contextId,
        taskId,
        role: Role.ROLE_AGENT,
        parts: [textPart(answer)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      }),
    );
  };
  cancelTask = async (): Promise<void> => undefined;
}

export interface Peer {
  base: string;
  /** Verified claims of each accepted call. */
  calls: JWTPayload[];
  /** Calls refused with 401 (no token, a token that does not verify, or forced). */
  refused: number;
  /** Refuse this many of the next calls with 401, whatever their token. */
  force401: number;
  /** The bearer token of the last accepted call. */
  lastToken(): string;
  /** Served raw at `/cards/custom.json` (404 while unset): a card a test changes between fetches. */
  customCard: unknown;
  /** Its cards' OAuth scheme names the authorization server's token endpoint (`{issuer}/token`). */
  setKeys(jwks: AuthServer['jwks'], issuer: string): void;
  close(): Promise<void>;
}

/**
 * A v1.0 card (raw JSON, as a remote publishes it) with the given security requirements and an
 * `oauth` scheme whose client credentials flow names `tokenUrl` (or the given schemes instead).
 */
export function peerCardJson(
  base: string,
  requirements: Record<string, string[]>[],
  tokenUrl: string,
  schemes?: Record<string, unknown>,
): Record<string, unknown> {
  return {
    name: 'OAuth peer',
    description: 'Verifies JWTs.',
    version: '1.0.0',
    supportedInterfaces: [
      { url: `${base}${RPC_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    ],
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    // Kept and pinned; an entry with from_card checks its token URL's origin.
    securitySchemes: schemes ?? {
      oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl, scopes: { 'a2a.send': '' } } } } },
    },
    securityRequirements: requirements.map((alternative) => ({
      schemes: Object.fromEntries(Object.entries(alternative).map(([name, list]) => [name, { list }])),
    })),
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echo.', tags: ['echo'] }],
  };
}

export async function startPeer(): Promise<Peer> {
  const app = express();
  const executor = new EchoExecutor();
  let keys: ReturnType<typeof createLocalJWKSet> | undefined;
  let issuer = '';
  const server: Server = await new Promise((ready) => {
    const listening = app.listen(0, '127.0.0.1', () => ready(listening));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const peer: Peer = {
    base,
    calls: [],
    refused: 0,
    force401: 0,
    lastToken: () => executor.lastToken,
    customCard: undefined,
    setKeys(jwks, iss) {
      keys = createLocalJWKSet(jwks);
      issuer = iss;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  const cardJson = (requirements: Record<string, string[]>[]) => peerCardJson(base, requirements, `${issuer}/token`);
  app.get('/cards/open.json', (_req, res) => res.json(cardJson([])));
  app.get('/cards/oauth.json', (_req, res) => res.json(cardJson([{ oauth: ['a2a.send'] }])));
  app.get('/cards/mtls.json', (_req, res) => res.json(cardJson([{ mtls: [] }])));
  app.get('/cards/custom.json', (_req, res) =>
    peer.customCard === undefined ? res.status(404).end() : res.json(peer.customCard),
  );
  // The resource server's check: a JWT from the authorization server, for this audience, unexpired.
  app.use(RPC_PATH, (req, res, next) => {
    const header = req.get('authorization') ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    const refuse = () => {
      peer.refused += 1;
      res.status(401).json({ error: 'invalid_token' });
    };
    if (peer.force401 > 0) {
      peer.force401 -= 1;
      return refuse();
    }
    if (keys === undefined) return refuse();
    jwtVerify(token, keys, { issuer, audience: `${base}/` }).then(
      ({ payload }) => {
        peer.calls.push(payload);
        executor.lastToken = token;
        next();
      },
      () => refuse(),
    );
  });
  const sdkCard = sdkAgentCard({
    name: 'OAuth peer',
    description: 'Verifies JWTs.',
    url: `${base}${RPC_PATH}`,
    streaming: false,
  });
  const handler = new DefaultRequestHandler(sdkCard, new InMemoryTaskStore(), executor);
  app.use(RPC_PATH, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return peer;
}

/** A loopback "token endpoint" that answers with `answer` (a redirect, an oversized body). */
export async function startFakeEndpoint(
  answer: (res: ServerResponse) => void,
): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits += 1;
    req.resume();
    answer(res);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`,
    hits: () => hits,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
