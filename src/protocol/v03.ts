/**
 * The A2A v0.3 JSON-RPC codec (digest §2–§8): `category/action` methods, `kind` tags,
 * lowercase/kebab enums, `file:{bytes|uri, mimeType?, name?}` parts, object-only data parts,
 * bare Task/Message results, `final` on status updates, and the inverted `blocking` flag.
 *
 * What v0.3 cannot carry: `mediaType`/`filename` on text and data parts (dropped), `tenant`
 * (dropped), ListTasks (no such method: UNSUPPORTED_OPERATION). A non-object data value is
 * wrapped as `{value: x}` with `metadata.data_part_compat: true`, as a2a-js does, and
 * unwrapped again on the way in.
 *
 * @example
 * ```ts
 * const request = v03.decodeRequest('message/send', {
 *   message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
 * });
 * request.params.configuration.returnImmediately; // false: `blocking` absent means blocking
 * ```
 */
import { A2AError } from './errors.js';
import type { Dialect, EncodedRequest, JsonRpcErrorObject } from './dialect.js';
import type {
  A2AOperation,
  A2ARequest,
  Artifact,
  JsonObject,
  JsonValue,
  Message,
  Part,
  Role,
  SendConfiguration,
  SendParams,
  SendResult,
  StreamEvent,
  Task,
  TaskArtifactUpdateEvent,
  TaskState,
  TaskStatus,
  TaskStatusUpdateEvent,
  TextPart,
} from './model.js';
import { TASK_STATES, isTerminalState } from './model.js';
import { decodeAnyCard, encodeCardV03 } from './card.js';
import {
  LIMITS,
  REQUEST,
  RESPONSE,
  asRecord,
  checkBase64,
  checkJson,
  checkRecord,
  checkUrl,
  decodeArtifact,
  decodeEventHead,
  decodeMessage,
  decodeRpcError,
  decodeStatus,
  decodeTaskWith,
  guard,
  isAbsent,
  jsonArray,
  jsonListField,
  jsonString,
  messageTailJson,
  optBool,
  optHistoryLength,
  optId,
  optJsonObject,
  optString,
  optStringList,
  setPartExtras,
} from './validate.js';
import type { Ctx, JsonWriters, Rec, WireFormat } from './validate.js';

// ---------------------------------------------------------------------------------------------
// Wire shapes

/** Inline file content, e.g. `{ bytes: 'aGk=', mimeType: 'text/plain', name: 'hi.txt' }`. */
export interface V03FileWithBytes {
  bytes: string;
  mimeType?: string;
  name?: string;
}
/** A file by reference, e.g. `{ uri: 'https://example.com/a.pdf' }`. */
export interface V03FileWithUri {
  uri: string;
  mimeType?: string;
  name?: string;
}

/** A v0.3 part, e.g. `{ kind: 'text', text: 'hi' }` or `{ kind: 'file', file: { uri } }`. */
export type V03Part =
  | { kind: 'text'; text: string; metadata?: JsonObject }
  | { kind: 'file'; file: V03FileWithBytes | V03FileWithUri; metadata?: JsonObject }
  | { kind: 'data'; data: JsonObject; metadata?: JsonObject };

/** A v0.3 Message, e.g. `{ kind: 'message', messageId: 'm-1', role: 'user', parts: [...] }`. */
export interface V03Message {
  kind: 'message';
  messageId: string;
  role: Role;
  parts: V03Part[];
  contextId?: string;
  taskId?: string;
  metadata?: JsonObject;
  extensions?: string[];
  referenceTaskIds?: string[];
}

/** A v0.3 TaskStatus, e.g. `{ state: 'input-required', timestamp: '2026-01-01T00:00:00.000Z' }`. */
export interface V03TaskStatus {
  state: TaskState;
  message?: V03Message;
  timestamp?: string;
}

