/**
 * A turn as the executor bridge would build it, for driving a backend directly in tests,
 * and a collector for a whole turn.
 */
import type { AgentBackend, AgentEvent, AgentTurn } from '../../src/agents/backend.js';
import type { Message, Part } from '../../src/protocol/model.js';

export interface FakeTurnInit {
  messageId?: string;
  text?: string;
  parts?: Part[];
  resumed?: boolean;
  signal?: AbortSignal;
}

export function fakeTurn(init: FakeTurnInit = {}): AgentTurn {
  const parts = init.parts ?? [{ kind: 'text', text: init.text ?? 'hello' }];
  const message: Message = { messageId: init.messageId ?? 'm-1', role: 'user', parts };
  return {
    sessionId: 'a2a-test-session',
    taskId: 'task-1',
    contextId: 'ctx-1',
    message,
    task: {
      id: 'task-1',
      contextId: 'ctx-1',
      status: { state: init.resumed === true ? 'input-required' : 'submitted', timestamp: new Date().toISOString() },
      artifacts: [],
      history: [message],
    },
    resumed: init.resumed ?? false,
    signal: init.signal ?? new AbortController().signal,
  };
}

export async function collect(backend: AgentBackend, turn: AgentTurn): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of backend.run(turn)) events.push(event);
  return events;
}
