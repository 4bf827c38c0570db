/**
 * The A2A v1.0 JSON-RPC codec (digest §2–§8): PascalCase methods, ProtoJSON enums
 * (`TASK_STATE_*`, `ROLE_*`), parts as `{text}|{raw}|{url}|{data}`, SendMessage results
 * wrapped as `{task}`/`{message}`, stream events as `{task}|{message}|{statusUpdate}|{artifactUpdate}`
 * (no `kind`, no `final`), errors with google.rpc ErrorInfo / BadRequest details.
 *
 * ProtoJSON reading rules applied by the decoders: unknown fields are ignored, `null` and
 * (for strings) `""` mean unset. Encoders emit only fields that are set.
 *
 * @example
 * ```ts
 * const request = v10.decodeRequest('SendMessage', {
 *   message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] },
 * });
 * // { method: 'send', params: { message: { messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hello' }] },
 * //                             configuration: { returnImmediately: false } } }
 * ```
 */
import { A2AError, errorReason } from './errors.js';
import type { Dialect, EncodedRequest, JsonRpcErrorObject } from './dialect.js';
import type {
  A2AOperation,
  A2ARequest,
  Artifact,
  JsonObject,
  JsonValue,
  ListTasksParams,
  ListTasksResult,
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
import { isTerminalState } from './model.js';
import { decodeAnyCard, encodeCardV10 } from './card.js';
import {
  A2A_ERROR_DOMAIN,
  ERROR_DETAIL_TYPES,
  LIMITS,
  REQUEST,
  RESPONSE,
  checkBase64,
  checkJson,
  checkRecord,
  checkTimestamp,
  checkUrl,
  decodeArtifact,
  decodeEventHead,
  decodeMessage,
  decodeRpcError,
  decodeStatus,
  decodeTaskList,
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
  optInt,
  optJsonObject,
  optString,
  optStringList,
  setPartExtras,
} from './validate.js';
import type { Ctx, JsonWriters, Rec, WireFormat } from './validate.js';

// ---------------------------------------------------------------------------------------------
// Wire shapes (what goes into `params` / `result`)

/** v1.0 TaskState names (ProtoJSON). */
export type V10TaskState =
  | 'TASK_STATE_UNSPECIFIED'
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_REJECTED'
  | 'TASK_STATE_AUTH_REQUIRED';

/** v1.0 Role names, e.g. `'ROLE_USER'` for a caller's message. */
export type V10Role = 'ROLE_USER' | 'ROLE_AGENT';

/** Exactly one of `text`, `raw`, `url`, `data`. */
export interface V10Part {
  text?: string;
  raw?: string;
  url?: string;
  data?: JsonValue;
  mediaType?: string;
  filename?: string;
  metadata?: JsonObject;
}

/** A v1.0 Message, e.g. `{ messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }`. */
export interface V10Message {
  messageId: string;
  role: V10Role;
  parts: V10Part[];
  contextId?: string;
  taskId?: string;
  metadata?: JsonObject;
  extensions?: string[];
  referenceTaskIds?: string[];
}

/** A v1.0 TaskStatus, e.g. `{ state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T00:00:00.000Z' }`. */
export interface V10TaskStatus {
  state: V10TaskState;
  message?: V10Message;
  timestamp?: string;
}

/** A v1.0 Artifact, e.g. `{ artifactId: 'a-1', parts: [{ text: 'result' }] }`. */
export interface V10Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: V10Part[];
  metadata?: JsonObject;
  extensions?: string[];
}

/** Empty `artifacts`/`history` are omitted, as ProtoJSON does (and ListTasks requires). */
export interface V10Task {
  id: string;
  contextId: string;
  status: V10TaskStatus;
  artifacts?: V10Artifact[];
  history?: V10Message[];
  metadata?: JsonObject;
}

/** The `statusUpdate` member of a StreamResponse, e.g. `{ taskId, contextId, status }` (no `final`). */
export interface V10StatusUpdate {
  taskId: string;
  contextId: string;
  status: V10TaskStatus;
  metadata?: JsonObject;
}

