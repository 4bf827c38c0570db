/**
 * Fuzzing the JSON-RPC endpoint of a real gateway on loopback: request bodies for every method
 * of both dialects (v1.0 and v0.3) — random JSON, valid frames mutated (fields dropped or
 * replaced, wrong types, huge strings, deep nesting, unicode, arrays for objects), batches,
 * non-JSON bytes, empty bodies — under random A2A-Version headers and Content-Types, sent over
 * keep-alive HTTP.
 *
 * Per case, an oracle written here from the JSON-RPC 2.0 spec and the A2A digest (§8 error
 * codes) decides what the answer must be: the HTTP status; for an error, its code exactly when
 * the envelope decides it (-32700 parse error, -32600 invalid request, -32602 params not an
 * object, -32009 bad version, -32601 unknown method, -32005 wrong Content-Type; 400 and 413 for
 * nesting and size limits), else a code from the known set other than those; the id echoed when
 * the request's id was a valid id, else null; the error shaped in the right dialect; never
 * -32603 (nothing here may be an internal error). Streaming answers are read to their first
 * event only (or 64 KB). After the run: the gateway still serves a good SendMessage, no turn is
 * left running, and resident memory grew less than a generous bound.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { A2A_ERRORS } from '../../src/protocol/errors.js';
import { V03_METHODS } from '../../src/protocol/v03/index.js';
import { V10_METHODS } from '../../src/protocol/v10/index.js';
import { DEFAULT_YAML, TOKEN_A, startGateway, withServer, type TestGateway } from '../helpers/gateway.js';
import { fuzzRuns, fuzzTimeout } from './runs.js';

// ---------------------------------------------------------------------------------------------
// The gateway under test

const MAX_BODY_BYTES = 131_072;
const MAX_JSON_DEPTH = 32; // the default `limits.maxJsonDepth`
const YAML = `${withServer(`{ host: 127.0.0.1, port: 0, defaultAgent: echo, maxBodyBytes: ${MAX_BODY_BYTES} }`, DEFAULT_YAML)}
limits: { requestsPerMinute: 1000000000, authFailuresPerMinute: 10000, maxConcurrentTasks: 1000000, maxConcurrentTasksPerPrincipal: 1000000 }
`;

/** Every JSON-RPC error code the gateway may use (src/protocol/errors.ts). */
const KNOWN_CODES: ReadonlySet<number> = new Set(Object.values(A2A_ERRORS).map((e) => e.code));
const PARSE = A2A_ERRORS.JSON_PARSE.code;
const INVALID_REQUEST = A2A_ERRORS.INVALID_REQUEST.code;
const METHOD_NOT_FOUND = A2A_ERRORS.METHOD_NOT_FOUND.code;
const INVALID_PARAMS = A2A_ERRORS.INVALID_PARAMS.code;
const INTERNAL = A2A_ERRORS.INTERNAL.code;
const CONTENT_TYPE = A2A_ERRORS.CONTENT_TYPE_NOT_SUPPORTED.code;
const VERSION = A2A_ERRORS.VERSION_NOT_SUPPORTED.code;
/** Codes only the envelope, the version header or the method name decide: never for a known method's params. */
const ENVELOPE_CODES: ReadonlySet<number> = new Set([PARSE, METHOD_NOT_FOUND, VERSION, INTERNAL]);

const STREAMING = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);
const ALL_METHODS = [...V10_METHODS, ...V03_METHODS];
const AGENTS = ['echo', 'echo', 'echo', 'tck', 'tck', 'writer'];

// ---------------------------------------------------------------------------------------------
// The oracle

type Dialect = 'v10' | 'v03';

/** What the answer to one request must be. */
interface Expectation {
  status: 200 | 400 | 413;
  /** The exact error code, when the envelope decides it; undefined: the method decides. */
  code?: number;
  /** The id the answer must carry. */
  id: string | number | null;
  /** The dialect the error must be shaped in (v1.0 adds google.rpc details in `data`). */
  dialect: Dialect;
  /** A known method with a usable envelope: a result is possible. */
  method?: string;
  /** The request had no id (a notification): it must be refused, never run. */
  notification?: boolean;
}

const JSON_CONTENT_TYPE = /^application\/(?:json|[\w.+-]+\+json)[\t ]*(?:;|$)/i;

/** The dialect of an error answered before the method is known: the version header's. */
function headerDialect(version: string | undefined): Dialect {
  return version?.trim() === '1.0' ? 'v10' : 'v03';
}

