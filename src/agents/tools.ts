/**
 * The tool port: what a backend is given to use tools in a turn. The gateway builds one
 * {@link TurnToolbox} per turn from the agent's allow list, the tool servers' pinned tools and
 * the autonomy ladder (`src/tools/` implements it); a backend only offers `offers` to its model
 * and runs every call through `call`, never through a tool server of its own. A backend with no
 * toolbox (or an empty one) offers its model no tool at all.
 *
 * What `call` answers:
 * - `result`: the tool ran; `text` is already capped, scrubbed of configured secrets and framed
 *   as untrusted content, ready to hand back to the model as the tool's result.
 * - `refused`: the tool did not run (not offered, disabled by a changed pin, a service principal
 *   asking for an acting tool, the server failed or timed out); `reason` is for the model.
 * - `over_budget`: the turn used up a budget (tool calls, result characters); the backend ends
 *   the turn with `{ type: 'failed', reason }`.
 * - `park`: an acting tool needs the person; the backend ends the turn with
 *   `{ type: 'propose-action', action, continuation }`, keeping in `continuation` what it needs
 *   to go on (its model transcript). When the person decides, a new turn starts with
 *   `turn.approvedAction` (run it with `runApproved`, which runs exactly the approved arguments,
 *   once) or `turn.deniedAction`, each carrying that continuation back.
 *
 * @example
 * ```ts
 * for (const call of modelToolCalls) {
 *   const outcome = await turn.tools!.call(call.name, call.args, turn.signal);
 *   if (outcome.kind === 'park') {
 *     yield { type: 'propose-action', action: outcome.action, continuation: transcript };
 *     return;
 *   }
 *   if (outcome.kind === 'over_budget') {
 *     yield { type: 'failed', reason: outcome.reason };
 *     return;
 *   }
 *   transcript.push(toolMessage(call.id, outcome.kind === 'result' ? outcome.text : outcome.reason));
 * }
 * ```
 */

/** A rung of the autonomy ladder: L1 read-only … L4 irreversible acting. */
export type ToolLevel = 'L1' | 'L2' | 'L3' | 'L4';

/** A tool as a model is offered it. */
export interface ToolOffer {
  /** Model-safe name: `[a-z0-9_]`, 1–64 characters, unique within the turn. */
  readonly name: string;
  /** What the model is told the tool does (the operator's override, or the server's own). */
  readonly description: string;
  /** JSON Schema of the arguments (an object schema), as pinned. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly level: ToolLevel;
}

/** A guarded tool call the person must decide on (see {@link TurnToolbox.call}). */
export interface ParkedToolCall {
  /** The model-safe tool name. */
  readonly tool: string;
  readonly args: unknown;
  readonly level: ToolLevel;
}

/** What {@link TurnToolbox.call} answers; see the module comment. */
export type ToolCallOutcome =
  | { readonly kind: 'result'; readonly text: string; readonly isError: boolean }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'over_budget'; readonly reason: string }
  | { readonly kind: 'park'; readonly action: ParkedToolCall };

/** The tools of one turn, and the one way to call them. */
export interface TurnToolbox {
  /** What the model may be offered, in the agent's allow-list order. */
  readonly offers: readonly ToolOffer[];
  /**
   * Calls a tool by its model-safe name with the model's arguments (already parsed JSON). Never
   * throws for the tool's or the model's faults: they come back as `refused` results.
   */
  call(name: string, args: unknown, signal: AbortSignal): Promise<ToolCallOutcome>;
  /**
   * Runs the action the person approved (`turn.approvedAction`): exactly its arguments, once.
   * A second call for the same action answers `refused`.
   */
  runApproved(
    action: { readonly actionId: string; readonly tool: string; readonly args: unknown },
    signal: AbortSignal,
  ): Promise<ToolCallOutcome>;
}