/** The `artifactUpdate` member of a StreamResponse, e.g. `{ taskId, contextId, artifact, append: true }`. */
export interface V10ArtifactUpdate {
  taskId: string;
  contextId: string;
  artifact: V10Artifact;
  append?: boolean;
  lastChunk?: boolean;
  metadata?: JsonObject;
}

/** The SendMessage result: wrapped, e.g. `{ task: {...} }` or `{ message: {...} }` (§9.4.1). */
export type V10SendMessageResponse = { task: V10Task } | { message: V10Message };

/** One SSE `result` of a v1.0 stream, e.g. `{ statusUpdate: {...} }`; exactly one member. */
export type V10StreamResponse =
  | { task: V10Task }
  | { message: V10Message }
  | { statusUpdate: V10StatusUpdate }
  | { artifactUpdate: V10ArtifactUpdate };

/** The ListTasks result, e.g. `{ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 }`. */
export interface V10ListTasksResponse {
  tasks: V10Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

// ---------------------------------------------------------------------------------------------
// Methods and enums

const METHODS: ReadonlyMap<string, A2AOperation> = new Map<string, A2AOperation>([
  ['SendMessage', 'send'],
  ['SendStreamingMessage', 'stream'],
  ['GetTask', 'get'],
  ['ListTasks', 'list'],
  ['CancelTask', 'cancel'],
  ['SubscribeToTask', 'subscribe'],
  ['GetExtendedAgentCard', 'extended-card'],
  ['CreateTaskPushNotificationConfig', 'push-config'],
  ['GetTaskPushNotificationConfig', 'push-config'],
  ['ListTaskPushNotificationConfigs', 'push-config'],
  ['DeleteTaskPushNotificationConfig', 'push-config'],
]);

/**
 * The v1.0 JSON-RPC method names, in spec order.
 *
 * @example
 * ```ts
 * V10_METHODS.includes('SendMessage'); // true
 * ```
 */
export const V10_METHODS: readonly string[] = [...METHODS.keys()];

const STATE_TO_WIRE: Readonly<Record<TaskState, V10TaskState>> = {
  unknown: 'TASK_STATE_UNSPECIFIED',
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
};

const STATE_FROM_WIRE: ReadonlyMap<unknown, TaskState> = new Map<unknown, TaskState>(
  Object.entries(STATE_TO_WIRE).map(([state, wire]) => [wire, state as TaskState]),
);

/** Proto enum numbers; ProtoJSON readers must accept them, so remote results may use them. */
const STATE_BY_NUMBER: readonly TaskState[] = [
  'unknown',
  'submitted',
  'working',
  'completed',
  'failed',
  'canceled',
  'input-required',
  'rejected',
  'auth-required',
];

const ROLE_TO_WIRE: Readonly<Record<Role, V10Role>> = { user: 'ROLE_USER', agent: 'ROLE_AGENT' };
const ROLE_FROM_WIRE: ReadonlyMap<unknown, Role> = new Map<unknown, Role>([
  ['ROLE_USER', 'user'],
  ['ROLE_AGENT', 'agent'],
]);
const ROLE_BY_NUMBER: ReadonlyMap<unknown, Role> = new Map<unknown, Role>([
  [1, 'user'],
  [2, 'agent'],
]);

/**
 * A v1.0 TaskState name as a canonical state, or undefined if it is not one.
 *
 * @example
 * ```ts
 * taskStateFromV10('TASK_STATE_INPUT_REQUIRED'); // 'input-required'
 * ```
 */
export function taskStateFromV10(name: string): TaskState | undefined {
  return STATE_FROM_WIRE.get(name);
}

/**
 * A canonical state as its v1.0 name.
 *
 * @example
 * ```ts
 * taskStateToV10('canceled'); // 'TASK_STATE_CANCELED'
 * ```
 */
export function taskStateToV10(state: TaskState): V10TaskState {
  return STATE_TO_WIRE[state];
}

// ---------------------------------------------------------------------------------------------
// Encoders (hot path: object literals and loops, data and metadata passed by reference)

function encodePart(part: Part): V10Part {
  const out: V10Part = partContent(part);
  if (part.mediaType !== undefined) out.mediaType = part.mediaType;
  if (part.filename !== undefined) out.filename = part.filename;
  if (part.metadata !== undefined) out.metadata = part.metadata;
  return out;
}

function partContent(part: Part): V10Part {
  switch (part.kind) {
    case 'text':
      return { text: part.text };
    case 'raw':
      return { raw: part.raw };
    case 'url':
      return { url: part.url };
    case 'data':
      return { data: part.data };
  }
}

function encodeParts(parts: readonly Part[]): V10Part[] {
  const out: V10Part[] = [];
  for (let i = 0; i < parts.length; i++) out.push(encodePart(parts[i] as Part));
  return out;
}

function encodeMessage(message: Message): V10Message {
  const out: V10Message = {
    messageId: message.messageId,
    role: ROLE_TO_WIRE[message.role],
    parts: encodeParts(message.parts),
  };
  if (message.contextId !== undefined) out.contextId = message.contextId;
  if (message.taskId !== undefined) out.taskId = message.taskId;
  if (message.metadata !== undefined) out.metadata = message.metadata;
  if (message.extensions !== undefined) out.extensions = message.extensions;
  if (message.referenceTaskIds !== undefined) out.referenceTaskIds = message.referenceTaskIds;
  return out;
}

function encodeStatus(status: TaskStatus): V10TaskStatus {
  const out: V10TaskStatus = { state: STATE_TO_WIRE[status.state] };
  if (status.message !== undefined) out.message = encodeMessage(status.message);
  out.timestamp = status.timestamp;
  return out;
}

function encodeArtifact(artifact: Artifact): V10Artifact {
  const out: V10Artifact = { artifactId: artifact.artifactId, parts: encodeParts(artifact.parts) };
  if (artifact.name !== undefined) out.name = artifact.name;
  if (artifact.description !== undefined) out.description = artifact.description;
  if (artifact.metadata !== undefined) out.metadata = artifact.metadata;
  if (artifact.extensions !== undefined) out.extensions = artifact.extensions;
  return out;
}

function encodeTask(task: Task): V10Task {
  const out: V10Task = { id: task.id, contextId: task.contextId, status: encodeStatus(task.status) };
  if (task.artifacts.length > 0) {
    const artifacts: V10Artifact[] = [];
    for (let i = 0; i < task.artifacts.length; i++) artifacts.push(encodeArtifact(task.artifacts[i] as Artifact));
    out.artifacts = artifacts;
  }
  if (task.history.length > 0) {
    const history: V10Message[] = [];
    for (let i = 0; i < task.history.length; i++) history.push(encodeMessage(task.history[i] as Message));
    out.history = history;
  }
  if (task.metadata !== undefined) out.metadata = task.metadata;
  return out;
}

function encodeSendResult(result: SendResult): V10SendMessageResponse {
  return result.kind === 'task' ? { task: encodeTask(result.task) } : { message: encodeMessage(result.message) };
}

function encodeStatusUpdate(event: TaskStatusUpdateEvent): V10StatusUpdate {
  const out: V10StatusUpdate = {
    taskId: event.taskId,
    contextId: event.contextId,
    status: encodeStatus(event.status),
  };
  if (event.metadata !== undefined) out.metadata = event.metadata;
  return out;
}

function encodeArtifactUpdate(event: TaskArtifactUpdateEvent): V10ArtifactUpdate {
  const out: V10ArtifactUpdate = {
    taskId: event.taskId,
    contextId: event.contextId,
    artifact: encodeArtifact(event.artifact),
  };
  if (event.append !== undefined) out.append = event.append;
  if (event.lastChunk !== undefined) out.lastChunk = event.lastChunk;
  if (event.metadata !== undefined) out.metadata = event.metadata;
  return out;
}

/** `final` is dropped: a v1.0 stream ends when the server closes it. */
function encodeStreamEvent(event: StreamEvent): V10StreamResponse {
  switch (event.kind) {
    case 'task':
      return { task: encodeTask(event.task) };
    case 'message':
      return { message: encodeMessage(event.message) };
    case 'status-update':
      return { statusUpdate: encodeStatusUpdate(event) };
    case 'artifact-update':
      return { artifactUpdate: encodeArtifactUpdate(event) };
  }
}

function encodeListResult(result: ListTasksResult): V10ListTasksResponse {
  const tasks: V10Task[] = [];
  for (let i = 0; i < result.tasks.length; i++) tasks.push(encodeTask(result.tasks[i] as Task));
  return {
    tasks,
    nextPageToken: result.nextPageToken,
    pageSize: result.pageSize,
    totalSize: result.totalSize,
  };
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

function writeTextPart(part: TextPart): string {
  let out = `{"text":${jsonString(part.text)}`;
  if (part.mediaType !== undefined) out += `,"mediaType":${jsonString(part.mediaType)}`;
  if (part.filename !== undefined) out += `,"filename":${jsonString(part.filename)}`;
  if (part.metadata !== undefined) out += `,"metadata":${JSON.stringify(part.metadata)}`;
  return `${out}}`;
}

function writeMessage(message: Message): string {
  let out = `{"messageId":${jsonString(message.messageId)},"role":${jsonString(ROLE_TO_WIRE[message.role])}`;
  out += `,"parts":${writeParts(message.parts)}`;
  return `${out}${messageTailJson(message)}}`;
}

function writeStatus(status: TaskStatus): string {
  const message = status.message === undefined ? '' : `,"message":${writeMessage(status.message)}`;
  return `{"state":${jsonString(STATE_TO_WIRE[status.state])}${message},"timestamp":${jsonString(status.timestamp)}}`;
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
  let out = `{"id":${jsonString(task.id)},"contextId":${jsonString(task.contextId)}`;
  out += `,"status":${writeStatus(task.status)}`;
  out += jsonListField('artifacts', task.artifacts, writeArtifact);
  out += jsonListField('history', task.history, writeMessage);
  if (task.metadata !== undefined) out += `,"metadata":${JSON.stringify(task.metadata)}`;
  return `${out}}`;
}

function writeSendResult(result: SendResult): string {
  return result.kind === 'task' ? `{"task":${writeTask(result.task)}}` : `{"message":${writeMessage(result.message)}}`;
}

/**
 * v1.0 results as JSON text: `V10_JSON.sendResult(r) === JSON.stringify(v10.encodeSendResult(r))`
 * and `V10_JSON.task(t) === JSON.stringify(v10.encodeTask(t))`, without the wire objects.
 *
 * @example
 * ```ts
 * const body = `{"jsonrpc":"2.0","id":1,"result":${V10_JSON.sendResult(result)}}`;
 * ```
 */
export const V10_JSON: JsonWriters = { sendResult: writeSendResult, task: writeTask };

/**
 * JSON-RPC error with the v1.0 details (§9.5): always an ErrorInfo; a BadRequest field
 * violation when the error names a field.
 */
function encodeError(error: A2AError): JsonRpcErrorObject {
  const data: Rec[] = [
    { '@type': ERROR_DETAIL_TYPES.errorInfo, reason: errorReason(error.code), domain: A2A_ERROR_DOMAIN },
  ];
  if (error.field !== undefined) {
    data.push({
      '@type': ERROR_DETAIL_TYPES.badRequest,
      fieldViolations: [{ field: error.field, description: error.message }],
    });
  }
  return { code: error.rpcCode, message: error.message, data };
}

// ---------------------------------------------------------------------------------------------
// Decoders

function decodeRole(value: unknown, path: string, ctx: Ctx): Role {
  const role = ROLE_FROM_WIRE.get(value) ?? (ctx.inbound ? undefined : ROLE_BY_NUMBER.get(value));
  if (role !== undefined) return role;
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be ROLE_USER or ROLE_AGENT');
}

function decodeState(value: unknown, path: string, ctx: Ctx): TaskState {
  let state = STATE_FROM_WIRE.get(value);
  if (state === undefined && !ctx.inbound && typeof value === 'number') state = STATE_BY_NUMBER[value];
  if (state !== undefined) return state;
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be a TASK_STATE_* name');
}

/**
 * One part: exactly one content member. `null` text/raw/url count as unset (ProtoJSON);
 * `data: null` is a JSON null value and counts as content.
 */
function decodePart(value: unknown, path: string, ctx: Ctx): Part {
  const rec = checkRecord(value, path, ctx);
  const hasText = !isAbsent(rec.text);
  const hasRaw = !isAbsent(rec.raw);
  const hasUrl = !isAbsent(rec.url);
  const hasData = rec.data !== undefined;
  if (Number(hasText) + Number(hasRaw) + Number(hasUrl) + Number(hasData) !== 1) {
    throw ctx.fail(path, 'must have exactly one of text, raw, url or data');
  }
  let part: Part;
  if (hasText) {
    if (typeof rec.text !== 'string') throw ctx.fail(`${path}.text`, 'must be a string');
    part = { kind: 'text', text: rec.text };
  } else if (hasRaw) {
    part = { kind: 'raw', raw: checkBase64(rec.raw, `${path}.raw`, ctx) };
  } else if (hasUrl) {
    part = { kind: 'url', url: checkUrl(rec.url, `${path}.url`, ctx) };
  } else {
    part = { kind: 'data', data: checkJson(rec.data, `${path}.data`, ctx) };
  }
  return setPartExtras(
    part,
    optString(rec.mediaType, `${path}.mediaType`, ctx, LIMITS.mediaTypeLength, true),
    optString(rec.filename, `${path}.filename`, ctx, LIMITS.filenameLength, true),
    optJsonObject(rec.metadata, `${path}.metadata`, ctx),
  );
}

/**
 * The v1.0 wire rules for the shared structural decoders.
 *
 * @example
 * ```ts
 * decodeMessage(V10_WIRE, wireMessage, 'message', REQUEST);
 * ```
 */
export const V10_WIRE: WireFormat = {
  kindTags: false,
  emptyIsUnset: true,
  taskContextRequired: false,
  decodePart,
  decodeRole,
  decodeState,
};

function decodeTenant(rec: Rec, ctx: Ctx): string | undefined {
  return optId(rec.tenant, 'tenant', ctx, true);
}

function decodeSendConfiguration(value: unknown, ctx: Ctx): SendConfiguration {
  if (isAbsent(value)) return { returnImmediately: false };
  const rec = checkRecord(value, 'configuration', ctx);
  const config: SendConfiguration = {
    returnImmediately: optBool(rec.returnImmediately, 'configuration.returnImmediately', ctx) ?? false,
  };
  const historyLength = optHistoryLength(rec.historyLength, 'configuration.historyLength', ctx);
  if (historyLength !== undefined) config.historyLength = historyLength;
  const modes = optStringList(rec.acceptedOutputModes, 'configuration.acceptedOutputModes', ctx);
  if (modes !== undefined) config.acceptedOutputModes = modes;
  // Inline push configs are not supported by Airlock; the type is still checked (§5.7).
  if (!isAbsent(rec.taskPushNotificationConfig)) {
    checkRecord(rec.taskPushNotificationConfig, 'configuration.taskPushNotificationConfig', ctx);
  }
  return config;
}

function decodeSendParams(rec: Rec, ctx: Ctx): SendParams {
  const params: SendParams = {
    message: decodeMessage(V10_WIRE, rec.message, 'message', ctx),
    configuration: decodeSendConfiguration(rec.configuration, ctx),
  };
  const metadata = optJsonObject(rec.metadata, 'metadata', ctx);
  if (metadata !== undefined) params.metadata = metadata;
  const tenant = decodeTenant(rec, ctx);
  if (tenant !== undefined) params.tenant = tenant;
  return params;
}

const PAGE_SIZE_DEFAULT = 50;
const PAGE_SIZE_MAX = 100;

function decodeListStatus(value: unknown, ctx: Ctx): TaskState | undefined {
  if (isAbsent(value)) return undefined;
  const state = STATE_FROM_WIRE.get(value);
  if (state === undefined || state === 'unknown') {
    throw ctx.fail('status', 'must be a TASK_STATE_* name other than TASK_STATE_UNSPECIFIED');
  }
  return state;
}

function decodeListParams(rec: Rec, ctx: Ctx): ListTasksParams {
  const params: ListTasksParams = {
    pageSize: optInt(rec.pageSize, 'pageSize', ctx, 1, PAGE_SIZE_MAX) ?? PAGE_SIZE_DEFAULT,
    includeArtifacts: optBool(rec.includeArtifacts, 'includeArtifacts', ctx) ?? false,
  };
  const contextId = optId(rec.contextId, 'contextId', ctx, true);
  if (contextId !== undefined) params.contextId = contextId;
  const status = decodeListStatus(rec.status, ctx);
  if (status !== undefined) params.status = status;
  const pageToken = optString(rec.pageToken, 'pageToken', ctx, LIMITS.pageToken, true);
  if (pageToken !== undefined) params.pageToken = pageToken;
  const historyLength = optHistoryLength(rec.historyLength, 'historyLength', ctx);
  if (historyLength !== undefined) params.historyLength = historyLength;
  if (!isAbsent(rec.statusTimestampAfter)) {
    params.statusTimestampAfter = checkTimestamp(rec.statusTimestampAfter, 'statusTimestampAfter', ctx);
  }
  const tenant = decodeTenant(rec, ctx);
  if (tenant !== undefined) params.tenant = tenant;
  return params;
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
      const out: { id: string; historyLength?: number; tenant?: string } = { id: decodeTaskRef(rec, ctx) };
      const historyLength = optHistoryLength(rec.historyLength, 'historyLength', ctx);
      if (historyLength !== undefined) out.historyLength = historyLength;
      const tenant = decodeTenant(rec, ctx);
      if (tenant !== undefined) out.tenant = tenant;
      return { method: 'get', params: out };
    }
    case 'list':
      return { method: 'list', params: decodeListParams(rec, ctx) };
    case 'cancel': {
      const out: { id: string; metadata?: JsonObject; tenant?: string } = { id: decodeTaskRef(rec, ctx) };
      const metadata = optJsonObject(rec.metadata, 'metadata', ctx);
      if (metadata !== undefined) out.metadata = metadata;
      const tenant = decodeTenant(rec, ctx);
      if (tenant !== undefined) out.tenant = tenant;
      return { method: 'cancel', params: out };
    }
    case 'subscribe': {
      const out: { id: string; tenant?: string } = { id: decodeTaskRef(rec, ctx) };
      const tenant = decodeTenant(rec, ctx);
      if (tenant !== undefined) out.tenant = tenant;
      return { method: 'subscribe', params: out };
    }
    case 'extended-card': {
      const tenant = decodeTenant(rec, ctx);
      return { method: 'extended-card', params: tenant === undefined ? {} : { tenant } };
    }
    case 'push-config':
      // Airlock does not offer push notifications: the service answers -32003 whatever the body.
      return { method: 'push-config', params: {} };
  }
}

