/**
 * The toolbox of one turn (the `TurnToolbox` port of `src/agents/tools.ts`): the agent's
 * allowed tools that are pinned, under model-safe names, in allow-list order; and the one way
 * to call them. Every call, in this order: the turn's call budget; a name the turn may use; the
 * arguments a JSON object; the tool pinned and its server up; then the ladder (`decide`,
 * injected: `approvals/` sits above this folder): `run` calls it, `park` hands the action to the
 * person, `refuse` refuses (a service principal asking for an acting tool is refused, never
 * parked). A result is the text content only (other content dropped with a note), scrubbed of
 * configured secrets, capped at `maxResultChars` and framed as untrusted content. Every call
 * writes one audit row (`a2a.tool.called|refused|parked`): tool, level, who, task, duration,
 * outcome, and the arguments' size and digest, never the arguments or the result.
 *
 * @example
 * ```ts
 * const builders = createToolboxBuilders(config.agents, { hub, tools: config.tools, decide, scrubber, audit });
 * const toolbox = builders.get('helper')?.({ ctx, taskId, contextId });
 * const outcome = await toolbox?.call('files__read_file', { path: 'a.txt' }, signal);
 * ```
 */
import { createHash } from 'node:crypto';
import type { ParkedToolCall, ToolCallOutcome, ToolLevel, ToolOffer, TurnToolbox } from '../agents/tools.js';
import { auditTime, type AuditEvent, type AuditReasonOf } from '../audit/index.js';
import { frameUntrusted } from '../content/index.js';
import { canonicalJson } from '../trust/digest.js';
import type { ToolsConfig } from './config.js';
import { ToolServerError } from './errors.js';
import type { ToolHub } from './hub.js';
import { modelToolNames } from './names.js';

/**
 * What the ladder says of a call at `level` by a principal of `principalKind`: run it now, park
 * it for the person, or refuse it. Built from `approvals/ladder.ts` by the server.
 *
 * @example
 * ```ts
 * const decide: ToolDecision = (level, kind) => (level === 'L1' || level === 'L2' ? 'run' : kind === 'service' ? 'refuse' : 'park');
 * ```
 */
export type ToolDecision = (
  level: ToolLevel,
  principalKind: 'client' | 'service' | 'delegated',
  /** The agent whose turn calls (its own action cap may apply). */
  agentSlug?: string,
) => 'run' | 'park' | 'refuse';

/**
 * Who a toolbox is built for (the task service's `ToolTurn` fits).
 *
 * @example
 * ```ts
 * const turn: ToolboxTurn = { ctx: { agentSlug: 'helper', caller: { clientId: 'app', kind: 'client' } }, taskId, contextId };
 * ```
 */
export interface ToolboxTurn {
  readonly ctx: {
    readonly agentSlug: string;
    readonly caller?: { readonly clientId: string; readonly kind: 'client' | 'service' | 'delegated' };
  };
  readonly taskId: string;
  readonly contextId: string;
  /** The action the person approved for this turn (from the gateway, never the backend). */
  readonly approved?: { readonly actionId: string; readonly tool: string; readonly args: unknown };
}

/**
 * What an agent's tool policy is made of (a config `AgentConfig` fits).
 *
 * @example
 * ```ts
 * const agent: ToolboxAgent = { slug: 'helper', allowTools: true, tools: { allow: ['files.read_file'] } };
 * ```
 */
export interface ToolboxAgent {
  readonly slug: string;
  readonly allowTools: boolean;
  readonly tools?: { readonly allow: readonly string[] };
}

/**
 * Options of {@link createToolboxBuilders}.
 *
 * @example
 * ```ts
 * const options: ToolboxOptions = { hub, tools: config.tools, decide, scrubber: createReplyScrubber(config.scrubSecrets) };
 * ```
 */
export interface ToolboxOptions {
  readonly hub: ToolHub;
  readonly tools: Pick<ToolsConfig, 'servers' | 'maxCallsPerTurn' | 'maxResultChars'>;
  readonly decide: ToolDecision;
  /** Replaces configured secrets in a tool result (`createReplyScrubber(config.scrubSecrets)`). */
  readonly scrubber: { scrub(text: string): string };
  /** One row per call; absent = no audit. */
  readonly audit?: (event: AuditEvent) => void;
  /** Milliseconds, for durations; default `performance.now`. */
  readonly now?: () => number;
}

