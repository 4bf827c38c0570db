/**
 * A push config sent inline with a message (`configuration.pushNotificationConfig`), the same in
 * every binding: judged before the turn starts (a refused webhook refuses the send, starts no
 * task and gives the turn's slot back), stored once the task exists. With push off it is refused
 * (PushNotificationNotSupported, -32003), never dropped: a caller never believes a webhook is set
 * when none is.
 *
 * @example
 * ```ts
 * checkInlinePush(push, inline, grant);
 * const events = registeringPush(await service.stream(ctx, params, grant), (taskId) => push.registerInline(ctx, taskId, inline, '1.0'));
 * ```
 */
import { A2AError } from '../protocol/errors.js';
import type { PushConfigInput, StreamEvent } from '../protocol/model.js';
import type { PushService } from '../push/service.js';
import type { TurnGrant } from '../tasks/policy.js';

/**
 * Judges an inline push config before the turn; a refusal gives the turn's slot back. Returns
 * the push service to store it with once the task exists.
 *
 * @example
 * ```ts
 * const push = checkInlinePush(call.push, params.configuration.pushConfig, grant); // throws when refused or push is off
 * ```
 */
export function checkInlinePush(
  push: PushService | undefined,
  inline: PushConfigInput,
  grant: TurnGrant | undefined,
): PushService {
  try {
    if (push === undefined) {
      throw new A2AError('PUSH_NOTIFICATION_NOT_SUPPORTED', 'Push notifications are not enabled on this gateway');
    }
    push.checkInline(inline);
    return push;
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
