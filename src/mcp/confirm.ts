/**
 * Per-call confirmation of acting agents through MCP elicitation (autonomy `confirm`): before
 * `a2a_send` calls an acting entry, the person in the host is asked, with a short message
 * naming the agent and the first line of the text, whether to send it.
 *
 * The ask is a multi-round-trip `input_required` result: on 2026-07-28 connections the host
 * answers and retries the call; on 2025-era connections (stdio hosts today) the SDK's shim sends
 * `elicitation/create` and re-enters the handler. Either way the retry must carry the
 * `requestState` this desk minted: a random nonce, kept here, bound to a digest of the exact
 * call (agent, text, ids), usable once and only within the timeout. So an answer cannot be
 * replayed, cannot confirm a different text, and cannot be made up on a first call.
 *
 * @example
 * ```ts
 * const desk = new ConfirmationDesk({ timeoutMs: 60_000, onOutcome: (e) => console.error(e) });
 * const { requestState, elicit } = desk.ask({ agent: 'shop', message: 'Order 5 pens' });
 * // … the host asks the person and retries the call with requestState and the answer:
 * desk.settle({ agent: 'shop', message: 'Order 5 pens' }, requestState, responses); // 'accepted'
 * ```
 */
import { createHash, randomBytes } from 'node:crypto';
import { inputResponse, type ElicitRequestFormParams } from '@modelcontextprotocol/server';
import type { SendInput } from './schemas.js';

/**
 * How long the person has to answer, by default (ms). After it the call is refused.
 *
 * @example
 * ```ts
 * new ConfirmationDesk({ timeoutMs: DEFAULT_CONFIRM_TIMEOUT_MS });
 * ```
 */
export const DEFAULT_CONFIRM_TIMEOUT_MS = 120_000;

/**
 * The key of the confirmation in `inputRequests` / `inputResponses`.
 *
 * @example
 * ```ts
 * inputResponse(ctx.mcpReq.inputResponses, CONFIRM_INPUT_KEY);
 * ```
 */
export const CONFIRM_INPUT_KEY = 'airlock_confirm';

/** Most code points of the text's first line shown to the person. */
const MAX_SHOWN_CHARS = 160;

/**
 * How a confirmation ended: `accepted` (the call goes out); `declined` or `cancelled` by the
 * person; `timeout` (no answer in time); `unsupported` (the host cannot ask: no form
 * elicitation); `stale` (a retry whose request state is unknown, used, expired, or minted for
 * a different call).
 *
 * @example
 * ```ts
 * const outcome: ConfirmOutcome = desk.settle(input, state, responses);
 * ```
 */
export type ConfirmOutcome = 'accepted' | 'declined' | 'cancelled' | 'timeout' | 'unsupported' | 'stale';

/**
 * One confirmation outcome, for the log: the registry name and the outcome; never the text.
 *
 * @example
 * ```ts
 * const onOutcome = (event: ConfirmEvent) => log('mcp.confirm', { ...event });
 * ```
 */
export interface ConfirmEvent {
  agent: string;
  outcome: ConfirmOutcome;
}

/**
 * What the desk needs: the answer timeout, where outcomes go, and what to do with a call whose
 * answer never came (the server refuses it through the client, so the refusal is audited).
 *
 * @example
 * ```ts
 * const options: ConfirmationDeskOptions = { timeoutMs: 60_000, onOutcome: () => undefined, onTimeout: () => undefined };
 * ```
 */
export interface ConfirmationDeskOptions {
  timeoutMs?: number;
  onOutcome?: (event: ConfirmEvent) => void;
  onTimeout?: (input: SendInput) => void;
}

interface Pending {
  digest: string;
  timer: NodeJS.Timeout;
}

/**
 * The pending confirmations of one server process (shared by every MCP connection it serves).
 *
 * @example
 * ```ts
 * const desk = new ConfirmationDesk({ timeoutMs: 30_000 });
 * const { requestState } = desk.ask(input);
 * ```
 */
export class ConfirmationDesk {
  readonly timeoutMs: number;
  readonly #onOutcome: (event: ConfirmEvent) => void;
  readonly #onTimeout: (input: SendInput) => void;
  readonly #pending = new Map<string, Pending>();

