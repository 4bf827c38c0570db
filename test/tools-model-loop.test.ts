/**
 * The openai backend's tool loop against a real loopback server that speaks OpenAI chat
 * completions (test/helpers/scripted-model.ts) and scripts the model's tool calls: several calls
 * per turn, parallel calls, malformed arguments, a call to a tool not offered, an endless loop,
 * budgets, parking on the person and resuming after approval or denial, cancellation, and that
 * nothing of the loop reaches the caller but the final reply.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { collect, fakeTurn } from './helpers/agent-turn.js';
import { startScriptedModel, type ScriptedAnswer, type ScriptedModel } from './helpers/scripted-model.js';
import type { AgentEvent, AgentTurn, ApprovedAction, DeniedAction } from '../src/agents/backend.js';
import { buildInboundPrompt } from '../src/agents/inbound/prompt.js';
import type { OpenAiBackendConfig } from '../src/agents/openai/schema.js';
import {
  ARGUMENTS_NOT_JSON,
  CONTINUATION_KIND,
  createOpenAiBackend,
  USING_TOOLS_NOTE,
  type ToolLoopContinuation,
} from '../src/agents/openai/index.js';
import type { ToolCallOutcome, ToolLevel, ToolOffer, TurnToolbox } from '../src/agents/tools.js';

const FRAMED = (text: string): string => `<untrusted tool result>${text}</untrusted tool result>`;

interface TestTool {
  readonly level: ToolLevel;
  /** What the tool answers for these arguments (default: a framed echo of them). */
  readonly run?: (args: unknown, signal: AbortSignal) => ToolCallOutcome | Promise<ToolCallOutcome>;
  /** An acting tool: `call` parks it. */
  readonly parks?: boolean;
}

/** A small TurnToolbox: offers its tools, refuses others, counts calls against a budget, parks acting ones. */
class TestToolbox implements TurnToolbox {
  readonly offers: ToolOffer[];
  readonly calls: Array<{ name: string; args: unknown }> = [];
  readonly approvedRuns: Array<{ actionId: string; tool: string; args: unknown }> = [];
  readonly #tools: Record<string, TestTool>;
  readonly #maxCalls: number;
  readonly #used = new Set<string>();

  constructor(tools: Record<string, TestTool>, options: { maxCalls?: number } = {}) {
    this.#tools = tools;
    this.#maxCalls = options.maxCalls ?? 100;
    this.offers = Object.entries(tools).map(([name, tool]) => ({
      name,
      description: `The ${name} tool.`,
      inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
      level: tool.level,
    }));
  }

  async call(name: string, args: unknown, signal: AbortSignal): Promise<ToolCallOutcome> {
    this.calls.push({ name, args });
    const tool = this.#tools[name];
    if (tool === undefined) return { kind: 'refused', reason: `the tool "${name}" is not offered to this agent` };
    if (this.calls.length > this.#maxCalls) {
      return { kind: 'over_budget', reason: `the turn used its ${this.#maxCalls} tool calls` };
    }
    if (tool.parks === true) return { kind: 'park', action: { tool: name, args, level: tool.level } };
    return this.#run(tool, args, signal);
  }

  async runApproved(
    action: { readonly actionId: string; readonly tool: string; readonly args: unknown },
    signal: AbortSignal,
  ): Promise<ToolCallOutcome> {
    this.approvedRuns.push({ actionId: action.actionId, tool: action.tool, args: action.args });
    if (this.#used.has(action.actionId)) return { kind: 'refused', reason: 'this action already ran' };
    this.#used.add(action.actionId);
    const tool = this.#tools[action.tool];
    if (tool === undefined) return { kind: 'refused', reason: 'no such tool' };
    return this.#run(tool, action.args, signal);
  }

  #run(tool: TestTool, args: unknown, signal: AbortSignal): ToolCallOutcome | Promise<ToolCallOutcome> {
    if (tool.run !== undefined) return tool.run(args, signal);
    return { kind: 'result', text: FRAMED(`ran with ${JSON.stringify(args)}`), isError: false };
  }
}