/** `id` of GetTask / CancelTask / SubscribeToTask: a required task identifier. */
function decodeTaskRef(rec: Rec, ctx: Ctx): string {
  return optIdRequired(rec.id, 'id', ctx);
}

function optIdRequired(value: unknown, path: string, ctx: Ctx): string {
  const id = optId(value, path, ctx, true);
  if (id === undefined) throw ctx.fail(path, 'is required');
  return id;
}

function decodeRequest(method: string, params: unknown): A2ARequest {
  const op = METHODS.get(method);
  if (op === undefined) throw new A2AError('METHOD_NOT_FOUND');
  return guard(REQUEST, () => decodeParams(op, params));
}

// --- client side -----------------------------------------------------------------------------

function encodeSendParams(params: SendParams): Record<string, unknown> {
  const out: Record<string, unknown> = { message: encodeMessage(params.message) };
  const config = params.configuration;
  const wireConfig: Record<string, unknown> = {};
  if (config.acceptedOutputModes !== undefined) wireConfig.acceptedOutputModes = config.acceptedOutputModes;
  if (config.historyLength !== undefined) wireConfig.historyLength = config.historyLength;
  if (config.returnImmediately) wireConfig.returnImmediately = true;
  if (Object.keys(wireConfig).length > 0) out.configuration = wireConfig;
  if (params.metadata !== undefined) out.metadata = params.metadata;
  if (params.tenant !== undefined) out.tenant = params.tenant;
  return out;
}

