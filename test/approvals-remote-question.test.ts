/**
 * A remote agent's question, end to end, with approvals configured: an official `@a2a-js/sdk`
 * server (the remote agent) asks `input-required` through an `a2a` relay backend of a real
 * gateway; the question goes to the person who answers for the caller (never to the caller),
 * the caller's own replies are not forwarded, and the person's answer is sent on the same
 * remote task.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import { TaskState, type AgentCard } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { parseConfig } from '../src/config/load.js';
import { prepareBackends, type PreparedBackends } from '../src/server/backends.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';
import { createUpstreams, type Upstreams } from '../src/server/upstreams.js';
import { rpc } from './helpers/gateway.js';
import { approvalsAnswerCommand, approvalsQuestionsCommand } from '../src/cli/approvals.js';
import { captureIO } from './helpers/command-io.js';
import { sdkAgentCard, sdkSkill } from './helpers/sdk-card.js';
import { replyChunk, statusEvent, openingTask, textOf } from './helpers/sdk-events.js';

const RPC_PATH = '/a2a/jsonrpc';
const CARD_PATH = '/.well-known/agent-card.json';
const BOT_TOKEN = 'bot-client-token-0123456789abcdef0123456789';
const ALICE_TOKEN = 'alice-person-token-0123456789abcdef0123456';
const BOUNDED = { timeout: 15_000 };

// ---------------------------------------------------------------------------------------------
// The remote agent: the official SDK server, asking "Which day?" then booking

interface Execution {
  taskId: string;
  text: string;
}

/** First message of a task: input-required "Which day?"; the next one: completed "booked for <text>". */
class BookingExecutor implements AgentExecutor {
  readonly executions: Execution[] = [];

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = context;
    const text = textOf(userMessage.parts);
    const resumed = context.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
    this.executions.push({ taskId, text });
    bus.publish(openingTask(context));
    if (resumed) bus.publish(replyChunk(taskId, contextId, { text: `booked for ${text}` }));
    bus.publish(
      resumed
        ? statusEvent(taskId, contextId, TaskState.TASK_STATE_COMPLETED)
        : statusEvent(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, 'Which day?'),
    );
  };

  cancelTask = async (): Promise<void> => {};
}

function upstreamCard(base: string): AgentCard {
  return sdkAgentCard({
    name: 'Booking',
    description: 'Books tables.',
    url: `${base}${RPC_PATH}`,
    skills: [sdkSkill({ id: 'book', name: 'Book', description: 'Books a table', tags: ['test'] })],
  });
}

// ---------------------------------------------------------------------------------------------