function versionOk(version: string | undefined): boolean {
  const v = version?.trim() ?? '';
  return v === '' || v === '1.0' || v === '0.3';
}

/** The nesting depth of a parsed JSON value (arrays and objects), iteratively. */
function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    max = Math.max(max, d + 1);
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/** JSON-RPC 2.0 §4: a valid id is a string or a number (A2A caps strings at 256 characters). */
function validId(id: unknown): id is string | number {
  return (typeof id === 'string' && id.length <= 256) || (typeof id === 'number' && Number.isFinite(id));
}

/** The expectations for a body, or several when the spec leaves a choice (see `parseOrDepth`). */
function expect(body: Buffer, version: string | undefined, contentType: string | null): Expectation[] {
  const dialect = headerDialect(version);
  // No Content-Type is refused like a wrong one (issue 16: a page can POST one without a preflight).
  if (contentType === null || !JSON_CONTENT_TYPE.test(contentType)) {
    return [{ status: 200, code: CONTENT_TYPE, id: null, dialect }];
  }
  if (body.length > MAX_BODY_BYTES) return [{ status: 413, code: INVALID_REQUEST, id: null, dialect }];
  let frame: unknown;
  try {
    frame = JSON.parse(body.toString('utf8'));
  } catch {
    // Not JSON. The depth limit is checked on the bytes before parsing, so an unparsable body
    // with many brackets may be refused as too deep instead: both answers are right.
    const parseError: Expectation = { status: 200, code: PARSE, id: null, dialect };
    const brackets = body.reduce((n, b) => n + (b === 0x5b || b === 0x7b ? 1 : 0), 0);
    return brackets > MAX_JSON_DEPTH
      ? [parseError, { status: 400, code: INVALID_REQUEST, id: null, dialect }]
      : [parseError];
  }
  if (depthOf(frame) > MAX_JSON_DEPTH) return [{ status: 400, code: INVALID_REQUEST, id: null, dialect }];
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
    // A batch or a non-object: JSON-RPC's Invalid Request (A2A has no batches).
    return [{ status: 200, code: INVALID_REQUEST, id: null, dialect }];
  }
  const record = frame as Record<string, unknown>;
  const rawId = Object.hasOwn(record, 'id') ? record.id : undefined;
  const id = validId(rawId) ? (Object.is(rawId, -0) ? 0 : rawId) : null;
  const invalid = (code: number): Expectation[] => [{ status: 200, code, id, dialect }];
  if (record.jsonrpc !== '2.0') return invalid(INVALID_REQUEST);
  if (rawId !== undefined && !validId(rawId)) return invalid(INVALID_REQUEST);
  const method = record.method;
  if (typeof method !== 'string' || method.length === 0 || method.length > 128) return invalid(INVALID_REQUEST);
  const params = record.params;
  if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) {
    return invalid(INVALID_PARAMS);
  }
  if (!versionOk(version)) return invalid(VERSION);
  const known = V10_METHODS.includes(method) ? 'v10' : V03_METHODS.includes(method) ? 'v03' : undefined;
  if (known === undefined) return invalid(METHOD_NOT_FOUND);
  return [{ status: 200, id, dialect: known, method, notification: rawId === undefined }];
}

// ---------------------------------------------------------------------------------------------
// Generators

/** Task ids that exist (filled in `before`), so that get/cancel/subscribe also reach their happy paths. */
const knownTaskIds: string[] = ['no-such-task'];

const taskId = fc.oneof(
  { weight: 3, arbitrary: fc.nat().map((i) => knownTaskIds[i % knownTaskIds.length]!) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uuid() },
);
const shortText = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 20 }));
const messageId = fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 20 }));

function v10Message(): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      messageId,
      role: fc.constantFrom('ROLE_USER', 'ROLE_USER', 'ROLE_USER', 'ROLE_USER', 'ROLE_AGENT', 'user'),
      parts: fc.array(
        fc.oneof(
          { weight: 4, arbitrary: fc.record({ text: shortText }) },
          { weight: 1, arbitrary: fc.record({ data: fc.jsonValue({ maxDepth: 3 }) }) },
          {
            weight: 1,
            arbitrary: fc.record({ url: fc.webUrl(), mediaType: fc.constantFrom('text/plain', 'image/png') }),
          },
          { weight: 1, arbitrary: fc.record({ raw: fc.base64String({ maxLength: 40 }), filename: shortText }) },
        ),
        { minLength: 1, maxLength: 3 },
      ),
      contextId: fc.uuid(),
      taskId,
      metadata: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    },
    { requiredKeys: ['messageId', 'role', 'parts'] },
  );
}