interface AllowedTool {
  readonly modelName: string;
  readonly qualified: string;
  readonly server: string;
  readonly tool: string;
  readonly level: ToolLevel;
  readonly description?: string;
}

/** Approved action ids already run, kept per process (bounded; the oldest go first). */
const MAX_REMEMBERED_ACTIONS = 10_000;

/**
 * One toolbox builder per agent that may use tools (`allowTools` and a non-empty allow list):
 * the `TurnGrant.tools` of its turns. Agents without tools have no entry.
 *
 * @example
 * ```ts
 * createInFlightStep({ config, audit, tools: createToolboxBuilders(config.agents, options) });
 * ```
 */
export function createToolboxBuilders(
  agents: readonly ToolboxAgent[],
  options: ToolboxOptions,
): Map<string, (turn: ToolboxTurn) => TurnToolbox | undefined> {
  const builders = new Map<string, (turn: ToolboxTurn) => TurnToolbox | undefined>();
  const ran = new Set<string>();
  for (const agent of agents) {
    const allowed = allowedTools(agent, options.tools.servers);
    if (allowed.length === 0) continue;
    builders.set(agent.slug, (turn) => createToolbox(allowed, turn, options, ran));
  }
  return builders;
}

function allowedTools(agent: ToolboxAgent, servers: ToolsConfig['servers']): AllowedTool[] {
  if (agent.allowTools !== true) return [];
  const entries: Omit<AllowedTool, 'modelName'>[] = [];
  const seen = new Set<string>();
  for (const qualified of agent.tools?.allow ?? []) {
    if (seen.has(qualified)) continue;
    const dot = qualified.indexOf('.');
    if (dot < 0) continue;
    const server = servers.find((candidate) => candidate.name === qualified.slice(0, dot));
    const tool = qualified.slice(dot + 1);
    const entry = server !== undefined && Object.hasOwn(server.tools, tool) ? server.tools[tool] : undefined;
    if (server === undefined || entry === undefined) continue;
    seen.add(qualified);
    entries.push({
      qualified,
      server: server.name,
      tool,
      level: entry.level,
      ...(entry.description !== undefined && { description: entry.description }),
    });
  }
  const names = modelToolNames(entries.map((entry) => entry.qualified));
  return entries.map((entry, index) => ({ ...entry, modelName: names[index]! }));
}