describe('approvals: a remote agent’s question goes to the person, the answer to the same remote task', () => {
  const executor = new BookingExecutor();
  let upstream: Server;
  let dir: string;
  let upstreams: Upstreams;
  let backends: PreparedBackends;
  let gateway: Gateway;
  let gw: string;

  before(async () => {
    const app = express();
    app.use(express.json({ limit: '1mb' }));
    upstream = await new Promise((ready) => {
      const listening = app.listen(0, '127.0.0.1', () => ready(listening));
    });
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const handler = new DefaultRequestHandler(upstreamCard(base), new InMemoryTaskStore(), executor);
    app.use(CARD_PATH, agentCardHandler({ agentCardProvider: handler }));
    app.use(RPC_PATH, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

    dir = mkdtempSync(join(tmpdir(), 'airlock-remote-question-'));
    const registry = join(dir, 'upstreams.yaml');
    writeFileSync(
      registry,
      `agents:
  - name: booking
    card_url: ${base}${CARD_PATH}
    description: The SDK booking agent.
    effect: read_only
    poll_interval_s: 0.05
    max_wait_s: 8
`,
    );
    const config = parseConfig(
      `server: { host: 127.0.0.1, port: 0 }
upstreams: { registry: "${registry}", pins: "${join(dir, 'pins.json')}" }
approvals:
  people:
    - { id: alice, token: "\${ALICE_TOKEN}" }
agents:
  - slug: relay
    name: Relay
    description: Relays to the booking agent.
    skills: [{ id: relay, name: Relay, description: Relays, tags: [test] }]
    backend: { type: a2a, agent: booking }
clients:
  - { id: bot, token: "\${BOT_TOKEN}", agents: [relay], owner: alice }
`,
      { BOT_TOKEN, ALICE_TOKEN },
    );
    assert.ok(config.upstreams);
    upstreams = await createUpstreams(config.upstreams, { logger: silentLogger });
    backends = await prepareBackends(config, { logger: silentLogger, upstream: upstreams.backendFor });
    gateway = createGateway(config, { logger: silentLogger, backends: backends.bySlug });
    gw = await gateway.listen();
  });

  after(async () => {
    await gateway?.close();
    await backends?.close();
    await upstreams?.close();
    if (upstream !== undefined) {
      upstream.closeAllConnections();
      await new Promise<void>((done) => upstream.close(() => done()));
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function send(text: string, taskId?: string): Promise<any> {
    const message: Record<string, unknown> = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] };
    if (taskId !== undefined) message.taskId = taskId;
    const sent = await rpc(`${gw}/a2a/relay`, 'SendMessage', { message }, { token: BOT_TOKEN, version: '1.0' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.ok(sent.body.result?.task, JSON.stringify(sent.body));
    return sent.body.result.task;
  }

  function questionPart(task: any): Record<string, any> {
    const parts: any[] = task.status?.message?.parts ?? [];
    const data = parts.map((part) => part.data).find((value) => value !== undefined && value !== null);
    assert.ok(data, `a data part in the status message: ${JSON.stringify(task.status)}`);
    return data;
  }

  it('parks, ignores the caller’s reply, takes the person’s answer on the same remote task', BOUNDED, async () => {
    // 1. The remote agent asks; the caller gets a parked task, not the question to answer.
    const asked = await send('book a table');
    assert.equal(asked.status?.state, 'TASK_STATE_INPUT_REQUIRED', JSON.stringify(asked.status));
    const parked = questionPart(asked);
    assert.equal(typeof parked.question_id, 'string');
    assert.equal(parked.remote_agent, 'booking');
    assert.equal(typeof parked.remote_task_id, 'string');
    assert.equal(executor.executions.length, 1);
    assert.equal(executor.executions[0]!.text, 'book a table');
    assert.equal(parked.remote_task_id, executor.executions[0]!.taskId);

    // 2. The caller's reply is not an answer: nothing is sent upstream.
    const premature = await send('Tuesday', asked.id);
    assert.equal(premature.status?.state, 'TASK_STATE_INPUT_REQUIRED', JSON.stringify(premature.status));
    assert.equal(executor.executions.length, 1, 'the upstream received no second message');

    // 3. The person sees the question; the caller's token is no person's credential.
    const listed = await fetch(`${gw}/approvals/questions`, { headers: { authorization: `Bearer ${ALICE_TOKEN}` } });
    assert.equal(listed.status, 200);
    const { questions } = (await listed.json()) as { questions: any[] };
    const question = questions.find((entry) => entry.questionId === parked.question_id);
    assert.ok(question, JSON.stringify(questions));
    assert.match(question.question, /Which day\?/);
    const asBot = await fetch(`${gw}/approvals/questions`, { headers: { authorization: `Bearer ${BOT_TOKEN}` } });
    assert.equal(asBot.status, 401);

    // 4. The person sees it and answers, with `airlock approvals questions|answer`.
    const shown = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE_TOKEN });
    assert.equal(await approvalsQuestionsCommand({ url: gw }, shown), 0);
    assert.ok(shown.out.includes(parked.question_id) && shown.out.includes('asks (untrusted) "'), shown.out);
    const asCaller = captureIO({ AIRLOCK_PERSON_TOKEN: BOT_TOKEN });
    assert.equal(await approvalsAnswerCommand(parked.question_id, 'Friday', { url: gw }, asCaller), 1);
    const answered = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE_TOKEN });
    assert.equal(await approvalsAnswerCommand(parked.question_id, 'Wednesday', { url: gw }, answered), 0);
    assert.equal(answered.out, `answered ${parked.question_id}\n`);

    // 5. The caller's next message sends the person's answer, on the same remote task.
    const done = await send('go on', asked.id);
    assert.equal(done.id, asked.id);
    assert.equal(done.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(done.status));
    assert.equal(executor.executions.length, 2, JSON.stringify(executor.executions));
    const second = executor.executions[1]!;
    assert.equal(second.text, 'Wednesday');
    assert.equal(second.taskId, parked.remote_task_id, 'the same upstream task');
    assert.match(JSON.stringify(done.artifacts ?? []), /booked for Wednesday/);
  });
});