function v03Message(): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      kind: fc.constant('message'),
      messageId,
      role: fc.constantFrom('user', 'user', 'user', 'user', 'agent', 'ROLE_USER'),
      parts: fc.array(
        fc.oneof(
          fc.record({ kind: fc.constant('text'), text: shortText }),
          fc.record({ kind: fc.constant('text'), text: shortText }),
          fc.record({ kind: fc.constant('text'), text: shortText }),
          fc.record({
            kind: fc.constant('data'),
            data: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
          }),
          fc.record({
            kind: fc.constant('file'),
            file: fc.record({ uri: fc.webUrl(), mimeType: fc.constant('text/plain') }),
          }),
        ),
        { minLength: 1, maxLength: 3 },
      ),
      contextId: fc.uuid(),
      taskId,
      metadata: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    },
    { requiredKeys: ['kind', 'messageId', 'role', 'parts'] },
  );
}

const sendConfiguration = fc.record(
  {
    acceptedOutputModes: fc.array(fc.constantFrom('text/plain', 'application/json', '*/*', 'image/png'), {
      maxLength: 3,
    }),
    historyLength: fc.oneof(fc.nat({ max: 20 }), fc.integer()),
    blocking: fc.boolean(),
    returnImmediately: fc.boolean(),
  },
  { requiredKeys: [] },
);

/** Plausible params for a method: valid or nearly so (the mutations below break them further). */
function paramsFor(method: string): fc.Arbitrary<unknown> {
  const v10 = V10_METHODS.includes(method);
  switch (method) {
    case 'SendMessage':
    case 'SendStreamingMessage':
    case 'message/send':
    case 'message/stream':
      return fc.record(
        {
          message: v10 ? v10Message() : v03Message(),
          configuration: sendConfiguration,
          metadata: fc.object({ maxDepth: 1 }),
        },
        { requiredKeys: ['message'] },
      );
    case 'GetTask':
    case 'tasks/get':
      return fc.record(
        { id: taskId, historyLength: fc.oneof(fc.nat({ max: 10 }), fc.integer()) },
        { requiredKeys: ['id'] },
      );
    case 'ListTasks':
      return fc.record(
        {
          contextId: fc.uuid(),
          status: fc.constantFrom('TASK_STATE_COMPLETED', 'TASK_STATE_WORKING', 'completed', 'nope'),
          pageSize: fc.oneof(fc.nat({ max: 100 }), fc.integer()),
          pageToken: fc.string({ maxLength: 20 }),
          historyLength: fc.nat({ max: 10 }),
          includeArtifacts: fc.boolean(),
        },
        { requiredKeys: [] },
      );
    case 'GetExtendedAgentCard':
    case 'agent/getAuthenticatedExtendedCard':
      return fc.constantFrom({}, undefined);
    default:
      if (method.toLowerCase().includes('push')) {
        return fc.record(
          {
            id: taskId,
            taskId,
            pushNotificationConfig: fc.record({ url: fc.webUrl(), token: fc.string({ maxLength: 10 }) }),
            pushNotificationConfigId: fc.string({ maxLength: 10 }),
          },
          { requiredKeys: [] },
        );
      }
      return fc.record({ id: taskId, metadata: fc.object({ maxDepth: 1 }) }, { requiredKeys: ['id'] });
  }
}

const validIdArb = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 30 }),
  fc.uuid(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 2 ** 53, -1, 'x'.repeat(256)),
);
const badIdArb = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.constant('x'.repeat(257)),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);

/** A valid request frame for any method of either dialect. */
/** Every method; the ones that run something three times as often as the push-config ones. */
const methodArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ALL_METHODS.filter((m) => !m.toLowerCase().includes('push'))) },
  { weight: 1, arbitrary: fc.constantFrom(...ALL_METHODS.filter((m) => m.toLowerCase().includes('push'))) },
);

const validFrame: fc.Arbitrary<Record<string, unknown>> = methodArb
  .chain((method) =>
    fc.record({ jsonrpc: fc.constant('2.0'), id: validIdArb, method: fc.constant(method), params: paramsFor(method) }),
  )
  .map((frame) => {
    if (frame.params === undefined) delete (frame as Record<string, unknown>).params;
    return frame;
  });