function createToolbox(
  allowed: readonly AllowedTool[],
  turn: ToolboxTurn,
  options: ToolboxOptions,
  ran: Set<string>,
): TurnToolbox {
  const { hub, decide, scrubber } = options;
  const now = options.now ?? (() => performance.now());
  const byName = new Map(allowed.map((tool) => [tool.modelName, tool]));
  const offers: ToolOffer[] = [];
  const readyByServer = new Map<string, ReturnType<ToolHub['readyTools']>>();
  for (const tool of allowed) {
    let ready = readyByServer.get(tool.server);
    if (ready === undefined) {
      ready = hub.readyTools(tool.server);
      readyByServer.set(tool.server, ready);
    }
    const listed = ready.get(tool.tool);
    if (listed === undefined) continue;
    offers.push({
      name: tool.modelName,
      description: tool.description ?? listed.description ?? '',
      inputSchema: listed.inputSchema,
      level: tool.level,
    });
  }
  let calls = 0;
  const who = {
    agent: turn.ctx.agentSlug,
    taskId: turn.taskId,
    contextId: turn.contextId,
    ...(turn.ctx.caller !== undefined && { client: turn.ctx.caller.clientId, principalKind: turn.ctx.caller.kind }),
  };

  const refuse = (
    reason: AuditReasonOf<'a2a.tool.refused'>,
    text: string,
    fields: { tool: string; level?: ToolLevel; actionId?: string; args?: ArgsFacts; started?: number },
    outcome: 'denied' | 'error' = 'denied',
  ): ToolCallOutcome => {
    options.audit?.({
      type: 'a2a.tool.refused',
      time: auditTime(),
      outcome,
      ...who,
      tool: fields.tool,
      reason,
      ...(fields.level !== undefined && { level: fields.level }),
      ...(fields.actionId !== undefined && { actionId: fields.actionId }),
      ...(fields.args !== undefined && { argsBytes: fields.args.bytes, argsDigest: fields.args.digest }),
      ...(fields.started !== undefined && { durationMs: Math.round(now() - fields.started) }),
    });
    return reason === 'budget_exceeded' ? { kind: 'over_budget', reason: text } : { kind: 'refused', reason: text };
  };

  async function run(
    tool: AllowedTool,
    args: Record<string, unknown>,
    facts: ArgsFacts,
    signal: AbortSignal,
    actionId?: string,
  ): Promise<ToolCallOutcome> {
    const fields = {
      tool: tool.qualified,
      level: tool.level,
      args: facts,
      ...(actionId !== undefined && { actionId }),
    };
    const started = now();
    let result: Awaited<ReturnType<ToolHub['call']>>;
    try {
      result = await hub.call(tool.server, tool.tool, args, signal);
    } catch (error) {
      if (signal.aborted)
        return refuse('aborted', 'the turn was cancelled while the tool ran', { ...fields, started }, 'error');
      if (isTimeout(error)) {
        return refuse(
          'timeout',
          `the tool server "${tool.server}" did not answer within ${hub.timeoutSeconds(tool.server)} s; the call was abandoned`,
          { ...fields, started },
          'error',
        );
      }
      return refuse(
        'server_unavailable',
        `the tool server "${tool.server}" failed the call (it may have stopped); the tool did not answer`,
        { ...fields, started },
        'error',
      );
    }
    const text = resultText(result, tool, options.tools.maxResultChars, scrubber);
    const isError = result.isError === true;
    options.audit?.({
      type: 'a2a.tool.called',
      time: auditTime(),
      outcome: isError ? 'error' : 'ok',
      ...who,
      tool: tool.qualified,
      level: tool.level,
      durationMs: Math.round(now() - started),
      argsBytes: facts.bytes,
      argsDigest: facts.digest,
      outputChars: text.length,
      ...(isError && { reason: 'tool_error' as const }),
      ...(actionId !== undefined && { actionId }),
    });
    return { kind: 'result', text, isError };
  }

  /** The checks every call shares: budget, name, arguments, pin and server. */
  async function admit(
    name: string,
    args: unknown,
  ): Promise<{ tool: AllowedTool; args: Record<string, unknown>; facts: ArgsFacts } | ToolCallOutcome> {
    const tool = typeof name === 'string' ? byName.get(name) : undefined;
    const shownName = tool?.qualified ?? safeName(name);
    if (calls >= options.tools.maxCallsPerTurn) {
      return refuse(
        'budget_exceeded',
        `this turn used its ${options.tools.maxCallsPerTurn} tool calls (tools.maxCallsPerTurn)`,
        { tool: shownName, ...(tool !== undefined && { level: tool.level }) },
      );
    }
    calls += 1;
    if (tool === undefined)
      return refuse('not_offered', `no tool named "${safeName(name)}" is offered in this turn`, { tool: shownName });
    const facts = argsFacts(args);
    if (!isPlainObject(args) || facts === undefined) {
      return refuse('invalid_args', 'the arguments must be a JSON object', { tool: tool.qualified, level: tool.level });
    }
    const resolved = await hub.resolve(tool.server, tool.tool);
    if (resolved.kind !== 'ready') {
      const reason = resolved.kind === 'disabled' ? 'tool_disabled' : 'server_unavailable';
      // The hub's own words for a disabled or absent tool; never a server's error text (untrusted).
      const text =
        resolved.kind === 'unavailable'
          ? `the tool server "${tool.server}" is unavailable (it could not be reached or started); try again later`
          : resolved.reason;
      return refuse(reason, text, { tool: tool.qualified, level: tool.level, args: facts });
    }
    return { tool, args, facts };
  }

  return {
    offers,
    async call(name, args, signal) {
      const admitted = await admit(name, args);
      if ('kind' in admitted) return admitted;
      const { tool, facts } = admitted;
      const kind = turn.ctx.caller?.kind ?? 'client';
      const decision = decide(tool.level, kind, turn.ctx.agentSlug);
      if (decision === 'refuse') {
        return refuse(
          kind === 'service' ? 'service_principal_capped' : 'level_refused',
          kind === 'service'
            ? `${tool.modelName} is an acting tool (${tool.level}); a service principal cannot use it and no person can approve it`
            : `${tool.modelName} needs autonomy level ${tool.level}, which this caller may not use`,
          { tool: tool.qualified, level: tool.level, args: facts },
        );
      }
      if (decision === 'park') {
        options.audit?.({
          type: 'a2a.tool.parked',
          time: auditTime(),
          outcome: 'ok',
          ...who,
          tool: tool.qualified,
          level: tool.level,
          argsBytes: facts.bytes,
          argsDigest: facts.digest,
        });
        const action: ParkedToolCall = { tool: tool.modelName, args: admitted.args, level: tool.level };
        return { kind: 'park', action };
      }
      return run(tool, admitted.args, facts, signal);
    },
    async runApproved(asked, signal) {
      // Only the action the person approved for this turn runs, with exactly the approved tool and
      // arguments: what the backend hands back is an id to match, not a command.
      const action = turn.approved;
      if (action === undefined || asked.actionId !== action.actionId) {
        return refuse('not_approved', 'no such action was approved for this turn', { tool: safeName(asked.tool) });
      }
      const admitted = await admit(action.tool, action.args);
      if ('kind' in admitted) return admitted;
      const { tool, facts } = admitted;
      if (ran.has(action.actionId)) {
        return refuse('already_run', 'this approved action has run already; an approval runs once', {
          tool: tool.qualified,
          level: tool.level,
          args: facts,
          actionId: action.actionId,
        });
      }
      ran.add(action.actionId);
      if (ran.size > MAX_REMEMBERED_ACTIONS) ran.delete(ran.values().next().value as string);
      return run(tool, admitted.args, facts, signal, action.actionId);
    },
  };
}

