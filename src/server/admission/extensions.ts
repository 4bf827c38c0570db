/**
 * The extensions step of a turn (§3.2.6, §4.6): the extensions a request asks for
 * (`A2A-Extensions`, v0.3's `X-A2A-Extensions`) against those its agent's card declares
 * (`agents[].extensions`). The declared ones asked for are activated and echoed in the response
 * header the request used; one asked for but not declared is ignored; a declared `required`
 * extension not asked for refuses the request with -32008 ExtensionSupportRequiredError (HTTP+JSON:
 * 400 FAILED_PRECONDITION), audited as `a2a.task.rejected` / `extension_required`. An agent that
 * declares none ignores the headers. It is a turn step, so every request of both bindings
 * (JSON-RPC v1.0 and v0.3, HTTP+JSON; messages, reads, cancels alike) passes it, and the refusal
 * comes in the route's own shape (a JSON-RPC error with the call's id, a google.rpc.Status).
 *
 * @example
 * ```ts
 * const turn: TurnCandidate = { ctx, message, extensions: extensionRequestOf(req, res), refuseTurn, text: '', grant: undefined };
 * const admitTurn = compose(createExtensionStep({ config, audit }), content, slot);
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentConfig } from '../../config/schema.js';
import { A2AError } from '../../protocol/errors.js';
import { activateExtensions, parseExtensions, type DeclaredExtension } from '../../protocol/headers.js';
import type { InboundAudit } from '../inbound-audit.js';
import { REFUSED, type Step } from './compose.js';
import type { TurnCandidate } from './turn.js';

/**
 * The extensions one request asks for, and where the activated ones are echoed.
 *
 * @example
 * ```ts
 * const asked: ExtensionRequest = { requested: ['https://a.example/ext/v1'], echoIn: ['a2a-extensions'], res };
 * ```
 */
export interface ExtensionRequest {
  /** The URIs asked for, both header spellings read (`parseExtensions`). */
  readonly requested: readonly string[];
  /** The header names the request used: the echo goes in the same spelling. */
  readonly echoIn: readonly string[];
  /** The response the echo is set on before it is written; absent where there is none. */
  readonly res: ServerResponse | undefined;
}

/**
 * A request that asks for no extension (the common case: no allocation per request).
 *
 * @example
 * ```ts
 * const asked = NO_EXTENSIONS; // a required extension is then missing
 * ```
 */
export const NO_EXTENSIONS: ExtensionRequest = Object.freeze({ requested: [], echoIn: [], res: undefined });

const V10_HEADER = 'a2a-extensions';
const V03_HEADER = 'x-a2a-extensions';

/**
 * What `req` asks for: {@link NO_EXTENSIONS} when it carries neither header.
 *
 * @example
 * ```ts
 * extensionRequestOf(req, res).requested; // ['https://a.example/ext/v1']
 * ```
 */
export function extensionRequestOf(req: IncomingMessage, res: ServerResponse): ExtensionRequest {
  const v10 = req.headers[V10_HEADER];
  const v03 = req.headers[V03_HEADER];
  if (v10 === undefined && v03 === undefined) return NO_EXTENSIONS;
  const echoIn = v10 === undefined ? [V03_HEADER] : v03 === undefined ? [V10_HEADER] : [V10_HEADER, V03_HEADER];
  return { requested: parseExtensions([v10, v03]), echoIn, res };
}

/**
 * The declared extensions of each agent that declares any, by slug.
 *
 * @example
 * ```ts
 * declaredExtensionsBySlug(config.agents).get('echo'); // [{ uri: 'https://…', required: true }]
 * ```
 */
export function declaredExtensionsBySlug(
  agents: readonly Pick<AgentConfig, 'slug' | 'extensions'>[],
): ReadonlyMap<string, readonly DeclaredExtension[]> {
  const out = new Map<string, readonly DeclaredExtension[]>();
  for (const agent of agents) {
    if (agent.extensions === undefined || agent.extensions.length === 0) continue;
    out.set(
      agent.slug,
      agent.extensions.map((extension) => ({ uri: extension.uri, required: extension.required ?? false })),
    );
  }
  return out;
}

/**
 * The step, with the agents' declared extensions of this config (a reload rebuilds it).
 *
 * @example
 * ```ts
 * const extensions = createExtensionStep({ config, audit });
 * ```
 */
export function createExtensionStep<T extends TurnCandidate>(options: {
  config: { readonly agents: readonly Pick<AgentConfig, 'slug' | 'extensions'>[] };
  audit: Pick<InboundAudit, 'rejected'>;
}): Step<T, T> {
  const { audit } = options;
  const declaredBySlug = declaredExtensionsBySlug(options.config.agents);
  return (turn) => {
    const declared = declaredBySlug.get(turn.ctx.agentSlug);
    if (declared === undefined) return turn;
    const asked = turn.extensions ?? NO_EXTENSIONS;
    const outcome = activateExtensions(asked.requested, declared);
    if ('missing' in outcome) {
      audit.rejected(turn.ctx, 'extension_required');
      turn.refuseTurn(
        new A2AError(
          'EXTENSION_SUPPORT_REQUIRED',
          `This agent requires the extension ${outcome.missing}; list it in the A2A-Extensions header`,
        ),
      );
      return REFUSED;
    }
    if (outcome.activated.length > 0 && asked.res !== undefined && !asked.res.headersSent) {
      // Set now, so it goes out with whatever the response turns out to be, a stream included.
      for (const name of asked.echoIn) asked.res.setHeader(name, outcome.activated.join(', '));
    }
    return turn;
  };
}