/** Values of the wrong kind for any field: wrong types, huge strings, deep nests, unicode, nulls. */
const hugeString = fc
  .tuple(fc.integer({ min: 1_000, max: 200_000 }), fc.constantFrom('x', 'é', '😀', '\u0000', '"', '\\', '\u2028'))
  .map(([n, unit]) => unit.repeat(Math.ceil(n / unit.length)));
const deepNest = fc.tuple(fc.integer({ min: 1, max: 80 }), fc.boolean()).map(([depth, asObject]) => {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = asObject ? { a: v } : [v];
  return v;
});
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, '', 'x', [], {}) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: deepNest },
  { weight: 1, arbitrary: fc.constantFrom(...ALL_METHODS, 'SendMessage ', 'sendmessage', 'message/send/x', '2.0') },
);

/** All [container, key] slots of a JSON tree (the root's own members included). */
function slots(root: unknown): [Record<string, unknown> | unknown[], string | number][] {
  const out: [Record<string, unknown> | unknown[], string | number][] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0 && out.length < 500) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      v.forEach((child, i) => {
        out.push([v, i]);
        stack.push(child);
      });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        out.push([v as Record<string, unknown>, k]);
        stack.push(child);
      }
    }
  }
  return out;
}

type Mutation = [kind: number, where: number, value: unknown];

/** Applies mutations in place: drop, replace, wrap in an array, object→array, add a member. */
function mutate(frame: Record<string, unknown>, mutations: Mutation[]): Record<string, unknown> {
  for (const [kind, where, value] of mutations) {
    const all = slots(frame);
    if (all.length === 0) break;
    const [container, key] = all[where % all.length]!;
    const current = (container as Record<string | number, unknown>)[key];
    switch (kind % 6) {
      case 0:
        if (Array.isArray(container)) container.splice(key as number, 1);
        else delete container[key as string];
        break;
      case 1:
      case 2:
        (container as Record<string | number, unknown>)[key] = value;
        break;
      case 3:
        (container as Record<string | number, unknown>)[key] = [current];
        break;
      case 4:
        (container as Record<string | number, unknown>)[key] =
          current !== null && typeof current === 'object' ? Object.values(current) : String(current);
        break;
      case 5:
        if (!Array.isArray(container)) container[memberName(value)] = current;
        break;
    }
  }
  return frame;
}

/**
 * A member name made from a generated value. A generated JSON object can carry its own
 * `toString` or `valueOf` that is not a function (`{ "toString": 0 }`): it has no string form.
 */
function memberName(value: unknown): string {
  let text = '';
  try {
    text = String(value);
  } catch {
    // no string form: the fallback name below
  }
  return text.slice(0, 12) || 'extra';
}

const mutatedFrame = fc
  .tuple(validFrame, fc.array(fc.tuple(fc.nat(), fc.nat(), wrongValue), { minLength: 1, maxLength: 3 }))
  .map(([frame, mutations]) => mutate(frame, mutations as Mutation[]));

/** Envelope-level breakage: the id, jsonrpc, method and params members. */
const brokenEnvelope = fc
  .tuple(
    validFrame,
    fc.oneof(
      fc.record({ id: badIdArb }),
      fc.record({ id: fc.constant(undefined) }),
      fc.record({
        jsonrpc: fc.oneof(fc.constantFrom('1.0', '2', 2, 2.0, null, '2.0 ', ''), fc.string({ maxLength: 4 })),
      }),
      fc.record({
        method: fc.oneof(fc.constantFrom('', 'x'.repeat(129), null, 42, ['SendMessage']), fc.string({ maxLength: 20 })),
      }),
      fc.record({ params: fc.constantFrom(null, 1, 'x', [], [{}], true) }),
    ),
  )
  .map(([frame, patch]) => {
    const out: Record<string, unknown> = { ...frame };
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) delete out[k];
      else out[k] = v;
    }
    return out;
  });

/** How the frame is written: compact, pretty, or with a duplicate member. */
function serialise(frame: unknown, style: number): string {
  const text = JSON.stringify(frame, null, style % 3 === 1 ? 2 : undefined) ?? 'null';
  if (style % 3 === 2 && text.startsWith('{"')) return `{"id":"shadowed",${text.slice(1)}`; // last one wins
  return text;
}