interface ArgsFacts {
  readonly bytes: number;
  readonly digest: string;
}

/** Size and JCS digest of the arguments; undefined when they cannot be canonicalised. */
function argsFacts(args: unknown): ArgsFacts | undefined {
  if (!isPlainObject(args)) return undefined;
  try {
    const canonical = canonicalJson(args);
    return {
      bytes: Buffer.byteLength(canonical, 'utf8'),
      digest: createHash('sha256').update(canonical, 'utf8').digest('hex'),
    };
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A model-given name as it may appear in a reason and an audit row. */
function safeName(name: unknown): string {
  return typeof name === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(name) ? name : 'unknown';
}

function isTimeout(error: unknown): boolean {
  return (
    (error instanceof ToolServerError && error.code === 'tool_call_timeout') ||
    (error as { code?: unknown } | null)?.code === 'REQUEST_TIMEOUT'
  );
}

/**
 * The text the model gets: text content joined, a note for what was dropped, secrets scrubbed,
 * cut at `max` characters (saying so), framed as untrusted content from the tool.
 */
function resultText(
  result: { content?: unknown },
  tool: AllowedTool,
  max: number,
  scrubber: { scrub(text: string): string },
): string {
  const texts: string[] = [];
  let dropped = 0;
  for (const item of Array.isArray(result.content) ? (result.content as unknown[]) : []) {
    const block = item as { type?: unknown; text?: unknown };
    if (block?.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else dropped += 1;
  }
  let text = scrubber.scrub(texts.join('\n'));
  if (text.length > max) {
    let end = max;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end -= 1;
    text = `${text.slice(0, end)}\n[result cut at ${max} characters]`;
  }
  if (dropped > 0) text += `\n[${dropped} non-text content item${dropped === 1 ? '' : 's'} dropped]`;
  return frameUntrusted(text, { source: `tool ${tool.qualified}` });
}