function encodeListParams(params: ListTasksParams): Record<string, unknown> {
  const out: Record<string, unknown> = { pageSize: params.pageSize };
  if (params.contextId !== undefined) out.contextId = params.contextId;
  if (params.status !== undefined) out.status = STATE_TO_WIRE[params.status];
  if (params.pageToken !== undefined) out.pageToken = params.pageToken;
  if (params.historyLength !== undefined) out.historyLength = params.historyLength;
  if (params.statusTimestampAfter !== undefined) {
    out.statusTimestampAfter = new Date(params.statusTimestampAfter).toISOString();
  }
  if (params.includeArtifacts) out.includeArtifacts = true;
  if (params.tenant !== undefined) out.tenant = params.tenant;
  return out;
}

function withTenant(out: Record<string, unknown>, tenant: string | undefined): Record<string, unknown> {
  if (tenant !== undefined) out.tenant = tenant;
  return out;
}

function encodeRequest(request: A2ARequest): EncodedRequest {
  switch (request.method) {
    case 'send':
      return { method: 'SendMessage', params: encodeSendParams(request.params) };
    case 'stream':
      return { method: 'SendStreamingMessage', params: encodeSendParams(request.params) };
    case 'get': {
      const out: Record<string, unknown> = { id: request.params.id };
      if (request.params.historyLength !== undefined) out.historyLength = request.params.historyLength;
      return { method: 'GetTask', params: withTenant(out, request.params.tenant) };
    }
    case 'list':
      return { method: 'ListTasks', params: encodeListParams(request.params) };
    case 'cancel': {
      const out: Record<string, unknown> = { id: request.params.id };
      if (request.params.metadata !== undefined) out.metadata = request.params.metadata;
      return { method: 'CancelTask', params: withTenant(out, request.params.tenant) };
    }
    case 'subscribe':
      return { method: 'SubscribeToTask', params: withTenant({ id: request.params.id }, request.params.tenant) };
    case 'extended-card':
      return { method: 'GetExtendedAgentCard', params: withTenant({}, request.params.tenant) };
    case 'push-config':
      throw new A2AError('UNSUPPORTED_OPERATION', 'Push notification config requests cannot be encoded');
  }
}

