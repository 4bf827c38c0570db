/**
 * Agent tools: MCP tool servers, their pins, and the per-turn toolbox (docs/TOOLS.md).
 *
 * @example
 * ```ts
 * import { ToolHub, createToolboxBuilders } from '../tools/index.js';
 * const hub = new ToolHub(config.tools, { guarded, env: process.env });
 * await hub.start();
 * const builders = createToolboxBuilders(config.agents, { hub, tools: config.tools, decide, scrubber });
 * ```
 */
export { rawTokenProblem, toolsConfigProblem } from './config.js';
export type { ToolsConfig, ToolServerConfig, ToolsConfigProblem, ToolUsingAgent } from './config.js';
export { ToolServerError } from './errors.js';
export type { ToolServerErrorCode } from './errors.js';
export { serverDigest, toolDigest, toolDigests } from './digest.js';
export type { ListedTool } from './digest.js';
export { ToolPinStore, parseToolPinFile, pinStates } from './pins.js';
export type { ToolPinRecord, ToolPinSource, ToolPinState } from './pins.js';
export { ToolHub } from './hub.js';
export type { ResolvedTool, ServerView, ToolHubOptions } from './hub.js';
export { connectToolServer } from './connection.js';
export type { ConnectDeps, ToolServerConnection } from './connection.js';
export { guardedFetch } from './fetch.js';
export type { FetchLike, GuardedFetchOptions } from './fetch.js';
export { modelToolName, modelToolNames, MAX_MODEL_TOOL_NAME } from './names.js';
export { createToolboxBuilders } from './toolbox.js';
export type { ToolDecision, ToolboxAgent, ToolboxOptions, ToolboxTurn } from './toolbox.js';
