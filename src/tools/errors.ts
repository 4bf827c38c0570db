/**
 * Errors of the tool servers: one class, with a stable `code` per kind of failure.
 *
 * @example
 * ```ts
 * try {
 *   await hub.start();
 * } catch (error) {
 *   if (error instanceof ToolServerError) console.error(error.message); // 'tool server "files": …'
 * }
 * ```
 */
import { AirlockError } from '../errors/index.js';

/**
 * What went wrong with a tool server:
 * - `tool_server_unavailable`: it could not be started, reached or listed;
 * - `tool_server_refused`: the guarded transport refused its address or URL;
 * - `tool_call_timeout`: a call took longer than the server's `timeoutSeconds`;
 * - `tool_pins_invalid`: the tool pin file cannot be read as one.
 *
 * @example
 * ```ts
 * const code: ToolServerErrorCode = 'tool_server_unavailable';
 * ```
 */
export type ToolServerErrorCode =
  'tool_server_unavailable' | 'tool_server_refused' | 'tool_call_timeout' | 'tool_pins_invalid';

/**
 * A tool server failed (or its pins could not be read). The message is one line naming the
 * server; it never holds a token.
 *
 * @example
 * ```ts
 * throw new ToolServerError('tool_server_unavailable', 'files', 'the program exited before listing its tools');
 * ```
 */
export class ToolServerError extends AirlockError {
  readonly code: ToolServerErrorCode;
  /** The configured server name ('' for the pin file). */
  readonly server: string;

  constructor(code: ToolServerErrorCode, server: string, detail: string, options?: { cause?: unknown }) {
    super(server === '' ? detail : `tool server "${server}": ${detail}`, options);
    this.code = code;
    this.server = server;
  }
}
