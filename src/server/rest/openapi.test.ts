import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../config/load.js';
import type { AgentConfig } from '../../config/schema.js';
import { securitySchemesFor } from '../auth/index.js';

const BEARER_SCHEME = securitySchemesFor({ apiKeyHeader: false }).bearer as { description: string };
import { ASK_STATES, askError, askErrorResponse, parseAskRequest } from './ask.js';
import { buildOpenApiDocument, operationIdOf } from './openapi.js';

const config = parseConfig(
  `
agents:
  - slug: travel-desk
    name: Travel desk
    description: Plans trips and books them.
    version: 3.2.1
    skills: [{ id: secret-skill, name: Hidden, description: Never in the document, tags: [x], examples: [hidden example] }]
    backend: { type: echo }
    extendedCard: { description: Members only text }
`,
  {},
);
const agent = config.agents[0] as AgentConfig;
const ASK_URL = 'https://gw.example/a2a/travel-desk/ask';

// ---------------------------------------------------------------------------------------------
// Minimal structural checks of an OpenAPI 3.0.3 document: what the spec requires of the
// objects this document uses, and what tool importers insist on. They walk the plain JSON, as
// an importer would.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

function obj(value: Json | undefined, path: string): Obj {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${path} must be an object`);
  return value;
}

function str(value: Json | undefined, path: string): string {
  assert.equal(typeof value, 'string', `${path} must be a string`);
  return value as string;
}

function onlyKeys(value: Obj, allowed: string[], path: string): void {
  for (const key of Object.keys(value)) {
    assert.ok(allowed.includes(key) || key.startsWith('x-'), `${path}: unexpected field ${key}`);
  }
}

const SCHEMA_KEYS = [
  'type',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'enum',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'example',
  'nullable',
];

function checkSchema(value: Json | undefined, path: string): void {
  const schema = obj(value, path);
  onlyKeys(schema, SCHEMA_KEYS, path);
  assert.ok(!('$ref' in schema), `${path}: no $ref (importers need inline schemas)`);
  const type = str(schema.type, `${path}.type`);
  assert.ok(['object', 'string', 'integer', 'number', 'boolean', 'array'].includes(type), `${path}.type`);
  if (type === 'object') {
    const properties = obj(schema.properties, `${path}.properties`);
    for (const [name, property] of Object.entries(properties)) checkSchema(property, `${path}.properties.${name}`);
    if (schema.required !== undefined) {
      assert.ok(Array.isArray(schema.required) && schema.required.length > 0, `${path}.required is a non-empty list`);
      for (const item of schema.required) {
        const name = str(item, `${path}.required[]`);
        assert.ok(name in properties, `${path}: ${name}`);
      }
    }
  } else {
    assert.equal(schema.properties, undefined, `${path}: properties only on objects`);
  }
  if (schema.enum !== undefined) {
    assert.ok(Array.isArray(schema.enum) && schema.enum.length > 0, `${path}.enum`);
    for (const item of schema.enum) assert.equal(typeof item, type === 'string' ? 'string' : 'number');
  }
  if (schema.pattern !== undefined) new RegExp(str(schema.pattern, `${path}.pattern`));
  for (const bound of ['minLength', 'maxLength', 'minimum'])
    if (schema[bound] !== undefined) assert.ok(Number.isInteger(schema[bound]) && (schema[bound] as number) >= 0);
}

function checkJsonContent(value: Json | undefined, path: string): void {
  const content = obj(value, path);
  assert.deepEqual(Object.keys(content), ['application/json'], `${path}: JSON only`);
  const media = obj(content['application/json'], `${path}.application/json`);
  checkSchema(media.schema, `${path}.application/json.schema`);
}

function checkOpenApi(document: unknown): Obj {
  // Plain JSON: no undefined, functions or class instances that JSON.stringify would drop.
  const doc = JSON.parse(JSON.stringify(document)) as Json;
  assert.deepEqual(doc, document, 'the document is plain JSON');
  const root = obj(doc, 'document');
  onlyKeys(root, ['openapi', 'info', 'servers', 'paths', 'components', 'security', 'tags', 'externalDocs'], 'document');
  assert.equal(root.openapi, '3.0.3');

  const info = obj(root.info, 'info');
  str(info.title, 'info.title');
  str(info.version, 'info.version');

  assert.ok(Array.isArray(root.servers) && root.servers.length === 1, 'exactly one server');
  const server = obj(root.servers[0], 'servers[0]');
  onlyKeys(server, ['url', 'description'], 'servers[0]');
  const url = str(server.url, 'servers[0].url');
  assert.ok(!/[{}]/.test(url), 'no server variables');
  assert.match(new URL(url).protocol, /^https?:$/);

  const paths = obj(root.paths, 'paths');
  const operationIds = new Set<string>();
  for (const [path, item] of Object.entries(paths)) {
    assert.match(path, /^\//, 'paths start with /');
    for (const [method, value] of Object.entries(obj(item, path))) {
      assert.ok(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(method), method);
      const operation = obj(value, `${path}.${method}`);
      const id = str(operation.operationId, 'operationId');
      assert.match(id, /^[a-z][a-z0-9_]*$/, 'operationId is snake_case');
      assert.ok(!operationIds.has(id), 'operationIds are unique');
      operationIds.add(id);
      assert.ok(str(operation.description, 'description').length > 0, 'the operation has a description');
      if (operation.requestBody !== undefined) {
        const body = obj(operation.requestBody, 'requestBody');
        checkJsonContent(body.content, `${path}.${method}.requestBody.content`);
      }
      const responses = obj(operation.responses, 'responses');
      assert.ok(Object.keys(responses).length > 0);
      for (const [status, response] of Object.entries(responses)) {
        assert.match(status, /^(?:[1-5]\d\d|default)$/, 'responses are keyed by status');
        const r = obj(response, `responses.${status}`);
        str(r.description, `responses.${status}.description`);
        if (r.content !== undefined) checkJsonContent(r.content, `responses.${status}.content`);
        for (const [name, header] of Object.entries(r.headers === undefined ? {} : obj(r.headers, 'headers'))) {
          checkSchema(obj(header, name).schema, `responses.${status}.headers.${name}.schema`);
        }
      }
    }
  }

  const schemes = obj(obj(root.components, 'components').securitySchemes, 'securitySchemes');
  for (const [name, value] of Object.entries(schemes)) {
    const scheme = obj(value, name);
    if (scheme.type === 'http') assert.equal(typeof scheme.scheme, 'string');
    else if (scheme.type === 'apiKey') {
      assert.ok(['header', 'query', 'cookie'].includes(str(scheme.in, `${name}.in`)));
      str(scheme.name, `${name}.name`);
    } else assert.fail(`${name}: unexpected scheme type ${JSON.stringify(scheme.type)}`);
  }
  assert.ok(Array.isArray(root.security) && root.security.length > 0, 'a top-level security requirement');
  for (const requirement of root.security) {
    for (const [name, scopes] of Object.entries(obj(requirement, 'security[]'))) {
      assert.ok(name in schemes, `security names a declared scheme: ${name}`);
      assert.deepEqual(scopes, []);
    }
  }
  return root;
}

describe('buildOpenApiDocument', () => {
  const doc = buildOpenApiDocument(agent, ASK_URL, { apiKeyHeader: false });

  it('is a structurally valid OpenAPI 3.0.3 document, with and without the API-key scheme', () => {
    checkOpenApi(doc);
    checkOpenApi(buildOpenApiDocument(agent, ASK_URL, { apiKeyHeader: true }, { maxMessageChars: 8192 }));
  });

  it('has one server (the base URL) and one path with one POST operation', () => {
    assert.deepEqual(doc.servers, [{ url: 'https://gw.example/a2a/travel-desk' }]);
    assert.deepEqual(Object.keys(doc.paths), ['/ask']);
    assert.deepEqual(Object.keys(doc.paths['/ask'] ?? {}), ['post']);
  });

  it('names the operation ask_<slug> in snake_case and describes it with the agent’s description', () => {
    const operation = doc.paths['/ask']?.post;
    assert.equal(operation?.operationId, 'ask_travel_desk');
    assert.equal(operation?.description, 'Plans trips and books them.');
    assert.equal(operation?.summary, 'Ask Travel desk');
    assert.deepEqual(doc.info, { title: 'Travel desk', description: 'Plans trips and books them.', version: '3.2.1' });
    assert.equal(operationIdOf('a-b-c'), 'ask_a_b_c');
    assert.equal(operationIdOf('plain_1'), 'ask_plain_1');
  });

  it('describes the JSON request: message required, contextId optional, nothing else', () => {
    const body = doc.paths['/ask']?.post.requestBody;
    assert.equal(body?.required, true);
    const schema = body?.content['application/json']?.schema;
    assert.deepEqual(schema?.required, ['message']);
    assert.equal(schema?.additionalProperties, false);
    assert.deepEqual(Object.keys(schema?.properties ?? {}), ['message', 'contextId']);
    assert.equal(schema?.properties?.message?.type, 'string');
    assert.equal(schema?.properties?.message?.maxLength, undefined);
    assert.equal(schema?.properties?.contextId?.maxLength, 256);
    const limited = buildOpenApiDocument(agent, ASK_URL, { apiKeyHeader: false }, { maxMessageChars: 100 });
    assert.equal(
      limited.paths['/ask']?.post.requestBody.content['application/json']?.schema.properties?.message?.maxLength,
      100,
    );
  });

  it('agrees with parseAskRequest about contextId', () => {
    const pattern = new RegExp(
      doc.paths['/ask']?.post.requestBody.content['application/json']?.schema.properties?.contextId?.pattern ?? '',
    );
    for (const contextId of ['', 'ctx-1', 'a b', 'caf\u00e9', '!~']) {
      let accepted = true;
      try {
        parseAskRequest({ message: 'm', contextId });
      } catch {
        accepted = false;
      }
      assert.equal(pattern.test(contextId), accepted, contextId);
    }
  });

  it('describes the 200 reply with the fields and states askResultOf produces', () => {
    const schema = doc.paths['/ask']?.post.responses['200']?.content?.['application/json']?.schema;
    assert.deepEqual(schema?.required, ['reply', 'state', 'taskId', 'contextId']);
    assert.deepEqual(Object.keys(schema?.properties ?? {}), ['reply', 'state', 'taskId', 'contextId']);
    assert.deepEqual(schema?.properties?.state?.enum, [...ASK_STATES]);
  });

  it('lists the error responses with the shape askErrorResponse and askError send', () => {
    const responses = doc.paths['/ask']?.post.responses ?? {};
    for (const status of ['400', '401', '403', '404', '409', '413', '429', '503']) {
      const schema = responses[status]?.content?.['application/json']?.schema;
      assert.ok(schema !== undefined, status);
      const error = schema.properties?.error;
      assert.deepEqual(error?.required, ['code', 'status', 'message']);
      // Every field the real bodies carry is described, with its type.
      const body = askError(Number(status), 'x').body.error;
      for (const [field, value] of Object.entries(body)) {
        assert.equal(error?.properties?.[field]?.type, typeof value === 'number' ? 'integer' : 'string', field);
      }
    }
    assert.ok(responses['429']?.headers?.['Retry-After'] !== undefined);
    assert.ok(responses['503']?.headers?.['Retry-After'] !== undefined);
    assert.deepEqual(Object.keys(askErrorResponse(new Error('x')).body.error), ['code', 'status', 'message']);
  });

  it('declares bearer, and X-API-Key as an alternative only when enabled', () => {
    assert.deepEqual(doc.components.securitySchemes, {
      bearer: { type: 'http', scheme: 'bearer', description: BEARER_SCHEME.description },
    });
    assert.deepEqual(doc.security, [{ bearer: [] }]);
    const withKey = buildOpenApiDocument(agent, ASK_URL, { apiKeyHeader: true });
    assert.deepEqual(withKey.components.securitySchemes.apiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: 'A client token issued by the operator, for callers that cannot send Authorization: Bearer',
    });
    assert.deepEqual(withKey.security, [{ bearer: [] }, { apiKey: [] }]);
  });

  it('says nothing of the skills or the extended card', () => {
    const text = JSON.stringify(buildOpenApiDocument(agent, ASK_URL, { apiKeyHeader: true }));
    for (const secret of [
      'secret-skill',
      'Hidden',
      'Never in the document',
      'hidden example',
      'Members only',
      'echo',
    ]) {
      assert.ok(!text.includes(secret), secret);
    }
  });

  it('keeps a server URL free of variables, and refuses a URL that is not an ask URL', () => {
    const odd = buildOpenApiDocument(agent, 'http://127.0.0.1:41241/p{x}/a2a/travel-desk/ask', { apiKeyHeader: false });
    assert.deepEqual(odd.servers, [{ url: 'http://127.0.0.1:41241/p%7Bx%7D/a2a/travel-desk' }]);
    for (const bad of ['/a2a/travel-desk/ask', 'ftp://gw.example/ask', 'https://gw.example/a2a/travel-desk']) {
      assert.throws(() => buildOpenApiDocument(agent, bad, { apiKeyHeader: false }), /ask URL/);
    }
  });

  it('the structural checks catch what they are for', () => {
    const broken = (mutate: (doc: Obj) => void): void => {
      const copy = JSON.parse(JSON.stringify(doc)) as Obj;
      mutate(copy);
      assert.throws(() => checkOpenApi(copy));
    };
    broken((d) => (d.servers = [{ url: 'https://{host}/x' }]));
    broken((d) => (d.servers = [{ url: 'https://a/x' }, { url: 'https://b/x' }]));
    broken(
      (d) =>
        ((d.paths as Obj)['/ask'] = {
          post: { ...(obj((d.paths as Obj)['/ask'], 'p').post as Obj), operationId: 'Ask-Travel' },
        }),
    );
    broken((d) => (d.security = [{ oauth: [] }]));
    broken((d) => (d.openapi = '3.1.0'));
  });
});
