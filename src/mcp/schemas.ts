/**
 * The input schemas of the outbound tools (zod, turned into JSON Schema by the SDK): the
 * `agent` enum holds the registry names only, ids have the strict id shape, and no tool takes
 * a confirm field (confirmation is the operator's setting and the person's answer).
 *
 * @example
 * ```ts
 * sendInputSchema(['travel']).parse({ agent: 'travel', message: 'Trains to Lyon?' });
 * ```
 */
import { z } from 'zod';
import { MAX_MESSAGE_CHARS, STRICT_ID_PATTERN } from '../client/index.js';

/**
 * Builds the `a2a_send` input schema for the given registry names.
 *
 * @example
 * ```ts
 * sendInputSchema(['travel', 'shop']).parse({ agent: 'travel', message: 'hi' });
 * ```
 */
export function sendInputSchema(names: readonly [string, ...string[]]) {
  return z
    .object({
      agent: agentSchema(names),
      message: z
        .string()
        .min(1)
        .max(MAX_MESSAGE_CHARS)
        .describe(`The text to send, 1..${MAX_MESSAGE_CHARS} characters.`),
      task_id: idSchema('Only to answer a task that asked for input: its task_id from the earlier result.').optional(),
      context_id: idSchema('To continue a conversation: the context_id from an earlier result.').optional(),
    })
    .strict();
}

/**
 * Builds the `a2a_get_task` input schema for the given registry names.
 *
 * @example
 * ```ts
 * getTaskInputSchema(['travel']).parse({ agent: 'travel', task_id: 't-1' });
 * ```
 */
export function getTaskInputSchema(names: readonly [string, ...string[]]) {
  return z
    .object({
      agent: agentSchema(names),
      task_id: idSchema('The task_id from an earlier a2a_send result.'),
    })
    .strict();
}

/**
 * The `a2a_list_agents` input schema: no arguments.
 *
 * @example
 * ```ts
 * LIST_AGENTS_INPUT.parse({}); // {}
 * ```
 */
export const LIST_AGENTS_INPUT = z.object({}).strict();

/**
 * Validated `a2a_send` input.
 *
 * @example
 * ```ts
 * const input: SendInput = { agent: 'travel', message: 'Trains to Lyon?' };
 * ```
 */
export type SendInput = z.infer<ReturnType<typeof sendInputSchema>>;

/**
 * Validated `a2a_get_task` input.
 *
 * @example
 * ```ts
 * const input: GetTaskInput = { agent: 'travel', task_id: 't-1' };
 * ```
 */
export type GetTaskInput = z.infer<ReturnType<typeof getTaskInputSchema>>;

function agentSchema(names: readonly [string, ...string[]]) {
  return z.enum(names).describe('A registry name (see a2a_list_agents); never a URL.');
}

function idSchema(description: string) {
  return z.string().regex(STRICT_ID_PATTERN).describe(description);
}