function decodeTask(result: unknown): Task {
  return guard(RESPONSE, () => decodeTaskWith(V10_WIRE, result, 'result', RESPONSE));
}

/** True when a bare object looks like a Task rather than a Message (lenient fallback). */
function looksLikeTask(rec: Rec): boolean {
  return !isAbsent(rec.status) && !isAbsent(rec.id);
}

function decodeSendResult(result: unknown): SendResult {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    const hasTask = !isAbsent(rec.task);
    const hasMessage = !isAbsent(rec.message);
    if (hasTask && hasMessage) throw ctx.fail('result', 'must hold either a task or a message');
    if (hasTask) return { kind: 'task', task: decodeTaskWith(V10_WIRE, rec.task, 'result.task', ctx) };
    if (hasMessage) return { kind: 'message', message: decodeMessage(V10_WIRE, rec.message, 'result.message', ctx) };
    // Some servers return the bare object (the a2a-python#1192 reading of §9.4.1); accept it.
    if (looksLikeTask(rec)) return { kind: 'task', task: decodeTaskWith(V10_WIRE, rec, 'result', ctx) };
    if (!isAbsent(rec.messageId)) return { kind: 'message', message: decodeMessage(V10_WIRE, rec, 'result', ctx) };
    throw ctx.fail('result', 'must hold a task or a message');
  });
}

