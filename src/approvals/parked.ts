/**
 * What a parked task waits for, read back from the data part its status message carries
 * (`action_id` for an action, `question_id` for a remote question).
 *
 * @example
 * ```ts
 * const parked = parkedOn(task); // { kind: 'action', id: 'k3…' } or undefined
 * ```
 */
import type { Part, Task } from '../protocol/model.js';

/**
 * A parked task's data part names what it waits for.
 *
 * @example
 * ```ts
 * const on: ParkedOn = { kind: 'question', id: questionId };
 * ```
 */
export type ParkedOn =
  { readonly kind: 'action'; readonly id: string } | { readonly kind: 'question'; readonly id: string };

/**
 * What a parked task waits for, read from its status message's data part.
 *
 * @example
 * ```ts
 * parkedOn(workingTask); // undefined: not interrupted
 * ```
 */
export function parkedOn(task: Task): ParkedOn | undefined {
  const state = task.status.state;
  if (state !== 'input-required' && state !== 'auth-required') return undefined;
  const parts: readonly Part[] = task.status.message?.parts ?? [];
  for (const part of parts) {
    if (part.kind !== 'data' || part.data === null || typeof part.data !== 'object' || Array.isArray(part.data)) {
      continue;
    }
    const data = part.data as Record<string, unknown>;
    if (typeof data.action_id === 'string') return { kind: 'action', id: data.action_id };
    if (typeof data.question_id === 'string') return { kind: 'question', id: data.question_id };
  }
  return undefined;
}
