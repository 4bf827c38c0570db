/**
 * The tools an inbound A2A turn may use. An outside party drives the turn, so the default is no
 * tool at all; an agent configured with `allowTools: true` gets only the tools its `tools.allow`
 * list names that actually exist, and never the outbound A2A client tools, so an inbound request
 * cannot be relayed to another A2A agent (and two agents cannot loop through each other).
 *
 * @example
 * ```ts
 * const tools = toolsForInboundTurn(agentConfig, registry.tools());
 * const turn = { ...baseTurn, tools };
 * ```
 */

/** The part of an agent's configuration that decides its tools (an `AgentConfig` fits). */
export interface InboundToolPolicy {
  /** Off by default in config: no tools at all. */
  readonly allowTools: boolean;
  /** The agent's allow list; exact names, no wildcards. */
  readonly tools?: { readonly allow: readonly string[] };
}

/** A tool the gateway could offer. */
export interface AvailableTool {
  readonly name: string;
  /** True for the outbound A2A client tools (send to / poll a remote agent): never offered inbound. */
  readonly outboundA2A?: boolean;
}

/**
 * The names of the tools an inbound A2A turn of `agent` may use: empty unless `agent.allowTools`
 * is true; otherwise each name in `agent.tools.allow` (in that order, once) that names a tool in
 * `available`, leaving out every name that any available tool flagged `outboundA2A` carries —
 * even when the allow list names it. Names match exactly (case-sensitive, no wildcards). A name
 * that is allowed but not available is left out rather than passed on, so a backend never hears
 * of a tool the gateway does not have.
 *
 * @example
 * ```ts
 * toolsForInboundTurn(
 *   { allowTools: true, tools: { allow: ['search', 'a2a_send', 'missing'] } },
 *   [{ name: 'search' }, { name: 'a2a_send', outboundA2A: true }],
 * ); // ['search']
 * toolsForInboundTurn({ allowTools: false, tools: { allow: ['search'] } }, [{ name: 'search' }]); // []
 * ```
 */
export function toolsForInboundTurn(agent: InboundToolPolicy, available: readonly AvailableTool[]): string[] {
  if (agent.allowTools !== true) return [];
  const allow = agent.tools?.allow;
  if (allow === undefined || allow.length === 0) return [];
  // A name is offerable only when some available tool has it and none that has it is an outbound
  // A2A tool: a duplicate registration must not launder the outbound flag away.
  const offerable = new Map<string, boolean>();
  for (const tool of available) {
    const outbound = tool.outboundA2A === true;
    offerable.set(tool.name, !outbound && (offerable.get(tool.name) ?? true));
  }
  const tools: string[] = [];
  const taken = new Set<string>();
  for (const name of allow) {
    if (offerable.get(name) !== true || taken.has(name)) continue;
    taken.add(name);
    tools.push(name);
  }
  return tools;
}
