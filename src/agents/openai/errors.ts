/**
 * Why an OpenAI-compatible turn failed, as a typed error whose message is the reason the caller
 * reads in the task's status. Every message is built here, in our words; the only text that
 * comes from the endpoint is its own error message, and that is redacted (the API key in every
 * form), put on one line and cut short first.
 *
 * @example
 * ```ts
 * throw httpStatusError(401, '{"error":{"message":"bad key sk-…"}}', [apiKey]);
 * // OpenAiTurnError: the model endpoint answered HTTP 401: bad key [secret redacted]
 * ```
 */
import { redactSecrets } from '../../content/index.js';
import { serverErrorMessage } from './stream.js';
import { AirlockError } from '../../errors/index.js';

/**
 * What went wrong, for logs, metrics and tests (the message is for people).
 *
 * @example
 * ```ts
 * const code: OpenAiFailureCode = 'first_token_timeout';
 * ```
 */
export type OpenAiFailureCode =
  /** The endpoint could not be reached (refused, unknown host, connect timeout, TLS). */
  | 'connect_failed'
  /** The connection broke after it was made. */
  | 'connection_lost'
  | 'first_token_timeout'
  | 'total_timeout'
  /** A 3xx: never followed. */
  | 'redirect'
  /** Any other status outside 2xx. */
  | 'http_status'
  /** Not a chat completion: bad JSON, a compressed body, no choices, a stream cut short. */
  | 'bad_response'
  /** An `error` object inside a 2xx answer or stream. */
  | 'server_error'
  /** More than `maxResponseBytes`. */
  | 'too_large'
  /** The model asked for tools in more answers than `maxToolRounds`. */
  | 'tool_rounds'
  /** More tool calls in one answer than the backend takes. */
  | 'tool_calls'
  /** The toolbox said a budget of the turn is used up (tool calls, result characters). */
  | 'tool_budget'
  /** A tool call failed in a way the toolbox did not report (it should never throw). */
  | 'tool_failed'
  /** A resumed turn's saved state cannot be used, or a parked turn's state would be too large. */
  | 'tool_state';

/**
 * A failed turn. `message` is the reason, safe to show the caller; `status` is the HTTP status
 * when there was one.
 *
 * @example
 * ```ts
 * const error = new OpenAiTurnError('too_large', 'the model endpoint sent more than 4 MiB');
 * error.code; // 'too_large'
 * ```
 */
export class OpenAiTurnError extends AirlockError {
  readonly code: OpenAiFailureCode;
  readonly status: number | undefined;

  constructor(code: OpenAiFailureCode, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
  }
}

/** The longest piece of a server's own error message a reason carries. */
export const MAX_SERVER_MESSAGE_CHARS = 200;

/**
 * The endpoint answered with a status outside 2xx and 3xx. The server's own error message (from
 * `{error: {message}}`, `{error: "…"}` or `{object: "error", message}`) is added when the body
 * holds one, cleaned by {@link cleanServerMessage}; any other body is left out.
 *
 * @example
 * ```ts
 * httpStatusError(404, '{"error":"model \\"llama9\\" not found"}', []).message;
 * // 'the model endpoint answered HTTP 404: model "llama9" not found'
 * httpStatusError(502, '<html>Bad gateway</html>', []).message;
 * // 'the model endpoint answered HTTP 502'
 * ```
 */
export function httpStatusError(status: number, body: string, secrets: readonly string[]): OpenAiTurnError {
  const detail = messageInBody(body, secrets);
  const reason = `the model endpoint answered HTTP ${status}${detail === undefined ? '' : `: ${detail}`}`;
  return new OpenAiTurnError('http_status', reason, { status });
}

/**
 * The endpoint answered with a redirect. The target is not named (it may carry anything).
 *
 * @example
 * ```ts
 * redirectError(301).message;
 * // 'the model endpoint answered HTTP 301 (a redirect, never followed: set baseUrl to the final address)'
 * ```
 */
export function redirectError(status: number): OpenAiTurnError {
  return new OpenAiTurnError(
    'redirect',
    `the model endpoint answered HTTP ${status} (a redirect, never followed: set baseUrl to the final address)`,
    { status },
  );
}

/**
 * The endpoint reported an error inside a 2xx answer or stream.
 *
 * @example
 * ```ts
 * serverError('overloaded, try again', []).message; // 'the model endpoint reported an error: overloaded, try again'
 * serverError(undefined, []).message;               // 'the model endpoint reported an error'
 * ```
 */
export function serverError(message: string | undefined, secrets: readonly string[]): OpenAiTurnError {
  const detail = message === undefined ? undefined : cleanServerMessage(message, secrets);
  const reason = `the model endpoint reported an error${detail === undefined || detail.length === 0 ? '' : `: ${detail}`}`;
  return new OpenAiTurnError('server_error', reason);
}

/**
 * The body is not a chat completion; `what` says what it is instead, in our words.
 *
 * @example
 * ```ts
 * badResponseError('a stream event that is not a JSON object').message;
 * // 'the model endpoint sent a stream event that is not a JSON object'
 * ```
 */