const jsonBody: fc.Arbitrary<Buffer> = fc
  .tuple(
    fc.oneof(
      { weight: 6, arbitrary: validFrame },
      { weight: 6, arbitrary: mutatedFrame },
      { weight: 3, arbitrary: brokenEnvelope },
      { weight: 1, arbitrary: fc.array(validFrame, { maxLength: 3 }) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
      {
        weight: 1,
        arbitrary: deepNest.map((v) => ({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { deep: v } })),
      },
    ),
    fc.nat(),
  )
  .map(([frame, style]) => Buffer.from(serialise(frame, style), 'utf8'));

/** Bytes that are (mostly) not JSON, or JSON broken on the wire. */
const rawBody: fc.Arbitrary<Buffer> = fc.oneof(
  fc.constant(Buffer.alloc(0)),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  fc.string({ unit: 'binary', maxLength: 100 }).map((s) => Buffer.from(s, 'utf8')),
  fc.tuple(validFrame, fc.nat()).map(([f, cut]) => {
    const text = JSON.stringify(f);
    return Buffer.from(text.slice(0, cut % text.length));
  }),
  fc
    .tuple(validFrame, fc.constantFrom('x', '}', ',', ' {}', '\u0000', '//c'))
    .map(([f, junk]) => Buffer.from(JSON.stringify(f) + junk)),
  validFrame.map((f) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(f))])),
  validFrame.map((f) => Buffer.from(JSON.stringify(f).replace('"2.0"', '"2.0\\ud800"'))),
  // Invalid UTF-8 inside a string: decoded as U+FFFD by server and oracle alike.
  validFrame.map((f) => {
    const text = Buffer.from(JSON.stringify({ ...f, junk: 'AB' }));
    const at = text.indexOf('"AB"');
    if (at !== -1) text[at + 1] = 0xff;
    return text;
  }),
  fc.integer({ min: 33, max: 2000 }).map((n) => Buffer.from('['.repeat(n))),
);

interface Case {
  agent: string;
  body: Buffer;
  version: string | undefined;
  contentType: string | null;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  agent: fc.constantFrom(...AGENTS),
  body: fc.oneof({ weight: 8, arbitrary: jsonBody }, { weight: 1, arbitrary: rawBody }),
  version: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(undefined, '1.0', '0.3', ' 1.0 ', '') },
    { weight: 1, arbitrary: fc.constantFrom('2.0', '1.0.0', '0.3, 1.0', 'abc', '01.0', '1.00', '0.2') },
  ),
  contentType: fc.oneof(
    { weight: 12, arbitrary: fc.constant('application/json') },
    {
      weight: 3,
      arbitrary: fc.constantFrom('application/json; charset=utf-8', 'application/a2a+json', 'APPLICATION/JSON', null),
    },
    { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/jsonx', 'multipart/form-data', 'json') },
  ),
});

// ---------------------------------------------------------------------------------------------
// Sending

const STREAM_READ_CAP = 64 * 1024;

interface Answer {
  status: number;
  contentType: string;
  /** The JSON body, or the first SSE event's data. */
  payload: unknown;
  /** The first SSE event's name (`error` for a stream-shaped error). */
  event?: string;
}

let gw: TestGateway;
let dispatcher: Agent;

async function send(c: Case): Promise<Answer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${TOKEN_A}`,
    accept: 'application/json, text/event-stream',
  };
  if (c.contentType !== null) headers['content-type'] = c.contentType;
  if (c.version !== undefined) headers['a2a-version'] = c.version;
  const response = await request(`${gw.url}/a2a/${c.agent}`, {
    method: 'POST',
    headers,
    body: c.body,
    dispatcher,
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
  });
  const contentType = String(response.headers['content-type'] ?? '');
  if (!contentType.startsWith('text/event-stream')) {
    const text = await response.body.text();
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      assert.fail(`status ${response.statusCode} with a body that is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
    }
    return { status: response.statusCode, contentType, payload };
  }
  // SSE: read up to the end of the first event (or the cap), then hang up.
  let buffered = '';
  for await (const chunk of response.body) {
    buffered += (chunk as Buffer).toString('utf8');
    if (/\n\n/.test(buffered.replace(/^(?::[^\n]*\n\n)+/, '')) || buffered.length > STREAM_READ_CAP) break;
  }
  response.body.destroy();
  const events = buffered.split('\n\n').filter((frame) => frame.split('\n').some((line) => line.startsWith('data:')));
  assert.ok(events.length > 0, `an SSE answer without an event: ${JSON.stringify(buffered.slice(0, 200))}`);
  const lines = events[0]!.split('\n');
  const event = lines
    .find((l) => l.startsWith('event:'))
    ?.slice(6)
    .trim();
  const data = lines
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).replace(/^ /, ''))
    .join('\n');
  return { status: response.statusCode, contentType, payload: JSON.parse(data), ...(event !== undefined && { event }) };
}