function config(baseUrl: string, overrides: Partial<OpenAiBackendConfig> = {}): OpenAiBackendConfig {
  return {
    type: 'openai',
    baseUrl,
    model: 'test-model',
    history: { maxTurns: 10, maxChars: 16_000 },
    timeouts: { connectMs: 2_000, firstTokenMs: 5_000, totalMs: 10_000 },
    maxResponseBytes: 4 * 1024 * 1024,
    ...overrides,
  };
}

function toolTurn(
  text: string,
  tools: TurnToolbox | undefined,
  extra: Partial<Pick<AgentTurn, 'approvedAction' | 'deniedAction' | 'history'>> & { signal?: AbortSignal } = {},
): AgentTurn {
  const { signal, ...rest } = extra;
  const base = fakeTurn({ text, ...(signal !== undefined && { signal }) });
  const prompt = buildInboundPrompt(text);
  return {
    ...base,
    prompt: { system: prompt.system, user: prompt.user },
    ...(tools !== undefined && { tools }),
    ...rest,
  };
}

async function withModel<T>(
  script: readonly ScriptedAnswer[] | ((request: unknown, n: number) => ScriptedAnswer),
  body: (model: ScriptedModel) => Promise<T>,
): Promise<T> {
  const model = await startScriptedModel(script);
  try {
    return await body(model);
  } finally {
    await model.close();
  }
}

async function runTurn(model: ScriptedModel, turn: AgentTurn, overrides: Partial<OpenAiBackendConfig> = {}) {
  const backend = createOpenAiBackend(config(model.baseUrl, overrides));
  try {
    return await collect(backend, turn);
  } finally {
    await backend.close?.();
  }
}

function replyOf(events: readonly AgentEvent[]): string {
  return events
    .filter((event): event is Extract<AgentEvent, { type: 'text' }> => event.type === 'text')
    .map((event) => event.text)
    .join('');
}

function failureOf(events: readonly AgentEvent[]): string {
  const last = events.at(-1);
  assert.equal(last?.type, 'failed', `expected failed, got ${JSON.stringify(events)}`);
  return (last as { reason: string }).reason;
}

function proposalOf(events: readonly AgentEvent[]): Extract<AgentEvent, { type: 'propose-action' }> {
  const last = events.at(-1);
  assert.equal(last?.type, 'propose-action', `expected propose-action, got ${JSON.stringify(events)}`);
  return last;
}

/** What the gateway would hand back: the continuation after a trip through JSON storage. */
function stored(continuation: unknown): unknown {
  return JSON.parse(JSON.stringify(continuation)) as unknown;
}

const TWO_TOOLS = (): TestToolbox =>
  new TestToolbox({ fs_read: { level: 'L1' }, fs_list: { level: 'L1' }, fs_write: { level: 'L4', parks: true } });

