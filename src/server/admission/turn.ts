/**
 * What the turn steps work on: a message on its way to the task service, for one caller, and
 * how the route refuses it in its own shape (a JSON-RPC error with the call's id, an ask
 * error). A request that starts no turn (get, list, cancel, …) has no message: the turn steps
 * pass it through.
 *
 * @example
 * ```ts
 * const turn: TurnCandidate = { ctx, message, refuseTurn: (error) => sendAskError(res, askErrorResponse(error)), text: '', grant: undefined };
 * ```
 */
import type { Message } from '../../protocol/model.js';
import type { CallContext } from '../../tasks/call-context.js';
import type { TurnGrant } from '../../tasks/policy.js';
import type { ExtensionRequest } from './extensions.js';

/**
 * A turn under admission. `text` is set by the content step, `grant` by the in-flight step.
 *
 * @example
 * ```ts
 * service.send(turn.ctx, params, turn.grant);
 * ```
 */
export interface TurnCandidate {
  readonly ctx: CallContext;
  readonly message: Message | undefined;
  /** The extensions the request asks for (`extensionRequestOf`); absent: none (a required one is then missing). */
  readonly extensions?: ExtensionRequest;
  /** Sends the refusal for `error` (an A2AError for bad input, a CapacityError when full). */
  readonly refuseTurn: (error: Error) => void;
  text: string;
  grant: TurnGrant | undefined;
}
