/**
 * Limit policies for the inbound hot path: request rate per principal, failed authentications
 * per address, tasks in flight, JSON nesting depth before parsing, and message size. Each is a
 * pure, timer-free check with time passed in, so the server decides when and the tests control it.
 *
 * @example
 * ```ts
 * import { RateLimiter, exceedsJsonDepth } from './limits/index.js';
 * const rate = new RateLimiter({ limit: config.limits.requestsPerMinute });
 * ```
 */
export { AuthFailureLimiter, DEFAULT_MAX_FAILURE_ADDRESSES, addressBucket } from './address-failures.js';
export type { AuthFailureLimiterOptions, AuthFailureLockout } from './address-failures.js';
export { CONCURRENCY_RETRY_AFTER_SECONDS, InFlightLimiter } from './concurrency.js';
export type { InFlightCap, InFlightLimits, Release } from './concurrency.js';
export { exceedsJsonDepth } from './json-depth.js';
export { MessageLimitError, checkMessageLimits } from './message.js';
export type { MessageLimitReason, MessageLimits } from './message.js';
export { MetadataLimitError, checkMetadataLimits } from './metadata.js';
export type { MetadataLimitReason, MetadataLimits } from './metadata.js';
export { DEFAULT_MAX_RATE_KEYS, RateLimiter } from './rate.js';
export type { RateLimiterOptions, RequestRateLimit } from './rate.js';
