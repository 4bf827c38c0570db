/**
 * What an inbound A2A message may contain: text parts only, and nothing shaped like a tool or
 * function call or its result. Agent frameworks turn such parts into real tool traffic (ADK maps a
 * data part whose metadata says `adk_type: function_response` to a genai `FunctionResponse`), so a
 * caller that could send one would be answering the agent's own tool calls, or starting its own.
 * Files are refused because nothing here screens them and no backend is asked to read them.
 *
 * Pure and cheap: plain prose costs one pass over the parts and a look at the first
 * non-white-space character of each text; JSON is parsed only when a text starts with `{` or `[`.
 *
 * @example
 * ```ts
 * const error = checkInboundContent(params.message);
 * if (error !== undefined) throw error; // -32005 for files and data, -32602 for tool-shaped text
 * ```
 */
import { A2AError } from '../../protocol/errors.js';
import type { JsonValue, Message, Part } from '../../protocol/model.js';

/**
 * The audit reason for every refusal made here (the `reason` of an `a2a.task.rejected`-style row).
 *
 * @example
 * ```ts
 * audit({ event: 'a2a.task.refused', reason: UNSUPPORTED_CONTENT_REASON, part: violation.partIndex });
 * ```
 */
export const UNSUPPORTED_CONTENT_REASON = 'unsupported_content';

/** The type of {@link UNSUPPORTED_CONTENT_REASON}. */
export type UnsupportedContentReason = typeof UNSUPPORTED_CONTENT_REASON;

/**
 * Why a part was refused, for audit (never the content itself):
 * `file` (a raw or url part), `data` (a data part), `tool_metadata` (part metadata that marks it
 * as a tool/function call or result), `tool_json` (a text part that is a JSON tool call or result).
 */
export type InboundContentKind = 'file' | 'data' | 'tool_metadata' | 'tool_json';

/** The first refused part of a message, as {@link inspectInboundContent} reports it. */
export interface InboundContentViolation {
  readonly reason: UnsupportedContentReason;
  /** Index of the refused part in `message.parts`. */
  readonly partIndex: number;
  readonly kind: InboundContentKind;
  /** The error to send: CONTENT_TYPE_NOT_SUPPORTED (-32005) or INVALID_PARAMS (-32602). */
  readonly error: A2AError;
}

/**
 * Longest trimmed text (in UTF-16 code units) that is parsed as JSON to look for tool-call
 * fields. Longer JSON-looking text, and text that starts like JSON but does not parse, is
 * scanned for quoted tool-call keys instead (see {@link inspectInboundContent}), so padding a
 * tool result with white space or breaking its syntax does not get it through unseen.
 *
 * @example
 * ```ts
 * MAX_JSON_INSPECT_CHARS; // 65536
 * ```
 */
export const MAX_JSON_INSPECT_CHARS = 65_536;

/**
 * Most nodes (objects, arrays and their entries) of one part's metadata that are looked at. Part
 * metadata is a few keys in practice; a part whose metadata is larger than this is refused rather
 * than passed unread (fail closed).
 */
const MAX_METADATA_NODES = 4096;

/** Keys and type values longer than this are no framework's marker; they are not normalised. */
const MAX_NAME_LENGTH = 64;

/**
 * Fragments that make a key, or the value of a type-like key, a tool marker. Names are compared
 * normalised (lower case, only letters and digits), so `functionResponse`, `function_response`
 * and `FUNCTION-RESPONSE` are one name, and a fragment matches anywhere in it (`tool_call_id`,
 * `custom_tool_call_output`, `mcp_tool_use`). Covered: Gemini/ADK (`functionCall`,
 * `functionResponse`, `executableCode`, `codeExecutionResult`), OpenAI (`tool_calls`,
 * `tool_call_id`, `function_call`, `function_call_output`, `call_id` below), Anthropic (`tool_use`,
 * `tool_result`, `tool_use_id`) and MCP-style names.
 */
const TOOL_FRAGMENTS: readonly string[] = [
  'functioncall',
  'functionresponse',
  'functionresult',
  'functionoutput',
  'toolcall',
  'tooluse',
  'toolresult',
  'toolresponse',
  'tooloutput',
  'toolinvocation',
  'executablecode',
  'codeexecution',
];

/** Extra fragments that only count in the value of a type-like key (OpenAI Responses item types, MCP). */
const TOOL_TYPE_FRAGMENTS: readonly string[] = [
  ...TOOL_FRAGMENTS,
  'mcpcall',
  'mcptool',
  'mcpapproval',
  'mcplisttools',
  'computercall',
  'shellcall',
  'searchcall',
  'interpretercall',
  'generationcall',
];

/** Whole (normalised) keys that are tool markers on their own. */
const TOOL_KEYS: ReadonlySet<string> = new Set(['callid']);