  constructor(options: ConfirmationDeskOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0) throw new RangeError('timeoutMs must be positive');
    this.#onOutcome = options.onOutcome ?? (() => undefined);
    this.#onTimeout = options.onTimeout ?? (() => undefined);
  }

  /**
   * Starts a confirmation: the elicitation to send and the request state the retry must echo.
   *
   * @example
   * ```ts
   * return inputRequired({ inputRequests: { [CONFIRM_INPUT_KEY]: inputRequired.elicit(elicit) }, requestState });
   * ```
   */
  ask(input: SendInput): { requestState: string; elicit: ElicitRequestFormParams } {
    const requestState = randomBytes(18).toString('base64url');
    const timer = setTimeout(() => {
      if (!this.#pending.delete(requestState)) return;
      this.#onOutcome({ agent: input.agent, outcome: 'timeout' });
      this.#onTimeout(input);
    }, this.timeoutMs);
    timer.unref();
    this.#pending.set(requestState, { digest: callDigest(input), timer });
    return {
      requestState,
      elicit: {
        mode: 'form',
        message: confirmationMessage(input),
        requestedSchema: {
          type: 'object',
          properties: {
            confirm: {
              type: 'boolean',
              title: `Send to ${input.agent}`,
              description: 'Yes sends this message now; no sends nothing.',
              default: false,
            },
          },
          required: ['confirm'],
        },
      },
    };
  }

  /**
   * Settles a retried call: `accepted` only for a pending state of this exact call, answered
   * accept with `confirm: true`. Reports the outcome (a `timeout` was reported when it fired).
   *
   * @example
   * ```ts
   * if (desk.settle(input, ctx.mcpReq.requestState(), ctx.mcpReq.inputResponses) === 'accepted') await send();
   * ```
   */
  settle(input: SendInput, requestState: unknown, responses: Record<string, unknown> | undefined): ConfirmOutcome {
    const outcome = this.#decide(input, requestState, responses);
    this.report(input.agent, outcome);
    return outcome;
  }

  /**
   * Reports an outcome decided elsewhere (`unsupported`).
   *
   * @example
   * ```ts
   * desk.report('shop', 'unsupported');
   * ```
   */
  report(agent: string, outcome: ConfirmOutcome): void {
    this.#onOutcome({ agent, outcome });
  }

  /**
   * Forgets every pending confirmation (their retries will be `stale`).
   *
   * @example
   * ```ts
   * desk.close();
   * ```
   */
  close(): void {
    for (const pending of this.#pending.values()) clearTimeout(pending.timer);
    this.#pending.clear();
  }

  #decide(input: SendInput, requestState: unknown, responses: Record<string, unknown> | undefined): ConfirmOutcome {
    if (typeof requestState !== 'string') return 'stale';
    const pending = this.#pending.get(requestState);
    if (pending === undefined) return 'stale';
    // Used once, whatever the answer.
    this.#pending.delete(requestState);
    clearTimeout(pending.timer);
    if (pending.digest !== callDigest(input)) return 'stale';
    const answer = inputResponse(responses, CONFIRM_INPUT_KEY);
    if (answer.kind !== 'elicit') return 'cancelled';
    if (answer.action === 'cancel') return 'cancelled';
    return answer.action === 'accept' && answer.content?.confirm === true ? 'accepted' : 'declined';
  }
}

/**
 * Whether a host's declared capabilities include form elicitation (a bare `elicitation: {}`
 * counts, as the spec says for hosts older than elicitation modes).
 *
 * @example
 * ```ts
 * supportsFormElicitation({ elicitation: {} });            // true
 * supportsFormElicitation({ elicitation: { url: {} } });   // false
 * supportsFormElicitation(undefined);                      // false
 * ```
 */
export function supportsFormElicitation(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const elicitation = (capabilities as { elicitation?: unknown }).elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  const modes = elicitation as { form?: unknown; url?: unknown };
  return modes.form !== undefined || modes.url === undefined;
}

/**
 * The question the person sees: the agent's registry name, that it acts, the first line of
 * the text (one line, no control, format or invisible characters, cut), and how long the
 * whole text is, so a harmless first line cannot hide what follows.
 *
 * @example
 * ```ts
 * confirmationMessage({ agent: 'shop', message: 'Order 5 pens\nthen 3 pads' });
 * // 'Send this message to the acting agent "shop"? It does things on your behalf.\n"Order 5 pens" (2 lines, 22 characters in all)'
 * ```
 */
export function confirmationMessage(input: SendInput): string {
  const lines = input.message.split(/\r\n|\r|\n|\u2028|\u2029/u);
  const first = scrubLine(lines[0] ?? '');
  const shown = [...first].length > MAX_SHOWN_CHARS ? `${[...first].slice(0, MAX_SHOWN_CHARS).join('')}…` : first;
  const size = `${lines.length} line${lines.length === 1 ? '' : 's'}, ${input.message.length} characters in all`;
  const task = input.task_id === undefined ? '' : ` It answers task ${input.task_id}.`;
  return (
    `Send this message to the acting agent "${input.agent}"? It does things on your behalf.${task}\n` +
    `"${shown}" (${size})`
  );
}

/** One line as a person should see it: controls, format (bidi, zero-width) and separators become spaces or go. */
function scrubLine(line: string): string {
  return line
    .replace(/[\p{Cf}\p{Co}\p{Cn}]/gu, '')
    .replace(/[\p{Cc}\p{Z}]+/gu, ' ')
    .trim();
}

/** SHA-256 over the call's fields, so a confirmation holds for exactly one text and task. */
function callDigest(input: SendInput): string {
  const fields = [input.agent, input.message, input.task_id ?? '', input.context_id ?? ''];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}
