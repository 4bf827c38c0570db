/**
 * The A2A v1.0 wire vocabulary (digest §2–§8): the shapes that go into `params` / `result`,
 * the PascalCase method names, and the ProtoJSON enum names (`TASK_STATE_*`, `ROLE_*`). Both
 * halves of the codec (`server.ts`, `client.ts`) speak it.
 *
 * @example
 * ```ts
 * taskStateToV10('input-required'); // 'TASK_STATE_INPUT_REQUIRED'
 * ```
 */
import type { A2AOperation, JsonObject, JsonValue, Role, TaskState } from '../model.js';

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

/**
 * The v1.0 JSON-RPC method names and the operation each one asks for.
 *
 * @example
 * ```ts
 * METHODS.get('SendMessage'); // 'send'
 * ```
 */
export const METHODS: ReadonlyMap<string, A2AOperation> = new Map<string, A2AOperation>([
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

/**
 * Canonical state → v1.0 TaskState name.
 *
 * @example
 * ```ts
 * STATE_TO_WIRE.working; // 'TASK_STATE_WORKING'
 * ```
 */
export const STATE_TO_WIRE: Readonly<Record<TaskState, V10TaskState>> = {
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

/**
 * v1.0 TaskState name → canonical state (keys are `unknown` so wire values look up unchecked).
 *
 * @example
 * ```ts
 * STATE_FROM_WIRE.get('TASK_STATE_WORKING'); // 'working'
 * ```
 */
export const STATE_FROM_WIRE: ReadonlyMap<unknown, TaskState> = new Map<unknown, TaskState>(
  Object.entries(STATE_TO_WIRE).map(([state, wire]) => [wire, state as TaskState]),
);

/**
 * Canonical role → v1.0 Role name.
 *
 * @example
 * ```ts
 * ROLE_TO_WIRE.user; // 'ROLE_USER'
 * ```
 */
export const ROLE_TO_WIRE: Readonly<Record<Role, V10Role>> = { user: 'ROLE_USER', agent: 'ROLE_AGENT' };

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