export function badResponseError(what: string): OpenAiTurnError {
  return new OpenAiTurnError('bad_response', `the model endpoint sent ${what}`);
}

/**
 * More than `maxResponseBytes` arrived.
 *
 * @example
 * ```ts
 * tooLargeError(4 * 1024 * 1024).message; // 'the model endpoint sent more than 4 MiB (maxResponseBytes)'
 * ```
 */
export function tooLargeError(maxResponseBytes: number): OpenAiTurnError {
  return new OpenAiTurnError(
    'too_large',
    `the model endpoint sent more than ${formatBytes(maxResponseBytes)} (maxResponseBytes)`,
  );
}

/**
 * No content arrived within `timeouts.firstTokenMs` of the request's start.
 *
 * @example
 * ```ts
 * firstTokenTimeoutError(60_000).message; // 'the model endpoint sent no token within 60 s'
 * ```
 */
export function firstTokenTimeoutError(firstTokenMs: number): OpenAiTurnError {
  return new OpenAiTurnError(
    'first_token_timeout',
    `the model endpoint sent no token within ${formatMs(firstTokenMs)}`,
  );
}

/**
 * The answer was not whole within `timeouts.totalMs` of the request's start.
 *
 * @example
 * ```ts
 * totalTimeoutError(300_000).message; // 'the model endpoint did not finish within 300 s'
 * ```
 */
export function totalTimeoutError(totalMs: number): OpenAiTurnError {
  return new OpenAiTurnError('total_timeout', `the model endpoint did not finish within ${formatMs(totalMs)}`);
}

/**
 * A network failure from undici or a socket, as a reason in our words (the error's own message
 * may name addresses; only its code is used). `connected` tells a failure to connect from a
 * connection lost midway.
 *
 * @example
 * ```ts
 * networkError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:11434'), { code: 'ECONNREFUSED' }), false, 5000).message;
 * // 'could not connect to the model endpoint (connection refused)'
 * ```
 */
export function networkError(error: unknown, connected: boolean, connectMs: number): OpenAiTurnError {
  if (error instanceof OpenAiTurnError) return error;
  const code = codeOf(error);
  const connectProblem = CONNECT_PROBLEMS[code];
  if (connectProblem !== undefined || code === 'UND_ERR_CONNECT_TIMEOUT') {
    const why = connectProblem ?? `no connection within ${formatMs(connectMs)}`;
    return new OpenAiTurnError('connect_failed', `could not connect to the model endpoint (${why})`, { cause: error });
  }
  if (!connected) {
    return new OpenAiTurnError('connect_failed', `could not connect to the model endpoint (${code})`, { cause: error });
  }
  return new OpenAiTurnError('connection_lost', `the connection to the model endpoint was lost (${code})`, {
    cause: error,
  });
}

/** Socket error codes that mean the endpoint was never reached, in words. */
const CONNECT_PROBLEMS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate could not be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate does not name the host',
};

/**
 * A server's own error text made fit for a reason: every form of each secret replaced, control
 * characters and line breaks turned into spaces, whitespace runs collapsed, and the result cut to
 * {@link MAX_SERVER_MESSAGE_CHARS} characters. Redaction runs on the whole text first, so a
 * secret cut by the limit cannot leave its head behind.
 *
 * @example
 * ```ts
 * cleanServerMessage('Incorrect API key provided: sk-abc123456789.\nSee docs.', ['sk-abc123456789']);
 * // 'Incorrect API key provided: [secret redacted]. See docs.'
 * ```
 */
export function cleanServerMessage(message: string, secrets: readonly string[]): string {
  const redacted = redactSecrets(message, secrets).text;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
  const oneLine = redacted.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]+/g, ' ').trim();
  if (oneLine.length <= MAX_SERVER_MESSAGE_CHARS) return oneLine;
  return `${oneLine.slice(0, MAX_SERVER_MESSAGE_CHARS - 1)}…`;
}

/** The cleaned server message in an error body, or undefined when it holds none. */
function messageInBody(body: string, secrets: readonly string[]): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const message = serverErrorMessage(parsed)?.message;
  if (message === undefined) return undefined;
  const clean = cleanServerMessage(message, secrets);
  return clean.length === 0 ? undefined : clean;
}

/**
 * A duration as a reason names it: `60 s` for whole seconds, `250 ms` otherwise.
 *
 * @example
 * ```ts
 * formatMs(60_000); // '60 s'
 * formatMs(250);    // '250 ms'
 * ```
 */
export function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * A size as a reason names it: `4 MiB`, `16 KiB` or `1500 bytes`.
 *
 * @example
 * ```ts
 * formatBytes(4 * 1024 * 1024); // '4 MiB'
 * formatBytes(1500);            // '1500 bytes'
 * ```
 */
export function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** An error's `code` (undici's `UND_ERR_…`, a socket's `E…`), or its name when it has none. */
function codeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(code)) return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(name)) return name;
  }
  return 'unknown error';
}