/** `role` values that mark a chat message as a tool's answer. */
const TOOL_ROLES: ReadonlySet<string> = new Set(['tool', 'function']);

/**
 * A quoted JSON key, and the string value after it if there is one. Used only on text that starts
 * like JSON but is too long to parse or does not parse. Every quantifier but the white space is
 * bounded and a match can only start at a quote, so the scan is linear.
 */
const QUOTED_KEY = /"([^"\\\n]{1,64})"\s*:\s*(?:"([^"\\\n]{0,64})")?/g;

/**
 * The first part of `message` that an inbound A2A turn must not carry, with the error to send
 * and an audit kind; `undefined` when every part is acceptable. Parts are checked in order:
 *
 * - a file (`raw` or `url` part) or a `data` part → CONTENT_TYPE_NOT_SUPPORTED (-32005);
 * - a text part whose metadata marks it as a tool/function call or result → INVALID_PARAMS
 *   (-32602): a key such as `adk_type` or `type` (any key ending in "type", or `kind`) whose value
 *   names one (`function_call`, `function_response`, `tool_result`, `tool_use`,
 *   `function_call_output`, `executable_code` …), a key that names one itself (`functionResponse`,
 *   `tool_call_id` …), or `role: tool`; nested objects included;
 * - a text part whose whole text, trimmed, is a JSON object or array that anywhere holds such a
 *   key or type value, `role: "tool"`, or a call shape (`name` with `arguments`/`args`, or
 *   `id` + `name` + `response` as in an ADK function response) → INVALID_PARAMS (-32602).
 *
 * Text is parsed only when its first non-white-space character is `{` or `[`; if it is longer
 * than {@link MAX_JSON_INSPECT_CHARS} or does not parse, its quoted keys are scanned with the same
 * rules instead. JSON inside prose or a code fence is left alone: it reaches the model framed as
 * untrusted text, and only a whole-part payload can be mistaken for structured tool traffic.
 * Error messages name the part and what to do, never its content.
 *
 * @example
 * ```ts
 * inspectInboundContent({ messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }] }); // undefined
 * inspectInboundContent({ messageId: 'm', role: 'user', parts: [{ kind: 'data', data: {} }] });
 * // { reason: 'unsupported_content', partIndex: 0, kind: 'data', error: A2AError(-32005) }
 * ```
 */
export function inspectInboundContent(message: Message): InboundContentViolation | undefined {
  const parts = message.parts;
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index] as Part;
    switch (part.kind) {
      case 'text':
        break;
      case 'raw':
      case 'url':
        return violation(index, 'file', notText(index, `a file (${part.kind === 'raw' ? 'inline bytes' : 'by URL'})`));
      case 'data':
        return violation(index, 'data', notText(index, 'a data part'));
      default:
        // A kind the codecs do not produce today; refuse rather than pass it unread.
        return violation(index, 'data', notText(index, 'not a text part'));
    }
    if (part.metadata !== undefined && metadataMarksTool(part.metadata)) {
      return violation(
        index,
        'tool_metadata',
        new A2AError(
          'INVALID_PARAMS',
          `Invalid params: message.parts[${index}].metadata marks the part as a tool or function call or result; ` +
            'callers cannot send tool calls or tool results. Send plain text without that metadata.',
          { field: `message.parts[${index}].metadata` },
        ),
      );
    }
    if (textLooksLikeToolJson(part.text)) {
      return violation(
        index,
        'tool_json',
        new A2AError(
          'INVALID_PARAMS',
          `Invalid params: message.parts[${index}].text is a JSON tool call or tool result ` +
            '(for example a functionResponse, tool_calls or tool_result object); callers cannot send tool output. ' +
            'Send the request as plain text.',
          { field: `message.parts[${index}].text` },
        ),
      );
    }
  }
  return undefined;
}

/**
 * The error to refuse `message` with, or `undefined` when it may run: {@link inspectInboundContent}
 * without the audit details.
 *
 * @example
 * ```ts
 * const error = checkInboundContent(message);
 * if (error !== undefined) throw error;
 * ```
 */
export function checkInboundContent(message: Message): A2AError | undefined {
  return inspectInboundContent(message)?.error;
}

function violation(partIndex: number, kind: InboundContentKind, error: A2AError): InboundContentViolation {
  return { reason: UNSUPPORTED_CONTENT_REASON, partIndex, kind, error };
}

function notText(index: number, what: string): A2AError {
  return new A2AError(
    'CONTENT_TYPE_NOT_SUPPORTED',
    `Content type not supported: message.parts[${index}] is ${what}; this agent accepts text parts only. ` +
      'Send the content as plain text.',
    { field: `message.parts[${index}]` },
  );
}

// ---------------------------------------------------------------------------------------------
// Metadata.

/** True when part metadata, at any depth, marks the part as tool traffic. Fails closed when huge. */
function metadataMarksTool(metadata: JsonValue): boolean {
  return walkMarksTool(metadata, MAX_METADATA_NODES) !== false;
}

