/**
 * The HTTP+JSON binding's dispatch: a canonical request, once admitted, to the task service and
 * back as the binding's outcome. The same service calls as the JSON-RPC dispatcher (`rpc.ts`);
 * only the rendering differs.
 *
 * @example
 * ```ts
 * const outcome = await runHttpJson(request, call, grant);
 * if (outcome.kind === 'json') res.end(outcome.body);
 * ```
 */
import { A2AError } from '../../../protocol/errors.js';
import { HTTP_JSON_RESULTS } from '../../../protocol/http-json/index.js';
import type { A2ARequest, PushConfigInput, SendParams, StreamEvent } from '../../../protocol/model.js';
import type { PushService } from '../../../push/service.js';
import { CapacityError, type TurnGrant } from '../../../tasks/policy.js';
import { isStoreUnavailable } from '../../../tasks/stores/errors.js';
import { checkInlinePush, registeringPush } from '../../inline-push.js';
import { STORE_UNAVAILABLE_MESSAGE, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS, type RpcCall } from '../../rpc.js';

/**
 * What the route sends: a JSON body (200), an A2A error (its mapped status), a 503 with
 * Retry-After, or an SSE stream of StreamResponses.
 *
 * @example
 * ```ts
 * const outcome: HttpJsonOutcome = { kind: 'error', error: new A2AError('TASK_NOT_FOUND') };
 * ```
 */
export type HttpJsonOutcome =
  | { kind: 'json'; body: string }
  | { kind: 'error'; error: A2AError }
  | { kind: 'unavailable'; message: string; retryAfterSeconds: number }
  | { kind: 'stream'; events: AsyncIterable<StreamEvent> };

/**
 * The outcome of a failure: over capacity and an unreachable store are 503s with Retry-After;
 * an unexpected error goes to `onError` and is answered as an internal error.
 *
 * @example
 * ```ts
 * httpJsonFailure(new CapacityError(2), onError); // { kind: 'unavailable', …, retryAfterSeconds: 2 }
 * ```
 */
export function httpJsonFailure(error: unknown, onError: (error: unknown) => void): HttpJsonOutcome {
  if (error instanceof CapacityError) {
    return { kind: 'unavailable', message: error.message, retryAfterSeconds: error.retryAfterSeconds };
  }
  if (isStoreUnavailable(error)) {
    return {
      kind: 'unavailable',
      message: STORE_UNAVAILABLE_MESSAGE,
      retryAfterSeconds: STORE_UNAVAILABLE_RETRY_AFTER_SECONDS,
    };
  }
  if (error instanceof A2AError) return { kind: 'error', error };
  onError(error);
  return { kind: 'error', error: new A2AError('INTERNAL') };
}

/**
 * Runs a decoded request on the service (with the grant admission gave a turn). Never throws.
 *
 * @example
 * ```ts
 * const outcome = await runHttpJson({ method: 'get', params: { id } }, call, undefined);
 * ```
 */
export async function runHttpJson(
  request: A2ARequest,
  call: RpcCall,
  grant: TurnGrant | undefined,
): Promise<HttpJsonOutcome> {
  try {
    return await run(request, call, grant);
  } catch (error) {
    return httpJsonFailure(error, call.onError);
  }
}

async function run(request: A2ARequest, call: RpcCall, grant: TurnGrant | undefined): Promise<HttpJsonOutcome> {
  const { service, context, push } = call;
  switch (request.method) {
    case 'send': {
      const inline = request.params.configuration.pushConfig;
      if (inline !== undefined) return sendWithPush(request.params, inline, call, grant);
      return json(HTTP_JSON_RESULTS.sendResult(await service.send(context, request.params, grant)));
    }
    case 'stream': {
      const inline = request.params.configuration.pushConfig;
      if (inline === undefined) return { kind: 'stream', events: await service.stream(context, request.params, grant) };
      const checked = checkInlinePushOn(push, inline, grant);
      const events = await service.stream(context, request.params, grant);
      return {
        kind: 'stream',
        events: registeringPush(events, (taskId) => checked.registerInline(context, taskId, inline, '1.0')),
      };
    }
    case 'get':
      return json(HTTP_JSON_RESULTS.task(await service.get(context, request.params.id, request.params.historyLength)));
    case 'list':
      return json(HTTP_JSON_RESULTS.list(await service.list(context, request.params)));
    case 'cancel':
      return json(HTTP_JSON_RESULTS.task(await service.cancel(context, request.params.id)));
    case 'subscribe':
      return { kind: 'stream', events: await service.subscribe(context, request.params.id) };
    case 'push-config':
      // As over JSON-RPC: with push off every push route is -32003 (400 FAILED_PRECONDITION).
      if (push === undefined) throw new A2AError('PUSH_NOTIFICATION_NOT_SUPPORTED');
      return json(HTTP_JSON_RESULTS.pushResult(await push.handle(context, request.params, '1.0')));
    case 'extended-card': {
      const card = call.extendedCard('1.0');
      if (card === undefined) throw new A2AError('EXTENDED_AGENT_CARD_NOT_CONFIGURED');
      return json(card);
    }
  }
}

/**
 * A send with an inline push config, as over JSON-RPC (`rpc.ts`): judged before the turn starts
 * (a refused webhook refuses the send and starts no task), stored once the task exists.
 */
async function sendWithPush(
  params: SendParams,
  inline: PushConfigInput,
  call: RpcCall,
  grant: TurnGrant | undefined,
): Promise<HttpJsonOutcome> {
  const push = checkInlinePushOn(call.push, inline, grant);
  const result = await call.service.send(call.context, params, grant);
  if (result.kind === 'task') await push.registerInline(call.context, result.task.id, inline, '1.0');
  return json(HTTP_JSON_RESULTS.sendResult(result));
}

/**
 * Judges an inline push config before the turn; a refusal gives the turn's slot back. With push
 * off the config is refused (PushNotificationNotSupported) rather than silently dropped: a
 * caller of this binding never believes a webhook is set when none is.
 */
function checkInlinePushOn(
  push: PushService | undefined,
  inline: PushConfigInput,
  grant: TurnGrant | undefined,
): PushService {
  if (push === undefined) {
    grant?.release();
    throw new A2AError('PUSH_NOTIFICATION_NOT_SUPPORTED', 'Push notifications are not enabled on this gateway');
  }
  checkInlinePush(push, inline, grant);
  return push;
}

function json(body: string): HttpJsonOutcome {
  return { kind: 'json', body };
}
