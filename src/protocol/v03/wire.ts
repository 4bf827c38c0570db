/**
 * The A2A v0.3 wire vocabulary (digest §2–§8): the shapes that go into `params` / `result`
 * (`kind` tags, `file:{bytes|uri, mimeType?, name?}` parts, object-only data parts), the
 * `category/action` method names, and what v0.3 cannot carry at all (ListTasks). Both halves
 * of the codec (`server.ts`, `client.ts`) speak it.
 *
 * @example
 * ```ts
 * V03_METHODS.includes('message/send'); // true
 * ```
 */
import { A2AError } from '../errors.js';
import type { A2AOperation, JsonObject, Role, TaskState } from '../model.js';

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
// Methods

/**
 * The v0.3 JSON-RPC method names and the operation each one asks for.
 *
 * @example
 * ```ts
 * METHODS.get('tasks/get'); // 'get'
 * ```
 */
export const METHODS: ReadonlyMap<string, A2AOperation> = new Map<string, A2AOperation>([
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

/**
 * Metadata flag of a wrapped non-object data value (a2a-js compatible).
 *
 * @example
 * ```ts
 * part.metadata?.[DATA_PART_COMPAT] === true; // data was `{ value: x }` around a non-object x
 * ```
 */
export const DATA_PART_COMPAT = 'data_part_compat';

/**
 * Throws UNSUPPORTED_OPERATION: v0.3 has no ListTasks, in either direction.
 *
 * @example
 * ```ts
 * encodeListResult: unsupportedList, // in the v0.3 dialect
 * ```
 */
export function unsupportedList(): never {
  throw new A2AError('UNSUPPORTED_OPERATION', 'ListTasks is not available in A2A v0.3');
}
