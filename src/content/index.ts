/**
 * Untrusted content, shared by the inbound and outbound halves: framing in the
 * untrusted-content markers, marker neutralisation, suspicious-pattern counting and redaction.
 * Pure functions over strings; nothing here knows of HTTP, stores or config.
 *
 * @example
 * ```ts
 * import { frameUntrusted, countSuspiciousPatterns, redactContactDetails } from './content/index.js';
 *
 * const counts = countSuspiciousPatterns(reply);               // audit the counts
 * const clean = redactContactDetails(reply).text;               // then redact
 * const framed = frameUntrusted(clean, { source: 'A2A Agent' }); // then frame
 * ```
 */
export { MARKER_REPLACEMENT, UNTRUSTED_END_MARKER, UNTRUSTED_START_MARKER } from './markers.js';
export { continuationTail, neutraliseContinuation, neutraliseMarkers } from './neutralise.js';
export type { NeutraliseResult } from './neutralise.js';
export { UNTRUSTED_WARNING, frameUntrusted, untrustedSystemNote } from './frame.js';
export type { FrameOptions } from './frame.js';
export { MAX_SOURCE_LENGTH, sanitiseSource } from './source.js';
export { MAX_SCAN_CHARS, SUSPICIOUS_CATEGORIES, countSuspiciousPatterns } from './suspicious.js';
export type { SuspiciousCategory, SuspiciousCounts } from './suspicious.js';
export {
  EMAIL_REPLACEMENT,
  MIN_SECRET_LENGTH,
  SECRET_REPLACEMENT,
  redactContactDetails,
  redactSecrets,
  obfuscationMatcher,
  secretForms,
} from './redact.js';
export type { RedactResult } from './redact.js';
export { createObfuscationMatcher, skeletonOf } from './obfuscated.js';
export type { ObfuscationMatcher } from './obfuscated.js';
