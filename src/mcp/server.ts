/**
 * The MCP server over the outbound tools, on `@modelcontextprotocol/server` v2: a factory of
 * `McpServer` instances (the SDK builds one per stdio connection, or per HTTP request), and
 * the stdio way to serve it ({@link serveMcpStdio}; stdout carries MCP frames only, nothing
 * else may write there). The Streamable HTTP way is in http.ts.
 *
 * @example
 * ```ts
 * const options = { client, autonomy: 'read_only' } as const;
 * const stdio = serveMcpStdio(options);              // until stdin ends: await stdio.closed
 * ```
 */
import type { Readable, Writable } from 'node:stream';
import {
  CLIENT_CAPABILITIES_META_KEY,
  McpServer,
  inputRequired,
  type CallToolResult,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import {
  CONFIRM_INPUT_KEY,
  ConfirmationDesk,
  supportsFormElicitation,
  type ConfirmEvent,
  type ConfirmOutcome,
} from './confirm.js';
import {
  A2aTools,
  LIST_AGENTS_INPUT,
  TOOL_NAMES,
  getTaskInputSchema,
  sendInputSchema,
  type A2aToolsOptions,
  type ToolDefinition,
  type SendInput,
  type ToolOutput,
} from './tools.js';

/**
 * The server's name and version in the MCP handshake.
 *
 * @example
 * ```ts
 * mcpClient.getServerVersion(); // { name: 'airlock', version: '0.1.0' }
 * ```
 */
export const MCP_SERVER_INFO = { name: 'airlock', version: '0.1.0' } as const;

/**
 * How often a waiting `a2a_send` reports progress, when the caller asked for progress (a
 * `progressToken`): a host that resets its request timeout on progress then waits as long as
 * the entry's `max_wait_s`, not just its own default (often 60 s).
 *
 * @example
 * ```ts
 * airlockMcpFactory({ client, autonomy: 'read_only', progressIntervalMs: DEFAULT_PROGRESS_INTERVAL_MS });
 * ```
 */
export const DEFAULT_PROGRESS_INTERVAL_MS = 10_000;

/**
 * What the server needs: the tools' options (client, autonomy, principal key), how often a
 * waiting send reports progress, and under autonomy `confirm` how long the person has to
 * answer and where confirmation outcomes are reported (the CLI logs them as `mcp.confirm`).
 *
 * @example
 * ```ts
 * const options: AirlockMcpOptions = { client, autonomy: 'confirm', confirmTimeoutMs: 60_000, onConfirmation: console.error };
 * ```
 */
export type AirlockMcpOptions = A2aToolsOptions & {
  progressIntervalMs?: number;
  confirmTimeoutMs?: number;
  onConfirmation?: (event: ConfirmEvent) => void;
};

/**
 * Builds one `McpServer` with the tools registered.
 *
 * @example
 * ```ts
 * const server = createAirlockMcpServer(new A2aTools({ client, autonomy: 'read_only' }));
 * // or, reporting progress every 5 s while a send waits, with a shared confirmation desk:
 * const patient = createAirlockMcpServer(new A2aTools({ client, autonomy: 'confirm' }), 5000, new ConfirmationDesk());
 * await server.connect(transport);
 * ```
 */
export function createAirlockMcpServer(
  tools: A2aTools,
  progressIntervalMs: number = DEFAULT_PROGRESS_INTERVAL_MS,
  desk: ConfirmationDesk = new ConfirmationDesk(),
): McpServer {
  const server = new McpServer(
    { ...MCP_SERVER_INFO },
    // On 2025-era connections the SDK asks the host itself (elicitation/create) and waits at
    // most the desk's timeout for the answer.
    { capabilities: { tools: {} }, inputRequired: { roundTimeoutMs: desk.timeoutMs, maxRounds: 2 } },
  );
  const definitions = new Map<string, ToolDefinition>(tools.definitions().map((tool) => [tool.name, tool]));
  const config = (name: ToolDefinition['name']) => {
    const definition = definitions.get(name);
    if (definition === undefined) throw new Error(`no definition for ${name}`);
    return {
      title: definition.annotations.title,
      description: definition.description,
      annotations: definition.annotations,
    };
  };
  server.registerTool(
    TOOL_NAMES.listAgents,
    { ...config(TOOL_NAMES.listAgents), inputSchema: LIST_AGENTS_INPUT },
    async () => toResult(tools.listAgents()),
  );
  const names = tools.names();
  if (names !== undefined) {
    server.registerTool(
      TOOL_NAMES.send,
      { ...config(TOOL_NAMES.send), inputSchema: sendInputSchema(names) },
      async (input, ctx) => {
        if (tools.asksPerson(input.agent)) return confirmThenSend(server, tools, desk, input, ctx, progressIntervalMs);
        return toResult(await withProgress(ctx, progressIntervalMs, () => tools.send(input)));
      },
    );
    server.registerTool(
      TOOL_NAMES.getTask,
      { ...config(TOOL_NAMES.getTask), inputSchema: getTaskInputSchema(names) },
      async (input) => toResult(await tools.getTask(input)),
    );
  }
  return server;
}

/**
 * A factory of servers sharing one set of tools (one outbound client, one agent list): what
 * the SDK's serving entries take.
 *
 * @example
 * ```ts
 * const factory = airlockMcpFactory({ client, autonomy: 'read_only' });
 * const server = factory();
 * ```
 */
export function airlockMcpFactory(options: AirlockMcpOptions): () => McpServer {
  const tools = new A2aTools(options);
  // One desk for every connection (and every stateless HTTP request) of this process.
  const desk = new ConfirmationDesk({
    ...(options.confirmTimeoutMs !== undefined && { timeoutMs: options.confirmTimeoutMs }),
    ...(options.onConfirmation !== undefined && { onOutcome: options.onConfirmation }),
    // An answer that never came is a refusal like the others: through the client, unconfirmed,
    // so nothing is sent and the audit has its row (the host was already told by the SDK).
    onTimeout: (input) =>
      void tools.send(input, { confirmed: false, reason: REFUSAL_REASONS.timeout }).catch(() => undefined),
  });
  return () => createAirlockMcpServer(tools, options.progressIntervalMs, desk);
}

/**
 * A running stdio server. `closed` settles when the connection ends (stdin closed, or
 * `close()`).
 *
 * @example
 * ```ts
 * const handle = serveMcpStdio(options);
 * await handle.closed;
 * ```
 */
export interface McpStdioHandle {
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves the tools over stdio (by default the process's own stdin and stdout).
 *
 * @example
 * ```ts
 * const handle = serveMcpStdio({ client, autonomy: 'read_only' }, { onerror: (e) => console.error(e.message) });
 * ```
 */
export function serveMcpStdio(
  options: AirlockMcpOptions,
  io: { stdin?: Readable; stdout?: Writable; onerror?: (error: Error) => void } = {},
): McpStdioHandle {
  const transport = new ObservedStdioTransport(io.stdin ?? process.stdin, io.stdout ?? process.stdout);
  const handle = serveStdio(airlockMcpFactory(options), {
    transport,
    ...(io.onerror !== undefined && { onerror: io.onerror }),
  });
  return { closed: transport.closed, close: () => handle.close() };
}

/** The SDK's stdio transport, with a promise that settles when it closes (the entry owns `onclose`). */
class ObservedStdioTransport extends StdioServerTransport {
  readonly closed: Promise<void>;
  #markClosed: () => void = () => undefined;

  constructor(stdin: Readable, stdout: Writable) {
    super(stdin, stdout);
    this.closed = new Promise<void>((resolve) => {
      this.#markClosed = resolve;
    });
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.#markClosed();
    }
  }
}

/**
 * Runs `work`, and while it runs sends `notifications/progress` every `intervalMs` when the
 * request carries a progress token. Progress is a heartbeat (a count and a fixed message):
 * nothing from the remote is in it. A failed notification is ignored.
 */
async function withProgress<T>(ctx: ServerContext, intervalMs: number, work: () => Promise<T>): Promise<T> {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return work();
  let beats = 0;
  const timer = setInterval(() => {
    beats += 1;
    ctx.mcpReq
      .notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress: beats, message: 'waiting for the remote agent' },
      })
      .catch(() => undefined);
  }, intervalMs);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** Why the caller is told an acting call was not sent, per confirmation outcome. */
