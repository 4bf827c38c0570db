/**
 * The canonical A2A model: one shape inside Airlock, whatever dialect a caller speaks.
 *
 * It follows the v1.0 data model (parts as text/raw/url/data, camelCase fields) with a
 * `kind` discriminator on parts and stream events so that TypeScript can narrow them.
 * The v1.0 and v0.3 wire shapes are produced and consumed only by the codecs in
 * `v10/` and `v03/`; nothing outside `src/protocol/` sees a wire shape.
 *
 * @example
 * ```ts
 * const part: Part = { kind: 'text', text: 'hello' };
 * const message: Message = { messageId: 'm-1', role: 'user', parts: [part] };
 * ```
 */

/** Task lifecycle states (spec §4.1.3). `unknown` is v1.0's TASK_STATE_UNSPECIFIED and is not terminal. */
export type TaskState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'auth-required'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected'
  | 'unknown';

export const TASK_STATES: readonly TaskState[] = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
  'unknown',
];

/** A task in a terminal state never changes again. */
export function isTerminalState(state: TaskState): boolean {
  return state === 'completed' || state === 'failed' || state === 'canceled' || state === 'rejected';
}

/** An interrupted task waits for its caller (input) or for credentials (auth). */
export function isInterruptedState(state: TaskState): boolean {
  return state === 'input-required' || state === 'auth-required';
}

export type Role = 'user' | 'agent';

/** JSON values as they travel in `data` parts and `metadata`. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

interface PartCommon {
  metadata?: JsonObject;
  /** Media type (v0.3 `mimeType` on file parts). */
  mediaType?: string;
  /** File name (v0.3 `name` on file parts). */
  filename?: string;
}

export interface TextPart extends PartCommon {
  kind: 'text';
  text: string;
}
/** Inline bytes, base64 encoded (v0.3 `file.bytes`). */
export interface RawPart extends PartCommon {
  kind: 'raw';
  raw: string;
}
/** A file by reference (v0.3 `file.uri`). */
export interface UrlPart extends PartCommon {
  kind: 'url';
  url: string;
}
/** Structured data. v1.0 allows any JSON value; v0.3 only objects. */
export interface DataPart extends PartCommon {
  kind: 'data';
  data: JsonValue;
}
export type Part = TextPart | RawPart | UrlPart | DataPart;

export interface Message {
  messageId: string;
  role: Role;
  parts: Part[];
  contextId?: string;
  taskId?: string;
  metadata?: JsonObject;
  extensions?: string[];
  referenceTaskIds?: string[];
}

export interface TaskStatus {
  state: TaskState;
  message?: Message;
  /** ISO 8601 UTC with milliseconds, e.g. `2026-11-29T23:00:00.000Z`. */
  timestamp: string;
}

export interface Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: Part[];
  metadata?: JsonObject;
  extensions?: string[];
}

export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus;
  artifacts: Artifact[];
  history: Message[];
  metadata?: JsonObject;
}

/** A change to a task's status, as streamed. `final` is derived by the v0.3 codec's caller. */
export interface TaskStatusUpdateEvent {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: TaskStatus;
  /** True on the last event of a stream (v0.3 `final`; v1.0 closes the stream instead). */
  final: boolean;
  metadata?: JsonObject;
}

export interface TaskArtifactUpdateEvent {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact: Artifact;
  /** Parts are appended to the artifact already sent with this `artifactId`. */
  append?: boolean;
  /** The last chunk of this artifact. */
  lastChunk?: boolean;
  metadata?: JsonObject;
}

/** One item of an SSE stream, in either dialect. */
export type StreamEvent =
  | { kind: 'task'; task: Task }
  | { kind: 'message'; message: Message }
  | TaskStatusUpdateEvent
  | TaskArtifactUpdateEvent;

/** The answer to SendMessage: a task, or a direct message with no task. */
export type SendResult = { kind: 'task'; task: Task } | { kind: 'message'; message: Message };

// ---------------------------------------------------------------------------------------------
// Requests, after decoding. Every field has been validated by a codec.

export interface SendConfiguration {
  /** v1.0 `returnImmediately`; v0.3 `blocking: false`. Absent means blocking in both. */
  returnImmediately: boolean;
  historyLength?: number;
  acceptedOutputModes?: string[];
  /** A push config given inline (v1.0 `taskPushNotificationConfig`, v0.3 `pushNotificationConfig`). */
  pushConfig?: PushConfigInput;
}

export interface SendParams {
  message: Message;
  configuration: SendConfiguration;
  metadata?: JsonObject;
  tenant?: string;
}

export interface ListTasksParams {
  contextId?: string;
  status?: TaskState;
  /** 1..100, defaults to 50. */
  pageSize: number;
  pageToken?: string;
  historyLength?: number;
  /** Epoch milliseconds: tasks whose status timestamp is at or after this. */
  statusTimestampAfter?: number;
  includeArtifacts: boolean;
  tenant?: string;
}

