/**
 * Audit: typed events, the hash-chained row format, sinks and the verifier.
 *
 * @example
 * ```ts
 * import { JsonlAuditSink, auditTime, verifyAuditFile } from './audit/index.js';
 * ```
 */
export {
  AUDIT_EVENT_SPEC,
  AUDIT_EVENT_TYPES,
  auditTime,
  type AuditCounts,
  type AuditEvent,
  type AuditEventOf,
  type AuditEventType,
  type AuditOutcome,
  type AuditReason,
  type AuditReasonOf,
  type AuditTime,
  type AuthFailedEvent,
  type ClientGetEvent,
  type ToolCalledEvent,
  type ToolRefusedEvent,
  type ToolParkedEvent,
  type ClientSendEvent,
  type ForbiddenEvent,
  type PrincipalKind,
  type RateLimitedEvent,
  type SuspiciousInputEvent,
  type TaskCanceledEvent,
  type TaskCompletedEvent,
  type TaskFailedEvent,
  type TaskInputRequiredEvent,
  type TaskRejectedEvent,
  type TaskSubmittedEvent,
} from './events.js';
export { AuditUnsafeEventError, MAX_AUDIT_STRING, assertAuditSafe } from './safety.js';
export {
  GENESIS_HEAD,
  GENESIS_PREV,
  MAX_LINE_BYTES,
  checkLine,
  encodeLine,
  encodeRow,
  type ChainHead,
  type EncodedRow,
  type LineCheck,
  type LineProblem,
} from './chain.js';
export { AuditWriteError, type AuditSink, type AuditWriteOperation } from './sink.js';
export { JsonlAuditSink, type JsonlAuditSinkOptions } from './jsonl.js';
export { StdoutAuditSink, type StdoutAuditSinkOptions } from './stdout.js';
export { MemoryAuditSink } from './memory.js';
export {
  ChainVerifier,
  verifyAuditBuffer,
  verifyAuditFile,
  type AuditVerifyReason,
  type AuditVerifyResult,
} from './verify.js';