const STREAM_MEMBERS = ['task', 'message', 'statusUpdate', 'artifactUpdate'] as const;

/**
 * A StreamResponse. v1.0 has no `final`: the canonical `final` is set for terminal states,
 * which a v1.0 server must close the stream after; callers should still treat the stream's
 * end as the end.
 */
function decodeStreamEvent(result: unknown): StreamEvent {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    let member: (typeof STREAM_MEMBERS)[number] | undefined;
    for (const name of STREAM_MEMBERS) {
      if (isAbsent(rec[name])) continue;
      if (member !== undefined)
        throw ctx.fail('result', 'must hold exactly one of task, message, statusUpdate or artifactUpdate');
      member = name;
    }
    switch (member) {
      case 'task':
        return { kind: 'task', task: decodeTaskWith(V10_WIRE, rec.task, 'result.task', ctx) };
      case 'message':
        return { kind: 'message', message: decodeMessage(V10_WIRE, rec.message, 'result.message', ctx) };
      case 'statusUpdate': {
        const path = 'result.statusUpdate';
        const body = checkRecord(rec.statusUpdate, path, ctx);
        const head = decodeEventHead(body, path, ctx);
        const status = decodeStatus(V10_WIRE, body.status, `${path}.status`, ctx);
        const event: TaskStatusUpdateEvent = {
          kind: 'status-update',
          taskId: head.taskId,
          contextId: head.contextId,
          status,
          final: isTerminalState(status.state),
        };
        if (head.metadata !== undefined) event.metadata = head.metadata;
        return event;
      }
      case 'artifactUpdate': {
        const path = 'result.artifactUpdate';
        const body = checkRecord(rec.artifactUpdate, path, ctx);
        const head = decodeEventHead(body, path, ctx);
        const event: TaskArtifactUpdateEvent = {
          kind: 'artifact-update',
          taskId: head.taskId,
          contextId: head.contextId,
          artifact: decodeArtifact(V10_WIRE, body.artifact, `${path}.artifact`, ctx),
        };
        const append = optBool(body.append, `${path}.append`, ctx);
        if (append !== undefined) event.append = append;
        const lastChunk = optBool(body.lastChunk, `${path}.lastChunk`, ctx);
        if (lastChunk !== undefined) event.lastChunk = lastChunk;
        if (head.metadata !== undefined) event.metadata = head.metadata;
        return event;
      }
      case undefined:
        throw ctx.fail('result', 'must hold one of task, message, statusUpdate or artifactUpdate');
    }
  });
}

