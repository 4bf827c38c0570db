/**
 * fast-check arbitraries of canonical protocol values, shared by the codec tests. The file is
 * named `.test.ts` so that the build leaves it out (it imports fast-check, a dev dependency);
 * it declares no tests of its own.
 *
 * Optional strings are generated non-empty because ProtoJSON (v1.0) reads `""` as unset; the
 * codec tests cover that rule with explicit examples.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(taskArb, (task) => { ... }));
 * ```
 */
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { A2AError } from './errors.js';
import type {
  A2ARequest,
  AgentCard,
  AgentInterface,
  AgentSkill,
  Artifact,
  JsonObject,
  JsonValue,
  ListTasksParams,
  ListTasksResult,
  Message,
  Part,
  Role,
  SecurityScheme,
  SendConfiguration,
  SendParams,
  SendResult,
  StreamEvent,
  Task,
  TaskArtifactUpdateEvent,
  TaskState,
  TaskStatus,
  TaskStatusUpdateEvent,
} from './model.js';
import { TASK_STATES } from './model.js';

export const idArb = fc.stringMatching(/^[\x21-\x7e]{1,40}$/);
const nonEmpty = fc.string({ minLength: 1, maxLength: 30 });
const urlArb = fc.webUrl();
const jsonArb: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>;
export const jsonObjectArb: fc.Arbitrary<JsonObject> = fc.dictionary(fc.string({ maxLength: 12 }), jsonArb, {
  maxKeys: 4,
});
const base64Arb = fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64'));
const mediaTypeArb = fc.constantFrom('text/plain', 'application/json', 'image/png', 'application/pdf');
export const timestampArb = fc
  .date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('2200-01-01T00:00:00.000Z'), noInvalidDate: true })
  .map((d) => d.toISOString());

const partExtras = {
  mediaType: mediaTypeArb,
  filename: nonEmpty,
  metadata: jsonObjectArb,
};

export const partArb: fc.Arbitrary<Part> = fc.oneof(
  fc.record(
    { kind: fc.constant('text' as const), text: fc.string({ maxLength: 40 }), ...partExtras },
    { requiredKeys: ['kind', 'text'] },
  ),
  fc.record({ kind: fc.constant('raw' as const), raw: base64Arb, ...partExtras }, { requiredKeys: ['kind', 'raw'] }),
  fc.record({ kind: fc.constant('url' as const), url: urlArb, ...partExtras }, { requiredKeys: ['kind', 'url'] }),
  fc.record({ kind: fc.constant('data' as const), data: jsonArb, ...partExtras }, { requiredKeys: ['kind', 'data'] }),
);

export function messageArb(role: fc.Arbitrary<Role> = fc.constantFrom('user', 'agent')): fc.Arbitrary<Message> {
  return fc.record(
    {
      messageId: fc.string({ minLength: 1, maxLength: 64 }),
      role,
      parts: fc.array(partArb, { minLength: 1, maxLength: 4 }),
      contextId: idArb,
      taskId: idArb,
      metadata: jsonObjectArb,
      extensions: fc.array(urlArb, { maxLength: 2 }),
      referenceTaskIds: fc.array(idArb, { maxLength: 2 }),
    },
    { requiredKeys: ['messageId', 'role', 'parts'] },
  );
}

export const stateArb: fc.Arbitrary<TaskState> = fc.constantFrom(...TASK_STATES);

export const statusArb: fc.Arbitrary<TaskStatus> = fc.record(
  { state: stateArb, message: messageArb(fc.constant('agent')), timestamp: timestampArb },
  { requiredKeys: ['state', 'timestamp'] },
);

export const artifactArb: fc.Arbitrary<Artifact> = fc.record(
  {
    artifactId: fc.string({ minLength: 1, maxLength: 40 }),
    name: nonEmpty,
    description: nonEmpty,
    parts: fc.array(partArb, { minLength: 1, maxLength: 3 }),
    metadata: jsonObjectArb,
    extensions: fc.array(urlArb, { maxLength: 2 }),
  },
  { requiredKeys: ['artifactId', 'parts'] },
);

export const taskArb: fc.Arbitrary<Task> = fc.record(
  {
    id: idArb,
    contextId: idArb,
    status: statusArb,
    artifacts: fc.array(artifactArb, { maxLength: 2 }),
    history: fc.array(messageArb(), { maxLength: 3 }),
    metadata: jsonObjectArb,
  },
  { requiredKeys: ['id', 'contextId', 'status', 'artifacts', 'history'] },
);