/**
 * Walks a JSON value (iteratively: no recursion for a deep value to overflow) and applies the
 * tool rules to every object. Returns true on a marker, false when none, and 'budget' when more
 * than `budget` nodes were seen first.
 */
function walkMarksTool(root: JsonValue, budget: number): boolean | 'budget' {
  const stack: JsonValue[] = [root];
  let seen = 0;
  while (stack.length > 0) {
    const value = stack.pop() as JsonValue;
    if (++seen > budget) return 'budget';
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const item of value) if (item !== null && typeof item === 'object') stack.push(item);
      continue;
    }
    if (objectMarksTool(value)) return true;
    for (const key in value) {
      const child = value[key];
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return false;
}

/** The rules for one object: its keys, its type-like values, its role, its call shape. */
function objectMarksTool(object: { readonly [key: string]: JsonValue | undefined }): boolean {
  let hasName = false;
  let hasArguments = false;
  let hasId = false;
  let hasResponse = false;
  for (const key in object) {
    const name = normalise(key);
    if (name === undefined) continue;
    if (isToolKey(name)) return true;
    const value = object[key];
    if (typeof value === 'string' && valueMarksTool(name, value)) return true;
    if (name === 'name') hasName = typeof value === 'string';
    else if (name === 'arguments' || name === 'args') hasArguments = true;
    else if (name === 'id') hasId = true;
    else if (name === 'response') hasResponse = true;
  }
  return hasName && (hasArguments || (hasId && hasResponse));
}

function isToolKey(name: string): boolean {
  return TOOL_KEYS.has(name) || containsFragment(name, TOOL_FRAGMENTS);
}

/** A string value that marks tool traffic under the (normalised) key `name`. */
function valueMarksTool(name: string, value: string): boolean {
  if (name === 'role') {
    const role = normalise(value);
    return role !== undefined && TOOL_ROLES.has(role);
  }
  if (name === 'kind' || name.endsWith('type')) {
    const type = normalise(value);
    return type !== undefined && containsFragment(type, TOOL_TYPE_FRAGMENTS);
  }
  return false;
}

function containsFragment(name: string, fragments: readonly string[]): boolean {
  for (const fragment of fragments) if (name.includes(fragment)) return true;
  return false;
}

/**
 * Lower case, letters and digits only; `undefined` for a name too long to be any framework's
 * marker (which also keeps hostile keys from costing more than a bounded amount each).
 */
function normalise(name: string): string | undefined {
  if (name.length > MAX_NAME_LENGTH) return undefined;
  let out = '';
  for (let i = 0; i < name.length; i++) {
    let c = name.charCodeAt(i);
    if (c >= 65 && c <= 90) c += 32;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) out += String.fromCharCode(c);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Text that is a JSON tool payload.

/**
 * True when the whole (trimmed) text is a JSON tool call or result. Plain prose returns at its
 * first non-white-space character without allocating.
 */
function textLooksLikeToolJson(text: string): boolean {
  const first = firstNonSpace(text);
  if (first === -1) return false;
  const c = text.charCodeAt(first);
  if (c !== 0x7b /* { */ && c !== 0x5b /* [ */) return false;
  const trimmed = text.trim();
  if (trimmed.length <= MAX_JSON_INSPECT_CHARS) {
    let parsed: JsonValue;
    try {
      parsed = JSON.parse(trimmed) as JsonValue;
    } catch {
      return scanQuotedKeys(trimmed);
    }
    // Every node is looked at: the text is bounded, so the walk is too.
    return walkMarksTool(parsed, Number.POSITIVE_INFINITY) === true;
  }
  return scanQuotedKeys(trimmed);
}

/**
 * The key rules (and the type-like value and role rules) over every quoted `"key": "value"` of
 * text that could not be parsed. The call-shape rule needs an object, so it is not applied here.
 */
function scanQuotedKeys(text: string): boolean {
  QUOTED_KEY.lastIndex = 0;
  try {
    for (let m = QUOTED_KEY.exec(text); m !== null; m = QUOTED_KEY.exec(text)) {
      const name = normalise(m[1] ?? '');
      if (name === undefined) continue;
      if (isToolKey(name)) return true;
      const value = m[2];
      if (value !== undefined && valueMarksTool(name, value)) return true;
    }
    return false;
  } finally {
    QUOTED_KEY.lastIndex = 0;
  }
}

/** Index of the first character `String.prototype.trim` would keep, or -1 when there is none. */
function firstNonSpace(text: string): number {
  for (let i = 0; i < text.length; i++) if (!isTrimmed(text.charCodeAt(i))) return i;
  return -1;
}

/** The characters `trim()` removes: ECMAScript WhiteSpace and LineTerminator. */
function isTrimmed(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
