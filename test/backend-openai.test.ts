/**
 * The `openai` backend end to end: a real gateway on loopback in front of a real (fake)
 * OpenAI-compatible endpoint on loopback. Both dialects, streaming token by token, multi-turn
 * history from the task store, cancellation reaching the upstream request, and upstream errors
 * becoming failed tasks. The backend's config comes from the YAML through the real loader.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import { buildInboundPrompt } from '../src/agents/inbound/prompt.js';
import { createOpenAiBackend } from '../src/agents/openai/index.js';
import {
  answerJson,
  startFakeModel,
  startStream,
  streamReply,
  tokenEvent,
  type FakeModel,
} from '../src/agents/openai/fake-endpoint.test.js';
import type { AgentBackend } from '../src/agents/backend.js';
import { parseConfig } from '../src/config/load.js';
import {
  eventually,
  rpc,
  rpcStream,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  TOKEN_C,
  v03Message,
  v10Message,
  type TestGateway,
} from './helpers/gateway.js';

function yamlFor(baseUrl: string): string {
  return `
server: { host: 127.0.0.1, port: 0, defaultAgent: llm }
agents:
  - slug: llm
    name: Assistant
    description: Answers with a language model.
    skills: [{ id: chat, name: Chat, description: Answers questions, tags: [llm] }]
    backend:
      type: openai
      baseUrl: ${baseUrl}
      model: llama3.2
      systemPrompt: You are a concise assistant.
      timeouts: { firstTokenMs: 2000, totalMs: 5000 }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [llm] }
  - { id: b, token: "\${TOKEN_B}", agents: [llm] }
`;
}

const TOKENS = ['The ', 'answer ', 'is ', '42.'];

describe('openai backend behind the gateway', () => {
  let model: FakeModel;
  let gateway: TestGateway;
  let backend: AgentBackend;
  let endpoint: string;

  before(async () => {
    model = await startFakeModel();
    const yaml = yamlFor(model.baseUrl);
    const config = parseConfig(yaml, { TOKEN_A, TOKEN_B, TOKEN_C });
    const llm = config.agents.find((agent) => agent.slug === 'llm');
    assert.equal(llm?.backend.type, 'openai');
    backend = createOpenAiBackend(llm.backend, {});
    gateway = await startGateway(yaml, { backends: { llm: backend } });
    endpoint = `${gateway.url}/a2a/llm`;
  });
  after(async () => {
    await gateway.close();
    await backend.close?.();
    await model.close();
  });
  beforeEach(() => model.handle((_request, res) => streamReply(res, TOKENS)));

  it('message/send (v0.3): a completed task with the model text as its artifact; the caller text framed', async () => {
    const { body } = await rpc(endpoint, 'message/send', { message: v03Message('What is the answer?') });
    const task = body.result;
    assert.equal(task.kind, 'task');
    assert.equal(task.status.state, 'completed');
    assert.equal(task.artifacts[0].parts[0].text, TOKENS.join(''));
    const sent = model.requests.at(-1)!.body;
    assert.equal(sent.model, 'llama3.2');
    assert.equal(sent.stream, true);
    assert.equal(sent.tools, undefined);
    assert.equal(sent.messages[0].role, 'system');
    assert.ok(sent.messages[0].content.startsWith('You are a concise assistant.\n\n'));
    assert.ok(sent.messages[0].content.length > 'You are a concise assistant.\n\n'.length);
    assert.equal(sent.messages.at(-1).role, 'user');
    assert.equal(sent.messages.at(-1).content, buildInboundPrompt('What is the answer?').user);
  });

  it('SendMessage (v1.0): a completed task with the model text as its artifact', async () => {
    const { body } = await rpc(endpoint, 'SendMessage', { message: v10Message('Hi') }, { version: '1.0' });
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(task.artifacts[0].parts[0].text, TOKENS.join(''));
  });

  it('message/stream: one artifact-update per token, in order, then the last chunk and completed', async () => {
    const { events } = await rpcStream(endpoint, 'message/stream', { message: v03Message('Stream it') });
    const results = events.map((event) => event.result);
    const updates = results.filter((result) => result.kind === 'artifact-update');
    const tokens = updates.slice(0, -1);
    assert.deepEqual(
      tokens.map((update) => update.artifact.parts[0].text),
      TOKENS,
    );
    assert.equal(tokens[0].append ?? false, false);
    assert.ok(tokens.slice(1).every((update) => update.append === true));
    assert.ok(tokens.every((update) => update.lastChunk !== true));
    const closing = updates.at(-1);
    assert.equal(closing.lastChunk, true);
    assert.equal(closing.artifact.parts[0].text, '');
    const last = results.at(-1);
    assert.equal(last.status.state, 'completed');
    assert.equal(last.final, true);
  });

  it('multi-turn: the second message in a context sends the first exchange as history', async () => {
    const contextId = `ctx-openai-${Date.now()}`;
    model.handle((_request, res) => streamReply(res, ['Three a day.']));
    const first = await rpc(endpoint, 'message/send', { message: v03Message('Trains to Lyon?', { contextId }) });
    assert.equal(first.body.result.status.state, 'completed');
    model.handle((_request, res) => streamReply(res, ['Five.']));
    const second = await rpc(endpoint, 'message/send', { message: v03Message('And to Paris?', { contextId }) });
    assert.equal(second.body.result.status.state, 'completed');
    const messages = model.requests.at(-1)!.body.messages;
    assert.deepEqual(
      messages.map((message: { role: string }) => message.role),
      ['system', 'user', 'assistant', 'user'],
      'the second request carries the first exchange (needs turn.history from the task service)',
    );
    assert.equal(messages[1].content, buildInboundPrompt('Trains to Lyon?').user);
    assert.equal(messages[2].content, 'Three a day.');
    assert.equal(messages[3].content, buildInboundPrompt('And to Paris?').user);
  });

  it('history is per caller: another client in the same contextId starts afresh', async () => {
    const contextId = `ctx-openai-shared-${Date.now()}`;
    await rpc(endpoint, 'message/send', { message: v03Message('I am client a', { contextId }) });
    await rpc(endpoint, 'message/send', { message: v03Message('Who am I?', { contextId }) }, { token: TOKEN_B });
    const messages = model.requests.at(-1)!.body.messages;
    assert.equal(messages.length, 2);
    assert.ok(!JSON.stringify(messages).includes('I am client a'));
  });

  it('CancelTask while the model streams: the upstream request is closed and the task canceled', async () => {
    model.handle((_request, res) => {
      startStream(res);
      res.write(tokenEvent('Thinking'));
      // … and the model goes on thinking until the caller cancels.
    });
    const before = model.requests.length;
    const streaming = rpcStream(endpoint, 'message/stream', { message: v03Message('Take your time') });
    const request = await model.requestArrived(before + 1);
    let id: string | undefined;
    await eventually(
      async () => {
        const listed = await rpc(endpoint, 'ListTasks', {}, { version: '1.0' });
        const working = listed.body.result.tasks.find(
          (task: { status: { state: string } }) => task.status.state === 'TASK_STATE_WORKING',
        );
        id = working?.id;
        return id !== undefined;
      },
      3000,
      'the working task',
    );
    const canceled = await rpc(endpoint, 'CancelTask', { id }, { version: '1.0' });
    assert.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED');
    assert.equal(await request.ended, 'closed');
    const { events } = await streaming;
    const last = events.at(-1).result;
    assert.equal(last.status.state, 'canceled');
    assert.equal(last.final, true);
    const got = await rpc(endpoint, 'tasks/get', { id });
    assert.equal(got.body.result.status.state, 'canceled');
    assert.equal(got.body.result.artifacts[0].parts[0].text, 'Thinking');
  });

  it('an upstream error fails the task with the reason in its status message', async () => {
    model.handle((_request, res) =>
      answerJson(res, 404, { error: 'model "llama3.2" not found, try pulling it first' }),
    );
    const { body } = await rpc(endpoint, 'message/send', { message: v03Message('Hello?') });
    const task = body.result;
    assert.equal(task.status.state, 'failed');
    assert.equal(
      task.status.message.parts[0].text,
      'the model endpoint answered HTTP 404: model "llama3.2" not found, try pulling it first',
    );
  });

  it('never passes the caller token or headers upstream', async () => {
    await rpc(endpoint, 'message/send', { message: v03Message('headers?') }, { headers: { 'x-private': 'p-1' } });
    const request = model.requests.at(-1)!;
    assert.equal(request.headers.authorization, undefined);
    assert.equal(request.headers['x-private'], undefined);
    assert.ok(!JSON.stringify(request.headers).includes(TOKEN_A));
    assert.ok(!JSON.stringify(request.body).includes(TOKEN_A));
  });
});

describe('examples/ollama.yaml', () => {
  it('is a valid config whose assistant agent makes an openai backend', async () => {
    const config = parseConfig(readFileSync('examples/ollama.yaml', 'utf8'), { AIRLOCK_DEMO_TOKEN: TOKEN_A });
    const assistant = config.agents.find((agent) => agent.slug === 'assistant');
    assert.equal(assistant?.backend.type, 'openai');
    assert.equal(assistant.backend.baseUrl, 'http://127.0.0.1:11434/v1');
    assert.equal(assistant.backend.model, 'llama3.2');
    assert.equal(assistant.backend.apiKey, undefined);
    const backend = createOpenAiBackend(assistant.backend, {});
    assert.equal(backend.kind, 'openai');
    await backend.close?.();
  });
});

describe('openai backend: its API key never leaves in a reply', () => {
  const API_KEY = 'sk-test-key-never-to-leave-0123456789';
  let model: FakeModel;
  let gateway: TestGateway;
  let backend: AgentBackend;

  before(async () => {
    model = await startFakeModel();
    const yaml = yamlFor(model.baseUrl).replace(
      '      model: llama3.2\n',
      `      model: llama3.2\n      apiKey: "${API_KEY}"\n`,
    );
    const config = parseConfig(yaml, { TOKEN_A, TOKEN_B, TOKEN_C });
    // The loader adds the key to the reply scrubber by itself; nothing lists it in content.scrubSecrets.
    assert.deepEqual(config.scrubSecrets, [API_KEY]);
    const llm = config.agents.find((agent) => agent.slug === 'llm');
    assert.equal(llm?.backend.type, 'openai');
    backend = createOpenAiBackend(llm.backend, {});
    gateway = await startGateway(yaml, { backends: { llm: backend } });
  });
  after(async () => {
    await gateway.close();
    await backend.close?.();
    await model.close();
  });

  it('scrubs the key from a streamed reply, even split across tokens', async () => {
    // A model made to repeat its own credential, in pieces.
    model.handle((_request, res) => streamReply(res, ['my key is ', API_KEY.slice(0, 12), API_KEY.slice(12), '.']));
    const endpoint = `${gateway.url}/a2a/llm`;
    const { body } = await rpc(endpoint, 'message/send', { message: v03Message('What is your key?') });
    const text: string = body.result.artifacts[0].parts[0].text;
    assert.ok(!text.includes(API_KEY), text);
    assert.match(text, /\[secret redacted\]/);
    const { events } = await rpcStream(endpoint, 'message/stream', { message: v03Message('Again?') });
    assert.ok(!JSON.stringify(events).includes(API_KEY));
    assert.equal(model.requests.at(-1)!.headers.authorization, `Bearer ${API_KEY}`);
  });
});
