/**
 * The MCP server exposing the outbound tools (`a2a_list_agents`, `a2a_send`, `a2a_get_task`)
 * over stdio or Streamable HTTP, on top of the outbound client.
 *
 * @example
 * ```ts
 * import { serveMcpStdio, parseAutonomy } from './mcp/index.js';
 *
 * const handle = serveMcpStdio({ client, autonomy: parseAutonomy(process.env.AIRLOCK_MCP_AUTONOMY) });
 * await handle.closed;
 * ```
 */
export {
  CONFIRM_INPUT_KEY,
  ConfirmationDesk,
  DEFAULT_CONFIRM_TIMEOUT_MS,
  confirmationMessage,
  supportsFormElicitation,
} from './confirm.js';
export type { ConfirmEvent, ConfirmOutcome, ConfirmationDeskOptions } from './confirm.js';
export {
  A2aTools,
  AUTONOMY_ENV,
  LIST_AGENTS_INPUT,
  MCP_AUTONOMIES,
  MCP_PRINCIPAL_KEY,
  TOOL_NAMES,
  getTaskInputSchema,
  parseAutonomy,
  sendInputSchema,
} from './tools.js';
export type {
  A2aToolsOptions,
  GetTaskInput,
  ListedAgent,
  McpAutonomy,
  PersonAnswer,
  SendInput,
  ToolDefinition,
  ToolHints,
  ToolOutput,
} from './tools.js';
export {
  DEFAULT_PROGRESS_INTERVAL_MS,
  MCP_SERVER_INFO,
  airlockMcpFactory,
  createAirlockMcpServer,
  serveMcpStdio,
} from './server.js';
export { DEFAULT_MCP_PORT, MAX_MCP_BODY_BYTES, MCP_HTTP_PATH, isLoopbackBindHost, startMcpHttp } from './http.js';
export type { AirlockMcpOptions, McpStdioHandle } from './server.js';
export type { McpHttpHandle, McpHttpListenOptions } from './http.js';
