/**
 * The inbound content policy for A2A turns, as pure functions: what a caller's message may hold,
 * the framed prompt a model backend sends, the tools a turn may use, and the scrubbing of
 * configured secrets from replies.
 *
 * @example
 * ```ts
 * import { buildInboundPrompt, checkInboundContent, createReplyScrubber, toolsForInboundTurn } from './inbound/index.js';
 *
 * const error = checkInboundContent(message);
 * if (error !== undefined) throw error;
 * const prompt = buildInboundPrompt(textOf(message));
 * const tools = toolsForInboundTurn(agentConfig, availableTools);
 * const reply = createReplyScrubber(config.scrubSecrets).stream();
 * ```
 */
export {
  MAX_JSON_INSPECT_CHARS,
  UNSUPPORTED_CONTENT_REASON,
  checkInboundContent,
  inspectInboundContent,
} from './content-rules.js';
export type { InboundContentKind, InboundContentViolation, UnsupportedContentReason } from './content-rules.js';
export { INBOUND_SOURCE, buildInboundPrompt } from './prompt.js';
export type { InboundPrompt, InboundPromptOptions } from './prompt.js';
export { toolsForInboundTurn } from './tools.js';
export type { AvailableTool, InboundToolPolicy } from './tools.js';
export { createReplyScrubber } from './scrub.js';
export type { ReplyScrubber, StreamScrubber } from './scrub.js';