export interface ListTasksResult {
  tasks: Task[];
  /** `''` on the last page. */
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/** A decoded JSON-RPC call. `method` names the operation, whatever the dialect called it. */
export type A2ARequest =
  | { method: 'send'; params: SendParams }
  | { method: 'stream'; params: SendParams }
  | { method: 'get'; params: { id: string; historyLength?: number; tenant?: string } }
  | { method: 'list'; params: ListTasksParams }
  | { method: 'cancel'; params: { id: string; metadata?: JsonObject; tenant?: string } }
  | { method: 'subscribe'; params: { id: string; tenant?: string } }
  | { method: 'push-config'; params: PushConfigRequest }
  | { method: 'extended-card'; params: { tenant?: string } };

export type A2AOperation = A2ARequest['method'];

// ---------------------------------------------------------------------------------------------
// Push notification configs (§3.1.7–§3.1.10). One shape for both dialects: v1.0's flat
// TaskPushNotificationConfig; v0.3's `authentication.schemes[]` is read as its first scheme.

/** How the webhook request authenticates itself: `Authorization: <scheme> <credentials>`. */
export interface PushAuthentication {
  scheme: string;
  credentials?: string;
}

/** A push config as a caller gives it: `id` is optional (the server mints one). */
export interface PushConfigInput {
  id?: string;
  url: string;
  token?: string;
  authentication?: PushAuthentication;
}

/** A stored push config, as it is answered: always with its task and id. */
export interface TaskPushConfig extends PushConfigInput {
  id: string;
  taskId: string;
}

/**
 * The four push-config operations, decoded. v0.3's `get` may leave the config id out (the
 * task's only, or first, config).
 */
export type PushConfigRequest =
  | { op: 'create'; taskId: string; config: PushConfigInput; tenant?: string }
  | { op: 'get'; taskId: string; id?: string; tenant?: string }
  | { op: 'list'; taskId: string; pageSize?: number; pageToken?: string; tenant?: string }
  | { op: 'delete'; taskId: string; id: string; tenant?: string };

/** What a push-config operation answers; each dialect renders it in its own shape. */
export type PushConfigResult =
  | { op: 'create' | 'get'; config: TaskPushConfig }
  | { op: 'list'; configs: TaskPushConfig[]; nextPageToken: string }
  | { op: 'delete' };

// ---------------------------------------------------------------------------------------------
// Agent cards, as Airlock builds them from config. Codecs render them in each dialect.

export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
}

export interface AgentInterface {
  url: string;
  /** `JSONRPC` for everything Airlock serves today. */
  protocolBinding: 'JSONRPC' | 'GRPC' | 'HTTP+JSON';
  protocolVersion: '1.0' | '0.3';
  /** v1.0 only: a client MUST copy it into every request's `tenant` (§8.3.2). */
  tenant?: string;
}

/**
 * A security scheme of a card. Remote cards may declare `oauth2`, `openIdConnect` and
 * `mutualTLS` schemes (kept so that their URLs are pinned and an outbound entry can check them);
 * Airlock's own cards list `http` bearer and `apiKey` only.
 */
export type SecurityScheme =
  | { type: 'http'; scheme: 'bearer'; bearerFormat?: string; description?: string }
  | { type: 'apiKey'; location: 'header' | 'query' | 'cookie'; name: string; description?: string }
  | { type: 'oauth2'; flows: OAuthFlows; metadataUrl?: string; description?: string }
  | { type: 'openIdConnect'; openIdConnectUrl: string; description?: string }
  | { type: 'mutualTLS'; description?: string };

/** The OAuth 2.0 flows a card's `oauth2` scheme may declare (`implicit` and `password` are deprecated). */
export type OAuthFlowKind = 'authorizationCode' | 'clientCredentials' | 'deviceCode' | 'implicit' | 'password';

/** One declared OAuth 2.0 flow: its endpoints and the names of its scopes (descriptions dropped), in card order. */
export interface OAuthFlow {
  authorizationUrl?: string;
  deviceAuthorizationUrl?: string;
  tokenUrl?: string;
  refreshUrl?: string;
  scopes: string[];
}

/** The flows of an `oauth2` scheme, by kind. */
export type OAuthFlows = Partial<Record<OAuthFlowKind, OAuthFlow>>;

/** A list of alternatives; each maps scheme names to the scopes it needs. */
export type SecurityRequirement = Record<string, string[]>;

/** An extension a card declares (`capabilities.extensions[]`, §4.4.4). */
export interface AgentExtension {
  uri: string;
  description?: string;
  /** The client must request it (`A2A-Extensions`) or be refused with -32008. */
  required: boolean;
  params?: JsonObject;
}

export interface AgentCard {
  name: string;
  description: string;
  version: string;
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  /** In preference order. */
  interfaces: AgentInterface[];
  capabilities: {
    streaming: boolean;
    pushNotifications: boolean;
    extendedAgentCard: boolean;
    /** The extensions the agent supports (§4.6); absent or empty: none. */
    extensions?: AgentExtension[];
  };
  securitySchemes: Record<string, SecurityScheme>;
  securityRequirements: SecurityRequirement[];
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
}
