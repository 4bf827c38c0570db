/**
 * The error root shared by every folder (the lowest layer: it imports nothing).
 *
 * @example
 * ```ts
 * import { AirlockError, errorCode } from '../errors/index.js';
 * ```
 */
export { AirlockError, errorCode, isAirlockError } from './base.js';