describe('openai tool loop: offering and running tools', () => {
  it('offers exactly the toolbox offers as functions, and nothing else', async () => {
    await withModel([{ text: 'no tools needed' }], async (model) => {
      const toolbox = TWO_TOOLS();
      const events = await runTurn(model, toolTurn('hi', toolbox));
      assert.equal(events.at(-1)?.type, 'completed');
      const body = model.requests[0]!.body;
      assert.deepEqual(
        body.tools,
        toolbox.offers.map((offer) => ({
          type: 'function',
          function: { name: offer.name, description: offer.description, parameters: offer.inputSchema },
        })),
      );
      assert.equal(body.tool_choice, undefined);
      assert.equal(body.functions, undefined);
      assert.equal(replyOf(events), 'no tools needed');
    });
  });

  it('sends no tools field without a toolbox or with an empty one, and streams as before', async () => {
    await withModel([{ text: ['a', 'b'] }, { text: ['c'] }], async (model) => {
      const none = await runTurn(model, toolTurn('hi', undefined));
      const empty = await runTurn(model, toolTurn('hi', new TestToolbox({})));
      assert.equal('tools' in model.requests[0]!.body, false);
      assert.equal('tools' in model.requests[1]!.body, false);
      assert.deepEqual(none, [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
        { type: 'text', text: '', last: true },
        { type: 'completed' },
      ]);
      assert.deepEqual(empty.at(-1), { type: 'completed' });
    });
  });

  it('runs several tool calls over several rounds, then streams the final reply alone', async () => {
    const script: ScriptedAnswer[] = [
      { toolCalls: [{ id: 'call_a', name: 'fs_list', arguments: { path: '/' } }] },
      { toolCalls: [{ id: 'call_b', name: 'fs_read', arguments: { path: '/notes.txt' } }] },
      { text: ['The notes ', 'are short.'] },
    ];
    await withModel(script, async (model) => {
      const toolbox = TWO_TOOLS();
      const events = await runTurn(model, toolTurn('what do my notes say?', toolbox));
      assert.deepEqual(toolbox.calls, [
        { name: 'fs_list', args: { path: '/' } },
        { name: 'fs_read', args: { path: '/notes.txt' } },
      ]);
      assert.equal(model.requests.length, 3);
      assert.deepEqual(events, [
        { type: 'working', text: USING_TOOLS_NOTE },
        { type: 'text', text: 'The notes are short.' },
        { type: 'text', text: '', last: true },
        { type: 'completed' },
      ]);
      const third = model.requests[2]!.body.messages;
      assert.deepEqual(
        third.map((message: { role: string }) => message.role),
        ['system', 'user', 'assistant', 'tool', 'assistant', 'tool'],
      );
      assert.deepEqual(third[2], {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'fs_list', arguments: '{"path":"/"}' } }],
      });
      // The toolbox's text goes back exactly as it came: framed, never unwrapped.
      assert.deepEqual(third[3], { role: 'tool', tool_call_id: 'call_a', content: FRAMED('ran with {"path":"/"}') });
      assert.deepEqual(third[5], {
        role: 'tool',
        tool_call_id: 'call_b',
        content: FRAMED('ran with {"path":"/notes.txt"}'),
      });
      // Every request offers the tools again.
      for (const request of model.requests) assert.equal(request.body.tools.length, 3);
    });
  });

  it('runs parallel calls of one answer in order, their arguments streamed interleaved', async () => {
    const script: ScriptedAnswer[] = [
      {
        interleave: true,
        toolCalls: [
          { id: 'call_1', name: 'fs_read', arguments: { path: '/first/file/with/a/long/name.txt' } },
          { id: 'call_2', name: 'fs_list', arguments: { path: '/second/directory' } },
          { id: 'call_3', name: 'fs_read', arguments: { path: '/third.txt' } },
        ],
      },
      { text: 'done' },
    ];
    await withModel(script, async (model) => {
      const toolbox = TWO_TOOLS();
      const events = await runTurn(model, toolTurn('read them', toolbox));
      assert.equal(replyOf(events), 'done');
      assert.deepEqual(toolbox.calls, [
        { name: 'fs_read', args: { path: '/first/file/with/a/long/name.txt' } },
        { name: 'fs_list', args: { path: '/second/directory' } },
        { name: 'fs_read', args: { path: '/third.txt' } },
      ]);
      const messages = model.requests[1]!.body.messages;
      assert.equal(messages[2].tool_calls.length, 3);
      assert.deepEqual(
        messages
          .slice(3)
          .map((message: { role: string; tool_call_id: string }) => [message.role, message.tool_call_id]),
        [
          ['tool', 'call_1'],
          ['tool', 'call_2'],
          ['tool', 'call_3'],
        ],
      );
    });
  });

  it('reads tool calls from a whole JSON answer too, and makes up ids the server left out', async () => {
    const script: ScriptedAnswer[] = [
      {
        json: true,
        toolCalls: [
          { id: null, name: 'fs_read', arguments: { path: 'a' } },
          { id: null, name: 'fs_read', arguments: { path: 'b' } },
        ],
      },
      { text: 'ok' },
    ];
    await withModel(script, async (model) => {
      const toolbox = TWO_TOOLS();
      const events = await runTurn(model, toolTurn('x', toolbox));
      assert.equal(replyOf(events), 'ok');
      assert.equal(toolbox.calls.length, 2);
      const messages = model.requests[1]!.body.messages;
      const ids = messages[2].tool_calls.map((call: { id: string }) => call.id);
      assert.equal(new Set(ids).size, 2);
      assert.deepEqual(
        messages.slice(3).map((message: { tool_call_id: string }) => message.tool_call_id),
        ids,
      );
    });
  });

  it('answers a call with malformed JSON arguments without running it, and runs the others', async () => {
    const script: ScriptedAnswer[] = [
      {
        toolCalls: [
          { id: 'bad', name: 'fs_read', arguments: '{"path": "/a.txt"' },
          { id: 'good', name: 'fs_list', arguments: { path: '/' } },
        ],
      },
      { text: 'fixed' },
    ];
    await withModel(script, async (model) => {
      const toolbox = TWO_TOOLS();
      const events = await runTurn(model, toolTurn('x', toolbox));
      assert.equal(replyOf(events), 'fixed');
      assert.deepEqual(toolbox.calls, [{ name: 'fs_list', args: { path: '/' } }]);
      const messages = model.requests[1]!.body.messages;
      assert.deepEqual(messages[3], { role: 'tool', tool_call_id: 'bad', content: ARGUMENTS_NOT_JSON });
      assert.equal(messages[4].tool_call_id, 'good');
    });
  });

  it('a call to a tool not offered is refused by the toolbox, and the model is told why', async () => {
    const script: ScriptedAnswer[] = [
      { toolCalls: [{ id: 'x1', name: 'shell_exec', arguments: { cmd: 'rm -rf /' } }] },
      { text: 'I cannot do that.' },
    ];
    await withModel(script, async (model) => {
      const toolbox = TWO_TOOLS();
      const events = await runTurn(model, toolTurn('x', toolbox));
      assert.equal(replyOf(events), 'I cannot do that.');
      assert.deepEqual(toolbox.calls, [{ name: 'shell_exec', args: { cmd: 'rm -rf /' } }]);
      assert.deepEqual(model.requests[1]!.body.messages.at(-1), {
        role: 'tool',
        tool_call_id: 'x1',
        content: 'the tool "shell_exec" is not offered to this agent',
      });
      assert.ok(!model.requests.some((request) => JSON.stringify(request.body.tools).includes('shell_exec')));
    });
  });

  it('keeps the text a model writes beside its tool calls out of the reply', async () => {
    const script: ScriptedAnswer[] = [
      { text: 'Let me look at the secret file first.', toolCalls: [{ id: 'c', name: 'fs_read', arguments: {} }] },
      { text: 'All good.' },
    ];
    await withModel(script, async (model) => {
      const events = await runTurn(model, toolTurn('x', TWO_TOOLS()));
      assert.equal(replyOf(events), 'All good.');
      assert.equal(model.requests[1]!.body.messages[2].content, 'Let me look at the secret file first.');
    });
  });

  it('no tool output reaches the caller unless the final text repeats it', async () => {
    const secretish = 'TOOL-OUTPUT-7f3a';
    const toolbox = (): TestToolbox =>
      new TestToolbox({
        fs_read: { level: 'L1', run: () => ({ kind: 'result', text: FRAMED(secretish), isError: false }) },
      });
    const calls: ScriptedAnswer = { toolCalls: [{ name: 'fs_read', arguments: { path: '/x' } }] };
    await withModel([calls, { text: 'Read it.' }, calls, { text: `It says ${secretish}.` }], async (model) => {
      const quiet = await runTurn(model, toolTurn('x', toolbox()));
      assert.equal(replyOf(quiet), 'Read it.');
      const serialized = JSON.stringify(quiet);
      assert.ok(!serialized.includes(secretish));
      assert.ok(!serialized.includes('fs_read'));
      assert.ok(!serialized.includes('/x'));
      const repeated = await runTurn(model, toolTurn('x', toolbox()));
      assert.equal(replyOf(repeated), `It says ${secretish}.`);
      for (const event of repeated) {
        if (event.type !== 'text') assert.ok(!JSON.stringify(event).includes(secretish));
      }
    });
  });
});