/** Strings JSON must escape (quotes, backslashes, controls, lone surrogates) mixed with ones it must not. */
export const escapeArb = fc.string({
  maxLength: 12,
  unit: fc.constantFrom('a', 'é', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udfff', '😀'),
});

/** A task with `text` in every string field a codec writes (ids included: encoders do not validate). */
export function taskWithStrings(text: string): Task {
  const message: Message = {
    messageId: text,
    role: 'agent',
    parts: [{ kind: 'text', text, mediaType: text, filename: text, metadata: { [text]: text } }],
    contextId: text,
    taskId: text,
    metadata: { [text]: [text] },
    extensions: [text],
    referenceTaskIds: [text],
  };
  return {
    id: text,
    contextId: text,
    status: { state: 'completed', message, timestamp: text },
    artifacts: [
      { artifactId: text, name: text, description: text, parts: [{ kind: 'text', text }], extensions: [text] },
    ],
    history: [message, { messageId: text, role: 'user', parts: [{ kind: 'text', text }] }],
    metadata: { [text]: text },
  };
}

/** A status and an artifact update with `text` in every string field (the task's from {@link taskWithStrings}). */
export function updatesWithStrings(text: string): StreamEvent[] {
  const task = taskWithStrings(text);
  const metadata = { [text]: text };
  return [
    { kind: 'status-update', taskId: text, contextId: text, status: task.status, final: true, metadata },
    {
      kind: 'artifact-update',
      taskId: text,
      contextId: text,
      artifact: task.artifacts[0]!,
      append: true,
      lastChunk: false,
    },
  ];
}

export const sendResultArb: fc.Arbitrary<SendResult> = fc.oneof(
  taskArb.map((task) => ({ kind: 'task' as const, task })),
  messageArb(fc.constant('agent')).map((message) => ({ kind: 'message' as const, message })),
);

export const statusUpdateArb: fc.Arbitrary<TaskStatusUpdateEvent> = fc.record(
  {
    kind: fc.constant('status-update' as const),
    taskId: idArb,
    contextId: idArb,
    status: statusArb,
    final: fc.boolean(),
    metadata: jsonObjectArb,
  },
  { requiredKeys: ['kind', 'taskId', 'contextId', 'status', 'final'] },
);

export const artifactUpdateArb: fc.Arbitrary<TaskArtifactUpdateEvent> = fc.record(
  {
    kind: fc.constant('artifact-update' as const),
    taskId: idArb,
    contextId: idArb,
    artifact: artifactArb,
    append: fc.boolean(),
    lastChunk: fc.boolean(),
    metadata: jsonObjectArb,
  },
  { requiredKeys: ['kind', 'taskId', 'contextId', 'artifact'] },
);

export const streamEventArb: fc.Arbitrary<StreamEvent> = fc.oneof(
  taskArb.map((task) => ({ kind: 'task' as const, task })),
  messageArb(fc.constant('agent')).map((message) => ({ kind: 'message' as const, message })),
  statusUpdateArb,
  artifactUpdateArb,
);

export const listResultArb: fc.Arbitrary<ListTasksResult> = fc.record({
  tasks: fc.array(taskArb, { maxLength: 3 }),
  nextPageToken: fc.string({ maxLength: 40 }),
  pageSize: fc.integer({ min: 1, max: 100 }),
  totalSize: fc.nat({ max: 100_000 }),
});

// ---------------------------------------------------------------------------------------------
// Requests

const configurationArb: fc.Arbitrary<SendConfiguration> = fc.record(
  {
    returnImmediately: fc.boolean(),
    historyLength: fc.nat({ max: 1000 }),
    acceptedOutputModes: fc.array(mediaTypeArb, { maxLength: 3 }),
  },
  { requiredKeys: ['returnImmediately'] },
);

export const sendParamsArb: fc.Arbitrary<SendParams> = fc.record(
  {
    message: messageArb(fc.constant('user')),
    configuration: configurationArb,
    metadata: jsonObjectArb,
    tenant: idArb,
  },
  { requiredKeys: ['message', 'configuration'] },
);

const listStateArb = fc.constantFrom(...TASK_STATES.filter((s) => s !== 'unknown'));

export const listParamsArb: fc.Arbitrary<ListTasksParams> = fc.record(
  {
    contextId: idArb,
    status: listStateArb,
    pageSize: fc.integer({ min: 1, max: 100 }),
    pageToken: fc.string({ minLength: 1, maxLength: 64 }),
    historyLength: fc.nat({ max: 1000 }),
    statusTimestampAfter: fc.integer({ min: -62135596800000, max: 253402300799999 }),
    includeArtifacts: fc.boolean(),
    tenant: idArb,
  },
  { requiredKeys: ['pageSize', 'includeArtifacts'] },
);

/** Every canonical request except `push-config` (which carries nothing to encode). */
export const requestArb: fc.Arbitrary<A2ARequest> = fc.oneof(
  sendParamsArb.map((params) => ({ method: 'send' as const, params })),
  sendParamsArb.map((params) => ({ method: 'stream' as const, params })),
  fc
    .record({ id: idArb, historyLength: fc.nat({ max: 1000 }), tenant: idArb }, { requiredKeys: ['id'] })
    .map((params) => ({ method: 'get' as const, params })),
  listParamsArb.map((params) => ({ method: 'list' as const, params })),
  fc
    .record({ id: idArb, metadata: jsonObjectArb, tenant: idArb }, { requiredKeys: ['id'] })
    .map((params) => ({ method: 'cancel' as const, params })),
  fc
    .record({ id: idArb, tenant: idArb }, { requiredKeys: ['id'] })
    .map((params) => ({ method: 'subscribe' as const, params })),
  fc.record({ tenant: idArb }, { requiredKeys: [] }).map((params) => ({ method: 'extended-card' as const, params })),
);

// ---------------------------------------------------------------------------------------------
// Cards

const interfaceArb: fc.Arbitrary<AgentInterface> = fc.record(
  {
    url: urlArb,
    protocolBinding: fc.constantFrom('JSONRPC' as const, 'GRPC' as const, 'HTTP+JSON' as const),
    protocolVersion: fc.constantFrom('1.0' as const, '0.3' as const),
    tenant: idArb,
  },
  { requiredKeys: ['url', 'protocolBinding', 'protocolVersion'] },
);

const schemeArb: fc.Arbitrary<SecurityScheme> = fc.oneof(
  fc.record(
    {
      type: fc.constant('http' as const),
      scheme: fc.constant('bearer' as const),
      bearerFormat: nonEmpty,
      description: nonEmpty,
    },
    { requiredKeys: ['type', 'scheme'] },
  ),
  fc.record(
    {
      type: fc.constant('apiKey' as const),
      location: fc.constantFrom('header' as const, 'query' as const, 'cookie' as const),
      name: nonEmpty,
      description: nonEmpty,
    },
    { requiredKeys: ['type', 'location', 'name'] },
  ),
);

const skillArb: fc.Arbitrary<AgentSkill> = fc.record(
  {
    id: nonEmpty,
    name: fc.string({ maxLength: 30 }),
    description: fc.string({ maxLength: 60 }),
    tags: fc.array(nonEmpty, { maxLength: 3 }),
    examples: fc.array(fc.string(), { maxLength: 2 }),
    inputModes: fc.array(mediaTypeArb, { maxLength: 2 }),
    outputModes: fc.array(mediaTypeArb, { maxLength: 2 }),
  },
  { requiredKeys: ['id', 'name', 'description', 'tags'] },
);

export const cardArb: fc.Arbitrary<AgentCard> = fc.record(
  {
    name: fc.string({ maxLength: 30 }),
    description: fc.string({ maxLength: 60 }),
    version: fc.string({ maxLength: 10 }),
    provider: fc.record({ organization: fc.string({ maxLength: 20 }), url: urlArb }),
    documentationUrl: urlArb,
    iconUrl: urlArb,
    interfaces: fc.array(interfaceArb, { minLength: 1, maxLength: 4 }),
    capabilities: fc.record({
      streaming: fc.boolean(),
      pushNotifications: fc.boolean(),
      extendedAgentCard: fc.boolean(),
    }),
    securitySchemes: fc.dictionary(nonEmpty, schemeArb, { maxKeys: 3 }),
    securityRequirements: fc.array(fc.dictionary(nonEmpty, fc.array(nonEmpty, { maxLength: 2 }), { maxKeys: 2 }), {
      maxLength: 2,
    }),
    defaultInputModes: fc.array(mediaTypeArb, { maxLength: 3 }),
    defaultOutputModes: fc.array(mediaTypeArb, { maxLength: 3 }),
    skills: fc.array(skillArb, { maxLength: 3 }),
  },
  {
    requiredKeys: [
      'name',
      'description',
      'version',
      'interfaces',
      'capabilities',
      'securitySchemes',
      'securityRequirements',
      'defaultInputModes',
      'defaultOutputModes',
      'skills',
    ],
  },
);

// ---------------------------------------------------------------------------------------------
// Hostile input

/** Anything at all, including values JSON cannot produce (boxed values, Maps, sparse arrays...). */
export const hostileArb = fc.anything({
  maxDepth: 4,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
});

/**
 * A valid wire value with one nested member replaced by an arbitrary value: this reaches the
 * validators deep inside a structure, which purely random input rarely does.
 */
export function mutate(base: unknown, pathSeed: number, replacement: unknown): unknown {
  const copy: unknown = structuredClone(base);
  const containers: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => {
        containers.push({ parent: node, key: i });
        walk(child);
      });
    } else if (typeof node === 'object' && node !== null) {
      for (const key of Object.keys(node)) {
        containers.push({ parent: node as Record<string, unknown>, key });
        walk((node as Record<string, unknown>)[key]);
      }
    }
  };
  walk(copy);
  const target = containers[pathSeed % Math.max(containers.length, 1)];
  if (target === undefined) return replacement;
  if (Array.isArray(target.parent)) target.parent[target.key as number] = replacement;
  else target.parent[target.key as string] = replacement;
  return copy;
}

/** Runs `decode` and fails the property if it throws anything but an A2AError. */
export function onlyA2AErrors(decode: () => unknown): void {
  try {
    decode();
  } catch (error) {
    assert.ok(error instanceof A2AError, `threw a non-A2AError: ${String(error)}`);
  }
}

/** Asserts that `fn` throws an A2AError with this code (and field, when given). */
export function assertA2AError(fn: () => unknown, code: A2AError['code'], field?: string): A2AError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof A2AError, `expected A2AError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (field !== undefined) assert.equal(error.field, field, error.message);
    return error;
  }
  assert.fail(`expected A2AError ${code}`);
}