const REFUSAL_REASONS: Readonly<Record<Exclude<ConfirmOutcome, 'accepted'>, string>> = {
  declined: 'the person declined it',
  cancelled: 'the person cancelled the confirmation',
  timeout: 'no answer from the person in time',
  stale: 'the confirmation had expired, was already used, or was for a different message',
  unsupported:
    'this MCP host cannot ask the person to confirm (no elicitation support); use a host that supports MCP ' +
    'elicitation, or an operator may start the server with --autonomy acting',
};

/**
 * `a2a_send` to an acting entry under autonomy `confirm`. First call: ask the person (an
 * input-required result), or refuse when the host declared no form elicitation. The retry
 * carries the desk's request state and the answer: only an accepted confirmation of this very
 * call lets it go out; every other outcome is sent to the client unconfirmed, so it is refused
 * before any request and audited.
 */
async function confirmThenSend(
  server: McpServer,
  tools: A2aTools,
  desk: ConfirmationDesk,
  input: SendInput,
  ctx: ServerContext,
  progressIntervalMs: number,
): Promise<CallToolResult | InputRequiredResult> {
  const state = ctx.mcpReq.requestState();
  let outcome: ConfirmOutcome;
  if (state === undefined) {
    if (supportsFormElicitation(clientCapabilities(server, ctx))) {
      const { requestState, elicit } = desk.ask(input);
      return inputRequired({ inputRequests: { [CONFIRM_INPUT_KEY]: inputRequired.elicit(elicit) }, requestState });
    }
    outcome = 'unsupported';
    desk.report(input.agent, outcome);
  } else {
    outcome = desk.settle(input, state, ctx.mcpReq.inputResponses);
  }
  if (outcome === 'accepted') {
    return toResult(await withProgress(ctx, progressIntervalMs, () => tools.send(input, { confirmed: true })));
  }
  return toResult(await tools.send(input, { confirmed: false, reason: REFUSAL_REASONS[outcome] }));
}

/**
 * The host's declared capabilities: from the request's own envelope (2026-07-28), else from
 * the initialize handshake (2025 era; none on a stateless 2025-era HTTP request, which cannot
 * receive server-to-client requests anyway).
 */
function clientCapabilities(server: McpServer, ctx: ServerContext): unknown {
  const envelope = ctx.mcpReq.envelope as Readonly<Record<string, unknown>> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.server.getClientCapabilities();
}

function toResult(output: ToolOutput): CallToolResult {
  return { content: [{ type: 'text', text: output.text }], ...(output.isError && { isError: true }) };
}