describe('openai tool loop: budgets', () => {
  it('fails a model that never stops calling tools after maxToolRounds answers', async () => {
    await withModel(
      () => ({ toolCalls: [{ name: 'fs_read', arguments: { path: '/loop' } }] }),
      async (model) => {
        const toolbox = TWO_TOOLS();
        const events = await runTurn(model, toolTurn('x', toolbox), { maxToolRounds: 3 });
        assert.match(failureOf(events), /more than 3 answers of one turn \(maxToolRounds\)/);
        assert.equal(model.requests.length, 4);
        assert.equal(toolbox.calls.length, 3);
      },
    );
  });

  it('uses 8 rounds when maxToolRounds is not set', async () => {
    await withModel(
      () => ({ toolCalls: [{ name: 'fs_read', arguments: {} }] }),
      async (model) => {
        const events = await runTurn(model, toolTurn('x', TWO_TOOLS()));
        assert.match(failureOf(events), /more than 8 answers/);
        assert.equal(model.requests.length, 9);
      },
    );
  });

  it('ends the turn at once when the toolbox says over_budget', async () => {
    const script: ScriptedAnswer[] = [
      {
        toolCalls: [
          { name: 'fs_read', arguments: { path: 'a' } },
          { name: 'fs_read', arguments: { path: 'b' } },
          { name: 'fs_read', arguments: { path: 'c' } },
        ],
      },
      { text: 'never asked' },
    ];
    await withModel(script, async (model) => {
      const toolbox = new TestToolbox({ fs_read: { level: 'L1' } }, { maxCalls: 2 });
      const events = await runTurn(model, toolTurn('x', toolbox));
      assert.equal(failureOf(events), 'the turn used its 2 tool calls');
      assert.equal(model.requests.length, 1);
      assert.equal(toolbox.calls.length, 3);
    });
  });

  it('counts tool calls against the turn total timeout, and stops waiting for a tool that hangs', async () => {
    await withModel([{ toolCalls: [{ name: 'slow', arguments: {} }] }], async (model) => {
      const toolbox = new TestToolbox({ slow: { level: 'L1', run: () => new Promise<never>(() => {}) } });
      const started = Date.now();
      const events = await runTurn(model, toolTurn('x', toolbox), {
        timeouts: { connectMs: 1_000, firstTokenMs: 1_000, totalMs: 400 },
      });
      assert.match(failureOf(events), /did not finish within/);
      assert.ok(Date.now() - started < 3_000);
    });
  });

  it('fails an answer with more tool calls than it takes', async () => {
    const many = Array.from({ length: 65 }, (_, i) => ({ name: 'fs_read', arguments: { i } }));
    await withModel([{ toolCalls: many }], async (model) => {
      const toolbox = TWO_TOOLS();
      const events = await runTurn(model, toolTurn('x', toolbox));
      assert.match(failureOf(events), /more than 64 tool calls in one answer/);
      assert.equal(toolbox.calls.length, 0);
    });
  });
});