/** How many answers of each kind the run saw (status, 'result', 'sse', error code). */
const seen = new Map<string, number>();

function tally(answer: Answer): void {
  const bump = (k: string): void => void seen.set(k, (seen.get(k) ?? 0) + 1);
  if (answer.status !== 200) bump(String(answer.status));
  if (answer.contentType.startsWith('text/event-stream')) bump('sse');
  const reply = answer.payload as { result?: unknown; error?: { code?: unknown } };
  if (reply.result !== undefined) bump('result');
  if (reply.error !== undefined) bump(String(reply.error.code));
}

/** Checks one answer against the oracle's expectations (any one of them). */
function check(c: Case, answer: Answer, expectations: Expectation[]): void {
  const failures: string[] = [];
  for (const e of expectations) {
    try {
      checkOne(answer, e);
      return;
    } catch (error) {
      failures.push(error instanceof Error ? error.message : String(error));
    }
  }
  const body = c.body.toString('utf8');
  assert.fail(
    `${failures.join(' / ')}\n  request: agent=${c.agent} version=${JSON.stringify(c.version)} content-type=${JSON.stringify(c.contentType)} ` +
      `body(${c.body.length})=${JSON.stringify(body.slice(0, 300))}\n  answer: ${answer.status} ${answer.contentType} ${JSON.stringify(answer.payload).slice(0, 400)}`,
  );
}

function checkOne(answer: Answer, e: Expectation): void {
  assert.equal(answer.status, e.status, 'HTTP status');
  const sse = answer.contentType.startsWith('text/event-stream');
  if (sse) {
    assert.ok(e.method !== undefined && STREAMING.has(e.method), `SSE answer for a non-streaming request`);
  } else {
    assert.match(answer.contentType, /^application\/json/, 'content-type');
  }
  const reply = answer.payload as Record<string, unknown>;
  assert.ok(reply !== null && typeof reply === 'object' && !Array.isArray(reply), 'a JSON-RPC response object');
  assert.equal(reply.jsonrpc, '2.0', 'jsonrpc');
  assert.ok(Object.hasOwn(reply, 'id'), 'an id member');
  assert.deepStrictEqual(reply.id, e.id, 'the id echoed (or null)');
  const hasResult = Object.hasOwn(reply, 'result');
  const hasError = Object.hasOwn(reply, 'error');
  assert.ok(hasResult !== hasError, 'exactly one of result and error');
  if (hasResult) {
    assert.ok(e.code === undefined && e.method !== undefined, 'a result only for a well-formed call');
    assert.ok(!e.notification, 'a notification is refused, never run');
    assert.ok(answer.event !== 'error', 'a result in an error event');
    return;
  }
  const error = reply.error as Record<string, unknown>;
  assert.ok(error !== null && typeof error === 'object', 'error is an object');
  assert.equal(typeof error.code, 'number', 'error.code is a number');
  assert.equal(typeof error.message, 'string', 'error.message is a string');
  const code = error.code as number;
  assert.ok(KNOWN_CODES.has(code), `error.code ${code} is a known code`);
  assert.notEqual(code, INTERNAL, `never -32603 (${String(error.message)})`);
  if (e.code !== undefined) {
    assert.equal(code, e.code, `error code (${String(error.message)})`);
  } else {
    assert.ok(!ENVELOPE_CODES.has(code), `a method-level error, not ${code} (${String(error.message)})`);
    if (e.notification)
      assert.ok(code === INVALID_REQUEST || code === INVALID_PARAMS, `notification refused, got ${code}`);
  }
  // v1.0 errors carry google.rpc details (ErrorInfo first); v0.3 errors have no data.
  if (e.dialect === 'v10') {
    assert.ok(
      Array.isArray(error.data) && (error.data[0] as Record<string, unknown>)?.reason !== undefined,
      'v1.0 error details',
    );
  } else {
    assert.equal(error.data, undefined, 'v0.3 error without data');
  }
}

