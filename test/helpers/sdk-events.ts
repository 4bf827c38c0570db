/**
 * The events a test agent on the official `@a2a-js/sdk` server publishes, built in one place:
 * the SDK's v1.0 types want every field spelled out (metadata, extensions, descriptions), which
 * made each test agent repeat the same literals.
 *
 * @example
 * ```ts
 * bus.publish(openingTask(context));
 * bus.publish(replyChunk(taskId, contextId, { text: 'echo: hi' }));
 * bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_COMPLETED));
 * ```
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent, type RequestContext } from '@a2a-js/sdk/server';

/** A text part (media type text/plain). */
export function textPart(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** The text of a message's text parts, joined. */
export function textOf(parts: readonly Part[]): string {
  let text = '';
  for (const part of parts) if (part.content?.$case === 'text') text += part.content.value;
  return text;
}

/** A message from the agent, with one text part. */
export function agentMessage(text: string, contextId: string, taskId: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/**
 * The task event a turn opens with: the stored task when the turn resumes one, else a new
 * submitted task with the caller's message as its history.
 */
export function openingTask(context: RequestContext): AgentExecutionEvent {
  const { taskId, contextId, userMessage } = context;
  return AgentEvent.task(
    context.task ?? {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [userMessage],
      metadata: undefined,
    },
  );
}

/** A status update, with an agent message when `text` is given. */
export function statusEvent(taskId: string, contextId: string, state: TaskState, text?: string): AgentExecutionEvent {
  return AgentEvent.statusUpdate({
    taskId,
    contextId,
    metadata: undefined,
    status: {
      state,
      timestamp: new Date().toISOString(),
      message: text === undefined ? undefined : agentMessage(text, contextId, taskId),
    },
  });
}

/**
 * One chunk of the `reply` artifact: the whole reply by default (a new artifact id, last chunk);
 * pass the same `artifactId` and `append`/`last` to stream it in pieces.
 */
export function replyChunk(
  taskId: string,
  contextId: string,
  chunk: { text?: string; parts?: Part[]; artifactId?: string; append?: boolean; last?: boolean },
): AgentExecutionEvent {
  return AgentEvent.artifactUpdate({
    taskId,
    contextId,
    append: chunk.append ?? false,
    lastChunk: chunk.last ?? true,
    metadata: undefined,
    artifact: {
      artifactId: chunk.artifactId ?? randomUUID(),
      name: 'reply',
      description: '',
      parts: chunk.parts ?? [textPart(chunk.text ?? '')],
      metadata: undefined,
      extensions: [],
    },
  });
}
