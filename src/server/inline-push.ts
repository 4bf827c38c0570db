/**
 * A push config sent inline with a message (`configuration.pushNotificationConfig`), the same in
 * every binding: judged before the turn starts (a refused webhook refuses the send, starts no
 * task and gives the turn's slot back), stored once the task exists.
 *
 * @example
 * ```ts
 * checkInlinePush(push, inline, grant);
 * const events = registeringPush(await service.stream(ctx, params, grant), (taskId) => push.registerInline(ctx, taskId, inline, '1.0'));
 * ```
 */
import type { PushConfigInput, StreamEvent } from '../protocol/model.js';
import type { PushService } from '../push/service.js';
import type { TurnGrant } from '../tasks/policy.js';

/**
 * Judges an inline push config before the turn; a refusal gives the turn's slot back.
 *
 * @example
 * ```ts
 * checkInlinePush(push, params.configuration.pushConfig, grant); // throws the A2AError of a refused webhook
 * ```
 */
export function checkInlinePush(push: PushService, inline: PushConfigInput, grant: TurnGrant | undefined): void {
  try {
    push.checkInline(inline);
  } catch (error) {
    grant?.release();
    throw error;
  }
}

/**
 * A stream that stores the inline push config once its first event names the task.
 *
 * @example
 * ```ts
 * return registeringPush(events, (taskId) => push.registerInline(ctx, taskId, inline, '1.0'));
 * ```
 */
export async function* registeringPush(
  events: AsyncIterable<StreamEvent>,
  register: (taskId: string) => Promise<unknown>,
): AsyncIterable<StreamEvent> {
  let registered = false;
  for await (const event of events) {
    if (!registered && event.kind === 'task') {
      registered = true;
      await register(event.task.id);
    }
    yield event;
  }
}