/** A v0.3 Artifact, e.g. `{ artifactId: 'a-1', parts: [{ kind: 'text', text: 'result' }] }`. */
export interface V03Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: V03Part[];
  metadata?: JsonObject;
  extensions?: string[];
}

/** A bare v0.3 Task, e.g. `{ kind: 'task', id, contextId, status }`. */
export interface V03Task {
  kind: 'task';
  id: string;
  contextId: string;
  status: V03TaskStatus;
  artifacts?: V03Artifact[];
  history?: V03Message[];
  metadata?: JsonObject;
}

/** A v0.3 status event, e.g. `{ kind: 'status-update', taskId, contextId, status, final: true }`. */
export interface V03StatusUpdate {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: V03TaskStatus;
  final: boolean;
  metadata?: JsonObject;
}

/** A v0.3 artifact event, e.g. `{ kind: 'artifact-update', taskId, contextId, artifact, lastChunk: true }`. */
export interface V03ArtifactUpdate {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact: V03Artifact;
  append?: boolean;
  lastChunk?: boolean;
  metadata?: JsonObject;
}

/** One SSE `result` of a v0.3 stream: a bare Task or Message, or a `kind`-tagged update. */
export type V03StreamResult = V03Task | V03Message | V03StatusUpdate | V03ArtifactUpdate;

// ---------------------------------------------------------------------------------------------
// Methods and enums

const METHODS: ReadonlyMap<string, A2AOperation> = new Map<string, A2AOperation>([
  ['message/send', 'send'],
  ['message/stream', 'stream'],
  ['tasks/get', 'get'],
  ['tasks/cancel', 'cancel'],
  ['tasks/resubscribe', 'subscribe'],
  ['agent/getAuthenticatedExtendedCard', 'extended-card'],
  ['tasks/pushNotificationConfig/set', 'push-config'],
  ['tasks/pushNotificationConfig/get', 'push-config'],
  ['tasks/pushNotificationConfig/list', 'push-config'],
  ['tasks/pushNotificationConfig/delete', 'push-config'],
]);

/**
 * The v0.3 JSON-RPC method names.
 *
 * @example
 * ```ts
 * V03_METHODS.includes('tasks/resubscribe'); // true
 * ```
 */
export const V03_METHODS: readonly string[] = [...METHODS.keys()];

/** The v0.3 state names are the canonical ones. */
const STATES: ReadonlySet<unknown> = new Set<unknown>(TASK_STATES);

/** Metadata flag of a wrapped non-object data value (a2a-js compatible). */
export const DATA_PART_COMPAT = 'data_part_compat';

// ---------------------------------------------------------------------------------------------
// Encoders (hot path)

function isJsonObject(value: JsonValue): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function encodePart(part: Part): V03Part {
  switch (part.kind) {
    case 'text': {
      const out: V03Part = { kind: 'text', text: part.text };
      if (part.metadata !== undefined) out.metadata = part.metadata;
      return out;
    }
    case 'raw':
    case 'url': {
      const file: V03FileWithBytes | V03FileWithUri = part.kind === 'raw' ? { bytes: part.raw } : { uri: part.url };
      if (part.mediaType !== undefined) file.mimeType = part.mediaType;
      if (part.filename !== undefined) file.name = part.filename;
      const out: V03Part = { kind: 'file', file };
      if (part.metadata !== undefined) out.metadata = part.metadata;
      return out;
    }
    case 'data': {
      if (isJsonObject(part.data)) {
        const out: V03Part = { kind: 'data', data: part.data };
        if (part.metadata !== undefined) out.metadata = part.metadata;
        return out;
      }
      // v0.3 allows only objects: wrap, and flag it so the other side can unwrap.
      return { kind: 'data', data: { value: part.data }, metadata: { ...part.metadata, [DATA_PART_COMPAT]: true } };
    }
  }
}