// ---------------------------------------------------------------------------------------------

/** A known-good SendMessage, v1.0. */
async function goodSend(): Promise<string> {
  const body = {
    jsonrpc: '2.0',
    id: 'good',
    method: 'SendMessage',
    params: { message: { messageId: `m-${Date.now()}`, role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
  };
  const r = await request(`${gw.url}/a2a/echo`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify(body),
    dispatcher,
  });
  assert.equal(r.statusCode, 200);
  const reply = (await r.body.json()) as any;
  assert.equal(reply.id, 'good');
  assert.ok(reply.result !== undefined, JSON.stringify(reply));
  return JSON.stringify(reply.result);
}

/** Creates a few tasks in both dialects and on both kinds of agent, for the id pool. */
async function seedTasks(): Promise<void> {
  for (const agent of ['echo', 'tck', 'echo', 'tck']) {
    for (const [method, version, message] of [
      ['SendMessage', '1.0', { messageId: `seed-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'seed' }] }],
      [
        'message/send',
        '0.3',
        { kind: 'message', messageId: `seed-${Math.random()}`, role: 'user', parts: [{ kind: 'text', text: 'seed' }] },
      ],
    ] as const) {
      const r = await request(`${gw.url}/a2a/${agent}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json', 'a2a-version': version },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { message } }),
        dispatcher,
      });
      const result = ((await r.body.json()) as any).result;
      const id =
        result?.task?.id ??
        (result?.kind === 'task' ? result.id : undefined) ??
        result?.message?.taskId ??
        result?.taskId;
      if (typeof id === 'string') knownTaskIds.push(id);
    }
  }
}

describe('fuzz: the JSON-RPC endpoint', { timeout: fuzzTimeout(60_000, 120_000) }, () => {
  let rssBefore = 0;

  before(async () => {
    gw = await startGateway(YAML);
    dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 8 });
    await seedTasks();
    assert.ok(knownTaskIds.length > 1, 'seeded some tasks');
    (globalThis as { gc?: () => void }).gc?.();
    rssBefore = process.memoryUsage().rss;
  });

  after(async () => {
    await dispatcher?.close();
    await gw?.close();
  });

  // Protects: the whole inbound JSON-RPC pipeline's error handling — body limits (413, 400 for
  // depth), the Content-Type check (-32005), JSON parsing (-32700), envelope validation (-32600,
  // -32602 for non-object params), the version check (-32009), method lookup (-32601), the
  // codecs' params validation (-32602 rather than a crash or -32603), id echoing, notification
  // refusal, and the dialect an error is shaped in. Any of these removed or reordered makes
  // some generated case answer differently than the oracle requires, or crash the connection.
  it('answers every frame with the right JSON-RPC answer', { timeout: fuzzTimeout(60_000, 120_000) }, async (t) => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const answer = await send(c);
        check(c, answer, expect(c.body, c.version, c.contentType));
        tally(answer);
      }),
      { numRuns: fuzzRuns() },
    );
    t.diagnostic(`answers: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
    if (fuzzRuns() >= 1000) {
      // The generators must reach every class of answer, or the oracle checks little.
      for (const kind of [
        'result',
        'sse',
        '400',
        '413',
        `${PARSE}`,
        `${INVALID_REQUEST}`,
        `${METHOD_NOT_FOUND}`,
        `${INVALID_PARAMS}`,
        `${VERSION}`,
        `${CONTENT_TYPE}`,
      ]) {
        assert.ok((seen.get(kind) ?? 0) > 0, `no ${kind} answer in ${fuzzRuns()} cases`);
      }
    }
  });

  // Protects: liveness and resource bounds after the storm — the server still works, streams the
  // fuzz abandoned do not leave turns running (a leak in the SSE close path would), and memory
  // does not grow with the number of requests.
  it('still serves a good SendMessage; nothing left running; memory bounded', { timeout: 60_000 }, async () => {
    assert.match(await goodSend(), /hello/);
    const deadline = Date.now() + 20_000;
    while (gw.gateway.service.running !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(gw.gateway.service.running, 0, 'turns still running after the fuzz');
    (globalThis as { gc?: () => void }).gc?.();
    const grownMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
    assert.ok(grownMb < 200, `rss grew ${grownMb.toFixed(0)} MB over ${fuzzRuns()} requests`);
  });
});
