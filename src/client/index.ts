/**
 * The outbound client: call registered remote A2A agents by name. Three operations, the same
 * ones the CLI and the MCP tools expose: `send`, `getTask` and `listAgents`.
 *
 * `createOutboundClient` wires the real collaborators (registry file, guarded transport, card
 * trust with the pin file, audit file, ledger); `createClient` takes them as given (tests,
 * custom transports).
 *
 * @example
 * ```ts
 * import { createOutboundClient } from './client/index.js';
 *
 * const airlock = createOutboundClient({ registryPath: 'registry.yaml', env: process.env });
 * airlock.listAgents();                                     // [{ name: 'travel', description: '…', effect: 'acting', skills: [] }]
 * const result = await airlock.send({ agent: 'travel', message: 'Trains to Lyon?', confirm: true });
 * await airlock.close();
 * ```
 */
export {
  BearerSecret,
  RegistryEgressProxy,
  REGISTRY_NAME_PATTERN,
  Registry,
  RegistryError,
  SECRET_ENV_PREFIX,
  loadRegistryFile,
  parseRegistry,
  registryPath,
} from './registry.js';
export type { EntryTimeouts, NetworkSettings, RegistryEntry } from './registry.js';
export { loadRegistryFileOffThread } from './registry/off-thread.js';
export { DEFAULT_PRINCIPAL_KEY, MAX_MESSAGE_CHARS, OutboundCaller, errorTypeOf } from './call.js';
export type { GetTaskRequest, OutboundCallerOptions, SendRequest } from './call.js';
export {
  CALL_ERROR_TYPES,
  ERROR_MESSAGES,
  MAX_PART_SUMMARIES,
  STRICT_ID_PATTERN,
  errorResult,
  frameReply,
  safeId,
  shapeResult,
  shapeResultDetailed,
} from './result.js';
export type {
  CallErrorType,
  CallResult,
  CallStatus,
  ClientReason,
  ErrorContext,
  PartSummary,
  ShapeOptions,
  ShapedResult,
} from './result.js';
export {
  MemoryOutboundLedger,
  clientAuditEvent,
  emitAudit,
  ledgerFromTaskStore,
  mirrorId,
  mirrorTask,
  ownsRemoteTask,
  recordMirror,
} from './bookkeeping.js';
export type { AuditHook, ClientAuditFields, MirrorInput, OutboundLedger } from './bookkeeping.js';
export { TRANSPORT_ERROR_CODES } from './contracts.js';
// The transport and card types come from src/net and src/trust (exported from the package root).
export type { CardResolver, ClientLog, TransportErrorCode } from './contracts.js';

export { createClient } from './create.js';
export type { AgentListing, ClientOptions, OutboundClient } from './create.js';
export { cardResolverFrom, cardTrustEntry } from './card-resolver.js';
export {
  DEFAULT_PINS_PATH,
  LEDGER_FILE_NAME,
  createOutboundClient,
  ledgerPathFor,
  loadRegistry,
  pinsPathFrom,
} from './wiring.js';
export type { OutboundLog, OutboundRuntime, OutboundSetup } from './wiring.js';
export { FileOutboundLedger, parseLedgerFile } from './file-ledger.js';
export type { FileOutboundLedgerOptions, LedgerRow } from './file-ledger.js';
export { createUpstreamConnector } from './upstream.js';
export type { UpstreamConnectorRuntime, UpstreamConnectorSetup } from './upstream.js';