function encodeParts(parts: readonly Part[]): V03Part[] {
  const out: V03Part[] = [];
  for (let i = 0; i < parts.length; i++) out.push(encodePart(parts[i] as Part));
  return out;
}

function encodeMessage(message: Message): V03Message {
  const out: V03Message = {
    kind: 'message',
    messageId: message.messageId,
    role: message.role,
    parts: encodeParts(message.parts),
  };
  if (message.contextId !== undefined) out.contextId = message.contextId;
  if (message.taskId !== undefined) out.taskId = message.taskId;
  if (message.metadata !== undefined) out.metadata = message.metadata;
  if (message.extensions !== undefined) out.extensions = message.extensions;
  if (message.referenceTaskIds !== undefined) out.referenceTaskIds = message.referenceTaskIds;
  return out;
}

function encodeStatus(status: TaskStatus): V03TaskStatus {
  const out: V03TaskStatus = { state: status.state };
  if (status.message !== undefined) out.message = encodeMessage(status.message);
  out.timestamp = status.timestamp;
  return out;
}

function encodeArtifact(artifact: Artifact): V03Artifact {
  const out: V03Artifact = { artifactId: artifact.artifactId, parts: encodeParts(artifact.parts) };
  if (artifact.name !== undefined) out.name = artifact.name;
  if (artifact.description !== undefined) out.description = artifact.description;
  if (artifact.metadata !== undefined) out.metadata = artifact.metadata;
  if (artifact.extensions !== undefined) out.extensions = artifact.extensions;
  return out;
}

function encodeTask(task: Task): V03Task {
  const out: V03Task = { kind: 'task', id: task.id, contextId: task.contextId, status: encodeStatus(task.status) };
  if (task.artifacts.length > 0) {
    const artifacts: V03Artifact[] = [];
    for (let i = 0; i < task.artifacts.length; i++) artifacts.push(encodeArtifact(task.artifacts[i] as Artifact));
    out.artifacts = artifacts;
  }
  if (task.history.length > 0) {
    const history: V03Message[] = [];
    for (let i = 0; i < task.history.length; i++) history.push(encodeMessage(task.history[i] as Message));
    out.history = history;
  }
  if (task.metadata !== undefined) out.metadata = task.metadata;
  return out;
}

function encodeSendResult(result: SendResult): V03Task | V03Message {
  return result.kind === 'task' ? encodeTask(result.task) : encodeMessage(result.message);
}