describe('openai tool loop: parking on the person and resuming', () => {
  const parkingScript = (): ScriptedAnswer[] => [
    {
      toolCalls: [
        { id: 'c_read', name: 'fs_read', arguments: { path: '/todo.md' } },
        { id: 'c_write', name: 'fs_write', arguments: { path: '/todo.md', text: 'done' } },
        { id: 'c_list', name: 'fs_list', arguments: { path: '/' } },
      ],
    },
  ];

  async function parkOnce(): Promise<{
    proposal: Extract<AgentEvent, { type: 'propose-action' }>;
    toolbox: TestToolbox;
  }> {
    return withModel(parkingScript(), async (model) => {
      const toolbox = TWO_TOOLS();
      const events = await runTurn(model, toolTurn('mark it done', toolbox));
      return { proposal: proposalOf(events), toolbox };
    });
  }

  it('ends the turn with propose-action and a JSON continuation; later calls of the answer wait', async () => {
    const { proposal, toolbox } = await parkOnce();
    assert.deepEqual(proposal.action, { tool: 'fs_write', args: { path: '/todo.md', text: 'done' }, level: 'L4' });
    assert.deepEqual(
      toolbox.calls.map((call) => call.name),
      ['fs_read', 'fs_write'],
    );
    const continuation = proposal.continuation as ToolLoopContinuation;
    assert.deepEqual(stored(continuation), continuation);
    assert.equal(continuation.kind, CONTINUATION_KIND);
    assert.equal(continuation.pending, 'c_write');
    assert.deepEqual(continuation.remaining, ['c_list']);
    assert.deepEqual(
      continuation.messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'tool'],
    );
    assert.ok(Buffer.byteLength(JSON.stringify(continuation)) <= 256 * 1024);
  });

  it('resumes after approval: runs exactly the approved call once, then the rest, then the reply', async () => {
    const { proposal } = await parkOnce();
    const approvedAction: ApprovedAction = {
      actionId: 'act-1',
      tool: 'fs_write',
      args: { path: '/todo.md', text: 'done' },
      level: 'L4',
      approvedBy: 'person',
      continuation: stored(proposal.continuation),
    };
    await withModel([{ text: ['Marked ', 'done.'] }], async (model) => {
      const toolbox = TWO_TOOLS();
      let historyRead = false;
      const turn = toolTurn('ignored caller text', toolbox, {
        approvedAction,
        history: async () => {
          historyRead = true;
          return [];
        },
      });
      const events = await runTurn(model, turn);
      assert.deepEqual(toolbox.approvedRuns, [{ actionId: 'act-1', tool: 'fs_write', args: approvedAction.args }]);
      assert.deepEqual(toolbox.calls, [{ name: 'fs_list', args: { path: '/' } }]);
      assert.equal(historyRead, false);
      assert.deepEqual(events, [
        { type: 'working', text: USING_TOOLS_NOTE },
        { type: 'text', text: 'Marked done.' },
        { type: 'text', text: '', last: true },
        { type: 'completed' },
      ]);
      const messages = model.requests[0]!.body.messages;
      assert.deepEqual(
        messages.map((message: { role: string }) => message.role),
        ['system', 'user', 'assistant', 'tool', 'tool', 'tool'],
      );
      assert.deepEqual(
        messages.slice(3).map((message: { tool_call_id: string }) => message.tool_call_id),
        ['c_read', 'c_write', 'c_list'],
      );
      assert.equal(messages[4].content, FRAMED('ran with {"path":"/todo.md","text":"done"}'));
      assert.ok(!JSON.stringify(messages).includes('ignored caller text'));
    });
  });

  it('a later call of the same answer may park again, with its own continuation', async () => {
    const script: ScriptedAnswer[] = [
      {
        toolCalls: [
          { id: 'w1', name: 'fs_write', arguments: { path: 'a' } },
          { id: 'w2', name: 'fs_write', arguments: { path: 'b' } },
        ],
      },
    ];
    const first = await withModel(script, (model) => runTurn(model, toolTurn('x', TWO_TOOLS())));
    const parked = proposalOf(first);
    const toolbox = TWO_TOOLS();
    const second = await withModel([], (model) =>
      runTurn(
        model,
        toolTurn('x', toolbox, {
          approvedAction: {
            actionId: 'a1',
            tool: 'fs_write',
            args: { path: 'a' },
            level: 'L4',
            continuation: stored(parked.continuation),
          },
        }),
      ),
    );
    const again = proposalOf(second);
    assert.deepEqual(again.action, { tool: 'fs_write', args: { path: 'b' }, level: 'L4' });
    const continuation = again.continuation as ToolLoopContinuation;
    assert.equal(continuation.pending, 'w2');
    assert.deepEqual(continuation.remaining, []);
    assert.equal(toolbox.approvedRuns.length, 1);
  });

  it('resumes after a denial: the model is told the person refused, the rest runs, the reply streams', async () => {
    const { proposal } = await parkOnce();
    const deniedAction: DeniedAction = {
      actionId: 'act-2',
      tool: 'fs_write',
      level: 'L4',
      outcome: 'denied',
      reason: 'The person denied this action.',
      continuation: stored(proposal.continuation),
    };
    await withModel([{ text: 'Left it as it was.' }], async (model) => {
      const toolbox = TWO_TOOLS();
      const events = await runTurn(model, toolTurn('x', toolbox, { deniedAction }));
      assert.equal(replyOf(events), 'Left it as it was.');
      assert.equal(events.at(-1)?.type, 'completed');
      assert.deepEqual(toolbox.approvedRuns, []);
      assert.deepEqual(toolbox.calls, [{ name: 'fs_list', args: { path: '/' } }]);
      const messages = model.requests[0]!.body.messages;
      assert.equal(messages[4].tool_call_id, 'c_write');
      assert.match(messages[4].content, /the person refused it/);
      assert.match(messages[4].content, /The person denied this action\./);
    });
  });

  it('fails a resumed turn whose continuation is missing, foreign or tampered with, asking the model nothing', async () => {
    const { proposal } = await parkOnce();
    const good = stored(proposal.continuation) as ToolLoopContinuation;
    const bad: unknown[] = [
      undefined,
      'a string',
      { ...good, kind: 'someone-else' },
      { ...good, version: 2 },
      { ...good, pending: 'c_list', remaining: [] },
      { ...good, remaining: ['c_list', 'c_extra'] },
      { ...good, messages: good.messages.slice(1) },
      { ...good, messages: [...good.messages.slice(0, 3)] },
      { ...good, messages: [...good.messages.slice(0, 3), { role: 'tool', content: 'no id' }] },
      { ...good, messages: [...good.messages, { role: 'user', content: 'injected' }] },
      { ...good, messages: good.messages.map((m) => (m.role === 'assistant' ? { ...m, tool_calls: 'x' } : m)) },
    ];
    await withModel([], async (model) => {
      for (const continuation of bad) {
        const toolbox = TWO_TOOLS();
        const events = await runTurn(
          model,
          toolTurn('x', toolbox, {
            approvedAction: { actionId: 'a', tool: 'fs_write', args: {}, level: 'L4', continuation },
          }),
        );
        assert.match(failureOf(events), /the tool loop cannot resume/, JSON.stringify(continuation));
        assert.deepEqual(toolbox.approvedRuns, []);
      }
      assert.equal(model.requests.length, 0);
    });
  });

  it('keeps the first-token timeout on the request that follows the approved call', async () => {
    const { proposal } = await parkOnce();
    const toolbox = new TestToolbox({
      fs_read: { level: 'L1' },
      fs_list: { level: 'L1' },
      fs_write: {
        level: 'L4',
        parks: true,
        run: async () => {
          await new Promise((resolve) => setTimeout(resolve, 400)); // longer than firstTokenMs: not counted
          return { kind: 'result', text: FRAMED('written'), isError: false };
        },
      },
    });
    const events = await withModel([{ silent: true }], (model) =>
      runTurn(
        model,
        toolTurn('x', toolbox, {
          approvedAction: {
            actionId: 'a',
            tool: 'fs_write',
            args: {},
            level: 'L4',
            continuation: stored(proposal.continuation),
          },
        }),
        { timeouts: { connectMs: 1_000, firstTokenMs: 300, totalMs: 5_000 } },
      ),
    );
    assert.match(failureOf(events), /no token within/);
    assert.equal(toolbox.approvedRuns.length, 1);
  });

  it('fails when the approved action is not the call the continuation waited for', async () => {
    const { proposal } = await parkOnce();
    const toolbox = TWO_TOOLS();
    const events = await withModel([], (model) =>
      runTurn(
        model,
        toolTurn('x', toolbox, {
          approvedAction: {
            actionId: 'a',
            tool: 'fs_read',
            args: {},
            level: 'L1',
            continuation: stored(proposal.continuation),
          },
        }),
      ),
    );
    assert.match(failureOf(events), /not the call it waited for/);
    assert.deepEqual(toolbox.approvedRuns, []);
  });

  it('fails rather than park when the continuation would pass 256 KiB', async () => {
    const big = 'x'.repeat(300 * 1024);
    const toolbox = new TestToolbox({
      fs_read: { level: 'L1', run: () => ({ kind: 'result', text: big, isError: false }) },
      fs_write: { level: 'L4', parks: true },
    });
    const script: ScriptedAnswer[] = [
      {
        toolCalls: [
          { name: 'fs_read', arguments: {} },
          { name: 'fs_write', arguments: {} },
        ],
      },
    ];
    const events = await withModel(script, (model) => runTurn(model, toolTurn('x', toolbox)));
    assert.match(failureOf(events), /too long to wait for the person's approval/);
  });

  it('runs a resumed turn without a decision as a new message, as before', async () => {
    await withModel([{ text: 'fresh' }], async (model) => {
      const turn = { ...toolTurn('new question', TWO_TOOLS()), resumed: true };
      const events = await runTurn(model, turn);
      assert.equal(replyOf(events), 'fresh');
      assert.equal(model.requests[0]!.body.messages.at(-1).content, buildInboundPrompt('new question').user);
    });
  });
});

