/**
 * The OpenAPI 3.0 description of one agent's ask endpoint (`GET {basePath}/{slug}/openapi.json`).
 * It is written for OpenAPI tool importers, which are strict in small ways: one server URL
 * with no variables, one operation with a snake_case `operationId` and a description, JSON in
 * and out, and every schema inline (no `$ref` to resolve). Like the public card, it tells a
 * stranger nothing the card does not: the agent's public name and description, no skills.
 *
 * @example
 * ```ts
 * const doc = buildOpenApiDocument(agent, 'https://gw.example/a2a/travel/ask', { apiKeyHeader: false });
 * doc.paths['/ask']?.post.operationId; // 'ask_travel'
 * ```
 */
import type { AgentConfig } from '../../config/schema.js';
import { securitySchemesFor } from '../auth/index.js';
import { ASK_STATES, MAX_CONTEXT_ID_LENGTH } from './ask.js';

/** The subset of OpenAPI 3.0 schema objects this document uses. */
export interface OpenApiSchema {
  type: 'object' | 'string' | 'integer';
  description?: string;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  additionalProperties?: boolean;
  enum?: string[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  example?: string;
}

export interface OpenApiMediaType {
  schema: OpenApiSchema;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, { description: string; schema: OpenApiSchema }>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  requestBody: { required: boolean; content: Record<string, OpenApiMediaType> };
  responses: Record<string, OpenApiResponse>;
}

export type OpenApiSecurityScheme =
  | { type: 'http'; scheme: 'bearer'; description?: string }
  | { type: 'apiKey'; in: 'header'; name: string; description?: string };

export interface OpenApiDocument {
  openapi: '3.0.3';
  info: { title: string; description: string; version: string };
  servers: [{ url: string }];
  paths: Record<string, { post: OpenApiOperation }>;
  components: { securitySchemes: Record<string, OpenApiSecurityScheme> };
  security: Record<string, string[]>[];
}

const ASK_PATH = '/ask';
const JSON_TYPE = 'application/json';

/**
 * The OpenAPI 3.0.3 document for `agent`'s ask endpoint at `askUrl` (an absolute http(s) URL
 * ending in `/ask`, e.g. from `server.publicUrl`). The server URL is `askUrl` without `/ask`;
 * braces in it are percent-encoded so that no importer reads them as server variables. The
 * security schemes are bearer, and `X-API-Key` as an alternative when `apiKeyHeader` is on,
 * with the names and descriptions the agent card uses. `maxMessageChars`, when given, is
 * published as the message's `maxLength`. Throws on an `askUrl` of any other form (a wiring
 * mistake, not a caller's).
 *
 * @example
 * ```ts
 * const doc = buildOpenApiDocument(agent, 'https://gw.example/a2a/my-agent/ask', { apiKeyHeader: true });
 * doc.servers;                                   // [{ url: 'https://gw.example/a2a/my-agent' }]
 * doc.paths['/ask']?.post.operationId;           // 'ask_my_agent'
 * doc.security;                                  // [{ bearer: [] }, { apiKey: [] }]
 * ```
 */
export function buildOpenApiDocument(
  agent: AgentConfig,
  askUrl: string,
  security: { apiKeyHeader: boolean },
  limits: { maxMessageChars?: number } = {},
): OpenApiDocument {
  const securitySchemes: Record<string, OpenApiSecurityScheme> = { bearer: bearerScheme() };
  if (security.apiKeyHeader) securitySchemes.apiKey = apiKeyScheme();
  return {
    openapi: '3.0.3',
    info: { title: agent.name, description: agent.description, version: agent.version },
    servers: [{ url: serverUrlOf(askUrl) }],
    paths: {
      [ASK_PATH]: {
        post: {
          operationId: operationIdOf(agent.slug),
          summary: `Ask ${agent.name}`,
          description: agent.description,
          requestBody: { required: true, content: { [JSON_TYPE]: { schema: requestSchema(limits.maxMessageChars) } } },
          responses: {
            '200': {
              description: 'The agent’s answer. A state other than completed says why the reply is not an answer.',
              content: { [JSON_TYPE]: { schema: replySchema() } },
            },
            '400': errorResponse('The body is not a valid ask request (see the message).'),
            '401': errorResponse('No valid credentials were sent.'),
            '403': errorResponse('These credentials may not call this agent, or the caller’s address is refused.'),
            '404': errorResponse('No such agent.'),
            '409': errorResponse('The conversation is busy with another request; retry when it is done.'),
            '408': errorResponse('The body did not arrive in time.'),
            '413': errorResponse('The body is too large.'),
            '415': errorResponse('The Content-Type is not JSON.'),
            '429': errorResponse('Too many requests; retry after the time in Retry-After.', true),
            '500': errorResponse('The gateway failed; details are in its log.'),
            '503': errorResponse('The gateway is at capacity; retry after the time in Retry-After.', true),
          },
        },
      },
    },
    components: { securitySchemes },
    security: Object.keys(securitySchemes).map((name) => ({ [name]: [] })),
  };
}

/**
 * The ask operation's id: `ask_` and the agent slug in snake_case (slugs are lowercase
 * already; dashes become underscores).
 *
 * @example
 * ```ts
 * operationIdOf('travel-desk'); // 'ask_travel_desk'
 * ```
 */
export function operationIdOf(slug: string): string {
  return `ask_${slug.replace(/-/g, '_')}`;
}

function serverUrlOf(askUrl: string): string {
  let parsed: URL;
  try {
    parsed = new URL(askUrl);
  } catch {
    throw new Error(`The ask URL must be an absolute URL: ${JSON.stringify(askUrl)}`);
  }
  if ((parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || !askUrl.endsWith(ASK_PATH)) {
    throw new Error(`The ask URL must be an http(s) URL ending in ${ASK_PATH}: ${JSON.stringify(askUrl)}`);
  }
  // OpenAPI reads `{name}` in a server URL as a variable; this URL has none.
  return askUrl.slice(0, -ASK_PATH.length).replace(/\{/g, '%7B').replace(/\}/g, '%7D');
}

/** The same schemes as the card's (`securitySchemesFor`), in OpenAPI's spelling. */
const CARD_SCHEMES = securitySchemesFor({ apiKeyHeader: true });

function bearerScheme(): OpenApiSecurityScheme {
  const scheme: OpenApiSecurityScheme = { type: 'http', scheme: 'bearer' };
  const description = CARD_SCHEMES.bearer?.description;
  if (description !== undefined) scheme.description = description;
  return scheme;
}

function apiKeyScheme(): OpenApiSecurityScheme {
  const card = CARD_SCHEMES.apiKey;
  const scheme: OpenApiSecurityScheme = {
    type: 'apiKey',
    in: 'header',
    name: card?.type === 'apiKey' ? card.name : 'X-API-Key',
  };
  if (card?.description !== undefined) scheme.description = card.description;
  return scheme;
}

function contextIdSchema(description: string): OpenApiSchema {
  return { type: 'string', maxLength: MAX_CONTEXT_ID_LENGTH, pattern: '^[!-~]*$', description };
}

function requestSchema(maxMessageChars: number | undefined): OpenApiSchema {
  const message: OpenApiSchema = { type: 'string', minLength: 1, description: 'What to ask the agent.' };
  if (maxMessageChars !== undefined) message.maxLength = maxMessageChars;
  return {
    type: 'object',
    required: ['message'],
    additionalProperties: false,
    properties: {
      message,
      contextId: contextIdSchema(
        'The contextId of an earlier reply, to continue that conversation. Leave it out (or empty) to start a new one.',
      ),
    },
  };
}

function replySchema(): OpenApiSchema {
  return {
    type: 'object',
    required: ['reply', 'state', 'taskId', 'contextId'],
    properties: {
      reply: {
        type: 'string',
        description: 'The agent’s reply; for input-required, failed or rejected, its question or reason.',
      },
      state: { type: 'string', enum: [...ASK_STATES], description: 'The state the task ended (or paused) in.' },
      taskId: { type: 'string', description: 'The task this ask created; empty when the agent answered directly.' },
      contextId: contextIdSchema('Send it back as contextId to continue the same conversation.'),
    },
  };
}

function errorResponse(description: string, retryAfter = false): OpenApiResponse {
  const response: OpenApiResponse = {
    description,
    content: {
      [JSON_TYPE]: {
        schema: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'status', 'message'],
              properties: {
                code: { type: 'integer', description: 'The HTTP status code.' },
                status: { type: 'string', description: 'A stable name for the error, e.g. NOT_FOUND.' },
                message: { type: 'string', description: 'What went wrong, in one line.' },
              },
            },
          },
        },
      },
    },
  };
  if (retryAfter) {
    response.headers = {
      'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
    };
  }
  return response;
}