/** `final` comes from the canonical event: the stream's owner decides which event is last. */
function encodeStreamEvent(event: StreamEvent): V03StreamResult {
  switch (event.kind) {
    case 'task':
      return encodeTask(event.task);
    case 'message':
      return encodeMessage(event.message);
    case 'status-update': {
      const out: V03StatusUpdate = {
        kind: 'status-update',
        taskId: event.taskId,
        contextId: event.contextId,
        status: encodeStatus(event.status),
        final: event.final,
      };
      if (event.metadata !== undefined) out.metadata = event.metadata;
      return out;
    }
    case 'artifact-update': {
      const out: V03ArtifactUpdate = {
        kind: 'artifact-update',
        taskId: event.taskId,
        contextId: event.contextId,
        artifact: encodeArtifact(event.artifact),
      };
      if (event.append !== undefined) out.append = event.append;
      if (event.lastChunk !== undefined) out.lastChunk = event.lastChunk;
      if (event.metadata !== undefined) out.metadata = event.metadata;
      return out;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// JSON writers (hot path): the JSON text of the encoders' results, written without building
// them. Each writes exactly `JSON.stringify` of its encoder's result, key order included; text
// parts (nearly all parts) are written here, any other part goes through its encoder.

function writeParts(parts: readonly Part[]): string {
  return jsonArray(parts, writePart);
}

function writePart(part: Part): string {
  return part.kind === 'text' ? writeTextPart(part) : JSON.stringify(encodePart(part));
}

/** v0.3 text parts carry no mediaType or filename: they are dropped, as `encodePart` does. */
function writeTextPart(part: TextPart): string {
  const metadata = part.metadata === undefined ? '' : `,"metadata":${JSON.stringify(part.metadata)}`;
  return `{"kind":"text","text":${jsonString(part.text)}${metadata}}`;
}

function writeMessage(message: Message): string {
  let out = `{"kind":"message","messageId":${jsonString(message.messageId)},"role":${jsonString(message.role)}`;
  out += `,"parts":${writeParts(message.parts)}`;
  return `${out}${messageTailJson(message)}}`;
}

function writeStatus(status: TaskStatus): string {
  const message = status.message === undefined ? '' : `,"message":${writeMessage(status.message)}`;
  return `{"state":${jsonString(status.state)}${message},"timestamp":${jsonString(status.timestamp)}}`;
}

function writeArtifact(artifact: Artifact): string {
  let out = `{"artifactId":${jsonString(artifact.artifactId)},"parts":${writeParts(artifact.parts)}`;
  if (artifact.name !== undefined) out += `,"name":${jsonString(artifact.name)}`;
  if (artifact.description !== undefined) out += `,"description":${jsonString(artifact.description)}`;
  if (artifact.metadata !== undefined) out += `,"metadata":${JSON.stringify(artifact.metadata)}`;
  if (artifact.extensions !== undefined) out += `,"extensions":${JSON.stringify(artifact.extensions)}`;
  return `${out}}`;
}

function writeTask(task: Task): string {
  let out = `{"kind":"task","id":${jsonString(task.id)},"contextId":${jsonString(task.contextId)}`;
  out += `,"status":${writeStatus(task.status)}`;
  out += jsonListField('artifacts', task.artifacts, writeArtifact);
  out += jsonListField('history', task.history, writeMessage);
  if (task.metadata !== undefined) out += `,"metadata":${JSON.stringify(task.metadata)}`;
  return `${out}}`;
}

function writeSendResult(result: SendResult): string {
  return result.kind === 'task' ? writeTask(result.task) : writeMessage(result.message);
}

/**
 * v0.3 results as JSON text: `V03_JSON.sendResult(r) === JSON.stringify(v03.encodeSendResult(r))`
 * and `V03_JSON.task(t) === JSON.stringify(v03.encodeTask(t))`, without the wire objects.
 *
 * @example
 * ```ts
 * const body = `{"jsonrpc":"2.0","id":1,"result":${V03_JSON.sendResult(result)}}`;
 * ```
 */
export const V03_JSON: JsonWriters = { sendResult: writeSendResult, task: writeTask };

function unsupportedList(): never {
  throw new A2AError('UNSUPPORTED_OPERATION', 'ListTasks is not available in A2A v0.3');
}

/** v0.3 error `data` is free-form; the code and message carry everything a caller needs. */
function encodeError(error: A2AError): JsonRpcErrorObject {
  return { code: error.rpcCode, message: error.message };
}

// ---------------------------------------------------------------------------------------------
// Decoders

function decodeRole(value: unknown, path: string, ctx: Ctx): Role {
  if (value === 'user' || value === 'agent') return value;
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be "user" or "agent"');
}

function decodeState(value: unknown, path: string, ctx: Ctx): TaskState {
  if (STATES.has(value)) return value as TaskState;
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be a task state such as "working"');
}

function decodeFilePart(rec: Rec, path: string, ctx: Ctx): Part {
  const filePath = `${path}.file`;
  const file = checkRecord(rec.file, filePath, ctx);
  const hasBytes = !isAbsent(file.bytes);
  const hasUri = !isAbsent(file.uri);
  if (hasBytes === hasUri) throw ctx.fail(filePath, 'must have exactly one of bytes or uri');
  const part: Part = hasBytes
    ? { kind: 'raw', raw: checkBase64(file.bytes, `${filePath}.bytes`, ctx) }
    : { kind: 'url', url: checkUrl(file.uri, `${filePath}.uri`, ctx) };
  return setPartExtras(
    part,
    optString(file.mimeType, `${filePath}.mimeType`, ctx, LIMITS.mediaTypeLength),
    optString(file.name, `${filePath}.name`, ctx, LIMITS.filenameLength),
    optJsonObject(rec.metadata, `${path}.metadata`, ctx),
  );
}

/** A data part; a flagged `{value: x}` wrapper is unwrapped and the flag removed. */
function decodeDataPart(rec: Rec, path: string, ctx: Ctx): Part {
  const dataPath = `${path}.data`;
  const object = asRecord(rec.data);
  if (object === undefined) throw ctx.fail(dataPath, isAbsent(rec.data) ? 'is required' : 'must be an object');
  const data = checkJson(object, dataPath, ctx) as JsonObject;
  let metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  let value: JsonValue = data;
  if (metadata !== undefined && metadata[DATA_PART_COMPAT] === true && Object.hasOwn(data, 'value')) {
    value = data.value as JsonValue;
    // fromEntries (not assignment) so that a key such as `__proto__` stays an own key.
    const rest = Object.entries(metadata).filter(([key]) => key !== DATA_PART_COMPAT);
    metadata = rest.length > 0 ? Object.fromEntries(rest) : undefined;
  }
  const part: Part = { kind: 'data', data: value };
  if (metadata !== undefined) part.metadata = metadata;
  return part;
}

function decodePart(value: unknown, path: string, ctx: Ctx): Part {
  const rec = checkRecord(value, path, ctx);
  switch (rec.kind) {
    case 'text': {
      if (typeof rec.text !== 'string') {
        throw ctx.fail(`${path}.text`, isAbsent(rec.text) ? 'is required' : 'must be a string');
      }
      const part: Part = { kind: 'text', text: rec.text };
      const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
      if (metadata !== undefined) part.metadata = metadata;
      return part;
    }
    case 'file':
      return decodeFilePart(rec, path, ctx);
    case 'data':
      return decodeDataPart(rec, path, ctx);
    default:
      throw ctx.fail(`${path}.kind`, isAbsent(rec.kind) ? 'is required' : 'must be "text", "file" or "data"');
  }
}

/**
 * The v0.3 wire rules for the shared structural decoders.
 *
 * @example
 * ```ts
 * decodeMessage(V03_WIRE, wireMessage, 'message', REQUEST);
 * ```
 */
export const V03_WIRE: WireFormat = {
  kindTags: true,
  emptyIsUnset: false,
  taskContextRequired: true,
  decodePart,
  decodeRole,
  decodeState,
};

/** `blocking` absent means blocking: 0.3 servers blocked by default (digest item 10.6). */
function decodeSendConfiguration(value: unknown, ctx: Ctx): SendConfiguration {
  if (isAbsent(value)) return { returnImmediately: false };
  const rec = checkRecord(value, 'configuration', ctx);
  const config: SendConfiguration = {
    returnImmediately: optBool(rec.blocking, 'configuration.blocking', ctx) === false,
  };
  const historyLength = optHistoryLength(rec.historyLength, 'configuration.historyLength', ctx);
  if (historyLength !== undefined) config.historyLength = historyLength;
  const modes = optStringList(rec.acceptedOutputModes, 'configuration.acceptedOutputModes', ctx);
  if (modes !== undefined) config.acceptedOutputModes = modes;
  if (!isAbsent(rec.pushNotificationConfig)) {
    checkRecord(rec.pushNotificationConfig, 'configuration.pushNotificationConfig', ctx);
  }
  return config;
}

function decodeSendParams(rec: Rec, ctx: Ctx): SendParams {
  const params: SendParams = {
    message: decodeMessage(V03_WIRE, rec.message, 'message', ctx),
    configuration: decodeSendConfiguration(rec.configuration, ctx),
  };
  const metadata = optJsonObject(rec.metadata, 'metadata', ctx);
  if (metadata !== undefined) params.metadata = metadata;
  return params;
}

/** `{id, metadata?}` of tasks/get, tasks/cancel and tasks/resubscribe. */
function decodeTaskIdParams(rec: Rec, ctx: Ctx): { id: string; metadata?: JsonObject } {
  const id = optId(rec.id, 'id', ctx);
  if (id === undefined) throw ctx.fail('id', 'is required');
  const out: { id: string; metadata?: JsonObject } = { id };
  const metadata = optJsonObject(rec.metadata, 'metadata', ctx);
  if (metadata !== undefined) out.metadata = metadata;
  return out;
}

function decodeParams(op: A2AOperation, params: unknown): A2ARequest {
  const ctx = REQUEST;
  const rec = params === undefined ? {} : checkRecord(params, 'params', ctx);
  switch (op) {
    case 'send':
      return { method: 'send', params: decodeSendParams(rec, ctx) };
    case 'stream':
      return { method: 'stream', params: decodeSendParams(rec, ctx) };
    case 'get': {
      const { id } = decodeTaskIdParams(rec, ctx);
      const historyLength = optHistoryLength(rec.historyLength, 'historyLength', ctx);
      return { method: 'get', params: historyLength === undefined ? { id } : { id, historyLength } };
    }
    case 'cancel':
      return { method: 'cancel', params: decodeTaskIdParams(rec, ctx) };
    case 'subscribe': {
      const { id } = decodeTaskIdParams(rec, ctx);
      return { method: 'subscribe', params: { id } };
    }
    case 'extended-card':
      return { method: 'extended-card', params: {} };
    case 'push-config':
      // Airlock does not offer push notifications: the service answers -32003 whatever the body.
      return { method: 'push-config', params: {} };
    case 'list':
      // Not in METHODS; kept for exhaustiveness.
      return unsupportedList();
  }
}

function decodeRequest(method: string, params: unknown): A2ARequest {
  const op = METHODS.get(method);
  if (op === undefined) throw new A2AError('METHOD_NOT_FOUND');
  return guard(REQUEST, () => decodeParams(op, params));
}

// --- client side -----------------------------------------------------------------------------

/**
 * `blocking` is always sent explicitly: a2a-js reads "configuration present, blocking absent"
 * as non-blocking, unlike 0.3 servers, so leaving it out would be ambiguous.
 */
function encodeSendParams(params: SendParams): Record<string, unknown> {
  const config = params.configuration;
  const wireConfig: Record<string, unknown> = { blocking: !config.returnImmediately };
  if (config.acceptedOutputModes !== undefined) wireConfig.acceptedOutputModes = config.acceptedOutputModes;
  if (config.historyLength !== undefined) wireConfig.historyLength = config.historyLength;
  const out: Record<string, unknown> = { message: encodeMessage(params.message), configuration: wireConfig };
  if (params.metadata !== undefined) out.metadata = params.metadata;
  return out;
}

function encodeRequest(request: A2ARequest): EncodedRequest {
  switch (request.method) {
    case 'send':
      return { method: 'message/send', params: encodeSendParams(request.params) };
    case 'stream':
      return { method: 'message/stream', params: encodeSendParams(request.params) };
    case 'get': {
      const out: Record<string, unknown> = { id: request.params.id };
      if (request.params.historyLength !== undefined) out.historyLength = request.params.historyLength;
      return { method: 'tasks/get', params: out };
    }
    case 'cancel': {
      const out: Record<string, unknown> = { id: request.params.id };
      if (request.params.metadata !== undefined) out.metadata = request.params.metadata;
      return { method: 'tasks/cancel', params: out };
    }
    case 'subscribe':
      return { method: 'tasks/resubscribe', params: { id: request.params.id } };
    case 'extended-card':
      return { method: 'agent/getAuthenticatedExtendedCard', params: {} };
    case 'list':
      return unsupportedList();
    case 'push-config':
      throw new A2AError('UNSUPPORTED_OPERATION', 'Push notification config requests cannot be encoded');
  }
}

function decodeTask(result: unknown): Task {
  return guard(RESPONSE, () => decodeTaskWith(V03_WIRE, result, 'result', RESPONSE));
}

/** The `kind` of a bare result; inferred from its shape when a lenient server leaves it out. */
function resultKind(rec: Rec): unknown {
  if (!isAbsent(rec.kind)) return rec.kind;
  if (!isAbsent(rec.messageId)) return 'message';
  if (!isAbsent(rec.artifact)) return 'artifact-update';
  if (!isAbsent(rec.taskId) && !isAbsent(rec.status)) return 'status-update';
  if (!isAbsent(rec.id) && !isAbsent(rec.status)) return 'task';
  return undefined;
}

function decodeSendResult(result: unknown): SendResult {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    const kind = resultKind(rec);
    if (kind === 'task') return { kind: 'task', task: decodeTaskWith(V03_WIRE, rec, 'result', ctx) };
    if (kind === 'message') return { kind: 'message', message: decodeMessage(V03_WIRE, rec, 'result', ctx) };
    throw ctx.fail('result.kind', 'must be "task" or "message"');
  });
}

function decodeStreamEvent(result: unknown): StreamEvent {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    switch (resultKind(rec)) {
      case 'task':
        return { kind: 'task', task: decodeTaskWith(V03_WIRE, rec, 'result', ctx) };
      case 'message':
        return { kind: 'message', message: decodeMessage(V03_WIRE, rec, 'result', ctx) };
      case 'status-update': {
        const head = decodeEventHead(rec, 'result', ctx);
        const status = decodeStatus(V03_WIRE, rec.status, 'result.status', ctx);
        const event: TaskStatusUpdateEvent = {
          kind: 'status-update',
          taskId: head.taskId,
          contextId: head.contextId,
          status,
          // Required in v0.3; a server that leaves it out is read as ending on terminal states.
          final: optBool(rec.final, 'result.final', ctx) ?? isTerminalState(status.state),
        };
        if (head.metadata !== undefined) event.metadata = head.metadata;
        return event;
      }
      case 'artifact-update': {
        const head = decodeEventHead(rec, 'result', ctx);
        const event: TaskArtifactUpdateEvent = {
          kind: 'artifact-update',
          taskId: head.taskId,
          contextId: head.contextId,
          artifact: decodeArtifact(V03_WIRE, rec.artifact, 'result.artifact', ctx),
        };
        const append = optBool(rec.append, 'result.append', ctx);
        if (append !== undefined) event.append = append;
        const lastChunk = optBool(rec.lastChunk, 'result.lastChunk', ctx);
        if (lastChunk !== undefined) event.lastChunk = lastChunk;
        if (head.metadata !== undefined) event.metadata = head.metadata;
        return event;
      }
      default:
        throw ctx.fail('result.kind', 'must be "task", "message", "status-update" or "artifact-update"');
    }
  });
}

/**
 * The A2A v0.3 JSON-RPC dialect.
 *
 * @example
 * ```ts
 * const frame = jsonRpcResult(id, v03.encodeStreamEvent({ ...statusEvent, final: true }));
 * ```
 */
export const v03: Dialect = {
  version: '0.3',
  hasMethod: (method) => METHODS.has(method),
  decodeRequest,
  encodeSendResult,
  encodeTask,
  encodeListResult: unsupportedList,
  encodeStreamEvent,
  encodeError,
  encodeCard: encodeCardV03,
  encodeRequest,
  decodeSendResult,
  decodeTask,
  decodeListResult: unsupportedList,
  decodeStreamEvent,
  decodeError: decodeRpcError,
  decodeCard: decodeAnyCard,
};