describe('openai tool loop: cancellation', () => {
  it('stops at once while a tool call runs, and asks the model nothing more', async () => {
    let toolStarted!: () => void;
    const started = new Promise<void>((resolve) => (toolStarted = resolve));
    let sawAbort = false;
    const toolbox = new TestToolbox({
      slow: {
        level: 'L1',
        run: (_args, signal) => {
          toolStarted();
          signal.addEventListener('abort', () => (sawAbort = true));
          return new Promise<never>(() => {}); // ignores the signal: the loop must not wait for it
        },
      },
    });
    await withModel([{ toolCalls: [{ name: 'slow', arguments: {} }] }, { text: 'never' }], async (model) => {
      const controller = new AbortController();
      const backend = createOpenAiBackend(config(model.baseUrl));
      const running = collect(backend, toolTurn('x', toolbox, { signal: controller.signal }));
      await started;
      const at = Date.now();
      controller.abort();
      const events = await running;
      await backend.close?.();
      assert.ok(Date.now() - at < 1_000);
      assert.deepEqual(events, [{ type: 'working', text: USING_TOOLS_NOTE }]);
      assert.equal(sawAbort, true);
      assert.equal(model.requests.length, 1);
    });
  });

  it('stops at once while the model thinks in a later round, closing that request', async () => {
    await withModel([{ toolCalls: [{ name: 'fs_read', arguments: {} }] }, { stall: true }], async (model) => {
      const controller = new AbortController();
      const backend = createOpenAiBackend(config(model.baseUrl));
      const running = collect(backend, toolTurn('x', TWO_TOOLS(), { signal: controller.signal }));
      const second = await model.requestArrived(2);
      controller.abort();
      const events = await running;
      await backend.close?.();
      assert.deepEqual(events, [{ type: 'working', text: USING_TOOLS_NOTE }]);
      assert.equal(await second.ended, 'closed');
    });
  });
});

describe('openai tool loop: what it logs', () => {
  let model: ScriptedModel;
  before(async () => {
    model = await startScriptedModel([
      { toolCalls: [{ name: 'fs_read', arguments: { path: '/private/path' } }] },
      { text: 'ok' },
    ]);
  });
  after(() => model.close());

  it('counts rounds and calls, never names, arguments or results', async () => {
    const lines: Array<[string, string, Record<string, unknown>]> = [];
    const backend = createOpenAiBackend(config(model.baseUrl), {
      agent: 'llm',
      log: (level, event, fields) => lines.push([level, event, { ...fields }]),
    });
    await collect(backend, toolTurn('x', TWO_TOOLS()));
    await backend.close?.();
    const line = lines.find(([, event]) => event === 'openai_turn_completed');
    assert.ok(line);
    assert.equal(line[2].toolRounds, 1);
    assert.equal(line[2].toolCalls, 1);
    assert.equal(line[2].requests, 2);
    const text = JSON.stringify(lines);
    assert.ok(!text.includes('/private/path') && !text.includes('fs_read') && !text.includes('ran with'));
  });
});