/** ListTasksResponse. ProtoJSON omits defaults, so absent counts mean 0 and an absent token ''. */
function decodeListResult(result: unknown): ListTasksResult {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    return {
      tasks: decodeTaskList(V10_WIRE, rec.tasks, 'result.tasks', ctx),
      // A remote's token is opaque and only ever sent back to it; bound it like a URL.
      nextPageToken: optString(rec.nextPageToken, 'result.nextPageToken', ctx, LIMITS.urlLength) ?? '',
      pageSize: optInt(rec.pageSize, 'result.pageSize', ctx, 0, LIMITS.int32Max) ?? 0,
      totalSize: optInt(rec.totalSize, 'result.totalSize', ctx, 0, LIMITS.int32Max) ?? 0,
    };
  });
}

/**
 * The A2A v1.0 JSON-RPC dialect.
 *
 * @example
 * ```ts
 * const frame = jsonRpcResult(id, v10.encodeSendResult({ kind: 'task', task })); // result: { task: {...} }
 * ```
 */
export const v10: Dialect = {
  version: '1.0',
  hasMethod: (method) => METHODS.has(method),
  decodeRequest,
  encodeSendResult,
  encodeTask,
  encodeListResult,
  encodeStreamEvent,
  encodeError,
  encodeCard: encodeCardV10,
  encodeRequest,
  decodeSendResult,
  decodeTask,
  decodeListResult,
  decodeStreamEvent,
  decodeError: decodeRpcError,
  decodeCard: decodeAnyCard,
};
