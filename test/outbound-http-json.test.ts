/**
 * Outbound over HTTP+JSON: Airlock's client, with its real transport, card trust and pin file,
 * calls the official `@a2a-js/sdk` server serving only its REST binding (`restHandler`) on
 * loopback, with a card that lists only an HTTP+JSON interface. Send, poll, stream, get and
 * cancel give the same results as over JSON-RPC; a card listing both bindings is spoken to over
 * JSON-RPC (the server counts which routes were hit); the guarded transport's byte cap and its
 * refusal of redirects hold on the REST endpoint; error statuses map to the JSON-RPC path's
 * error types.
 */
import { loadRegistryFile } from '../src/client/registry.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
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
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import {
  createOutboundClient,
  createUpstreamConnector,
  type CallResult,
  type OutboundRuntime,
} from '../src/client/index.js';
import { CallFailure, RemoteRpc, resolveEndpoint } from '../src/client/remote.js';
import { UNTRUSTED_END_MARKER, UNTRUSTED_START_MARKER } from '../src/content/index.js';
import { sdkAgentCard, sdkInterface } from './helpers/sdk-card.js';
import { replyChunk, statusEvent, openingTask, textOf } from './helpers/sdk-events.js';

const CARD_PATH = '/.well-known/agent-card.json';
const REST_PATH = '/a2a/rest';
const RPC_PATH = '/a2a/jsonrpc';
const TOKEN = 'rest-peer-token-0123456789abcdef';
const BOUNDED = { timeout: 15_000 };

/**
 * The agent, by the text it is sent: `slow …` works 300 ms then echoes; `never …` works until
 * canceled; `big …` answers 8000 characters; anything else echoes at once.
 */
class RestExecutor implements AgentExecutor {
  readonly canceled: string[] = [];
  readonly #contexts = new Map<string, string>();
  readonly #waiting = new Map<string, () => void>();

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = context;
    this.#contexts.set(taskId, contextId);
    const text = textOf(userMessage.parts);
    const status = (state: TaskState): void => bus.publish(statusEvent(taskId, contextId, state));
    bus.publish(openingTask(context));
    if (text.startsWith('slow')) {
      status(TaskState.TASK_STATE_WORKING);
      await new Promise((done) => setTimeout(done, 300));
    }
    if (text.startsWith('never')) {
      status(TaskState.TASK_STATE_WORKING);
      await new Promise<void>((done) => this.#waiting.set(taskId, done));
      return;
    }
    const answer = text.startsWith('big') ? 'x'.repeat(8000) : `echo: ${text}`;
    bus.publish(replyChunk(taskId, contextId, { text: answer }));
    status(TaskState.TASK_STATE_COMPLETED);
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.canceled.push(taskId);
    bus.publish(statusEvent(taskId, this.#contexts.get(taskId) ?? '', TaskState.TASK_STATE_CANCELED));
    this.#waiting.get(taskId)?.();
    this.#waiting.delete(taskId);
  };

  release(): void {
    for (const done of this.#waiting.values()) done();
    this.#waiting.clear();
  }
}

type Offer = 'rest-only' | 'both';

function peerCard(base: string, offer: Offer): AgentCard {
  const rest = sdkInterface(`${base}${REST_PATH}`, 'HTTP+JSON');
  const rpc = sdkInterface(`${base}${RPC_PATH}`);
  return sdkAgentCard({
    name: 'REST peer',
    description: 'serves HTTP+JSON',
    // HTTP+JSON listed first: with both, Airlock still prefers JSON-RPC.
    interfaces: offer === 'rest-only' ? [rest] : [rest, rpc],
  });
}

interface Peer {
  base: string;
  cardUrl: string;
  /** `METHOD path` of every request the server received, and their headers. */
  seen: { route: string; authorization?: string; version?: string; contentType?: string }[];
  canceled: string[];
  hits(prefix: string): number;
  close(): Promise<void>;
}

/** The SDK server on 127.0.0.1: REST only, or REST and JSON-RPC with a card listing both. */
async function startPeer(offer: Offer): Promise<Peer> {
  const app = express();
  const seen: Peer['seen'] = [];
  app.use((req, _res, next) => {
    seen.push({
      route: `${req.method} ${req.path}`,
      ...(req.get('authorization') !== undefined && { authorization: req.get('authorization') }),
      ...(req.get('a2a-version') !== undefined && { version: req.get('a2a-version') }),
      ...(req.get('content-type') !== undefined && { contentType: req.get('content-type') }),
    });
    next();
  });
  const server: Server = await new Promise((ready) => {
    const listening = app.listen(0, '127.0.0.1', () => ready(listening));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const executor = new RestExecutor();
  const handler = new DefaultRequestHandler(peerCard(base, offer), new InMemoryTaskStore(), executor);
  app.use(CARD_PATH, agentCardHandler({ agentCardProvider: handler }));
  app.use(REST_PATH, restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  if (offer === 'both') {
    app.use(RPC_PATH, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  }
  return {
    base,
    cardUrl: `${base}${CARD_PATH}`,
    seen,
    canceled: executor.canceled,
    hits: (prefix) => seen.filter((row) => row.route.includes(prefix)).length,
    close: () =>
      new Promise<void>((done) => {
        executor.release();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

function entry(name: string, cardUrl: string, extra = ''): string {
  return `  - name: ${name}
    card_url: ${cardUrl}
    description: A peer over HTTP+JSON.
    effect: read_only
    auth: { bearer_env: AIRLOCK_SECRET_PEER }
    poll_interval_s: 0.05
    max_wait_s: 5
    timeouts: { connect: 2, read: 5, total: 5 }
${extra}`;
}

function assertFramed(result: CallResult, text: string): void {
  const start = result.reply.indexOf(UNTRUSTED_START_MARKER);
  const end = result.reply.indexOf(UNTRUSTED_END_MARKER);
  assert.ok(start >= 0 && end > start, result.reply);
  assert.ok(result.reply.slice(start, end).includes(text), `"${text}" inside the markers: ${result.reply}`);
}

/** A loopback server whose card lists only HTTP+JSON and whose REST endpoint answers a redirect. */
async function startRedirector(): Promise<{ cardUrl: string; followed: () => number; close(): Promise<void> }> {
  let followed = 0;
  let base = '';
  const server = createServer((req, res) => {
    if (req.url === CARD_PATH) {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          name: 'redirector',
          description: '',
          version: '1',
          supportedInterfaces: [{ url: `${base}${REST_PATH}`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }],
          capabilities: {},
          skills: [],
        }),
      );
      return;
    }
    if (req.url?.startsWith('/elsewhere') === true) followed += 1;
    res.statusCode = 307;
    res.setHeader('location', `${base}/elsewhere`);
    res.end();
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    cardUrl: `${base}${CARD_PATH}`,
    followed: () => followed,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describe('outbound over HTTP+JSON: @a2a-js/sdk REST server, card lists only HTTP+JSON', () => {
  let rest: Peer;
  let both: Peer;
  let redirector: Awaited<ReturnType<typeof startRedirector>>;
  let dir: string;
  let airlock: OutboundRuntime;

  before(async () => {
    rest = await startPeer('rest-only');
    both = await startPeer('both');
    redirector = await startRedirector();
    dir = mkdtempSync(join(tmpdir(), 'airlock-outbound-rest-'));
    const yaml = [
      'agents:',
      entry('rest', rest.cardUrl),
      entry('rest-short', rest.cardUrl).replace('max_wait_s: 5', 'max_wait_s: 0.6'),
      entry('rest-capped', rest.cardUrl, '    max_response_bytes: 2048\n'),
      entry('both', both.cardUrl),
      entry('redirect', redirector.cardUrl),
    ].join('\n');
    writeFileSync(join(dir, 'registry.yaml'), yaml);
    airlock = createOutboundClient({
      registryPath: join(dir, 'registry.yaml'),
      env: { AIRLOCK_SECRET_PEER: TOKEN },
      pinsPath: join(dir, 'pins.json'),
    });
  });

  after(async () => {
    await airlock.close();
    await rest.close();
    await both.close();
    await redirector.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends over REST: the same framed result, with A2A-Version, JSON and the bearer token', BOUNDED, async () => {
    const result = await airlock.send({ agent: 'rest', message: 'hello over rest' });
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.equal(result.task_state, 'completed');
    assert.equal(result.error_type, null);
    assert.match(result.task_id ?? '', /^[0-9a-f-]{36}$/);
    assertFramed(result, 'echo: hello over rest');
    const sends = rest.seen.filter((row) => row.route === `POST ${REST_PATH}/message:send`);
    assert.equal(sends.length, 1, rest.seen.map((row) => row.route).join(', '));
    assert.equal(sends[0]!.authorization, `Bearer ${TOKEN}`);
    assert.equal(sends[0]!.version, '1.0');
    assert.match(sends[0]!.contentType ?? '', /^application\/(a2a\+)?json/);
  });

  it('polls a slow task with GET /tasks/{id}', BOUNDED, async () => {
    const gets = rest.hits(`GET ${REST_PATH}/tasks/`);
    const result = await airlock.send({ agent: 'rest', message: 'slow please' });
    assert.equal(result.status, 'success', JSON.stringify(result));
    assertFramed(result, 'echo: slow please');
    assert.ok(rest.hits(`GET ${REST_PATH}/tasks/`) > gets, 'Airlock polled over REST');
  });

  it('streams over POST /message:stream (SSE), no polling', BOUNDED, async () => {
    const gets = rest.hits(`GET ${REST_PATH}/tasks/`);
    const result = await airlock.send({ agent: 'rest', message: 'slow stream', stream: true });
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.equal(result.task_state, 'completed');
    assertFramed(result, 'echo: slow stream');
    assert.equal(rest.hits(`POST ${REST_PATH}/message:stream`), 1);
    assert.equal(rest.hits(`GET ${REST_PATH}/tasks/`), gets, 'no polling');
  });

  it('cancels with POST /tasks/{id}:cancel after max_wait_s; the executor sees it', BOUNDED, async () => {
    const result = await airlock.send({ agent: 'rest-short', message: 'never ending' });
    assert.equal(result.status, 'error', JSON.stringify(result));
    assert.equal(result.error_type, 'request_timeout');
    assert.equal(result.task_state, 'canceled');
    assert.equal(rest.hits(':cancel'), 1);
    assert.deepEqual(rest.canceled, [result.task_id]);
  });

  it('gets a task the client sent, through the ledger, over REST', BOUNDED, async () => {
    const sent = await airlock.send({ agent: 'rest', message: 'fetch me later' });
    const got = await airlock.getTask({ agent: 'rest', taskId: sent.task_id! });
    assert.equal(got.status, 'success', JSON.stringify(got));
    assert.equal(got.task_id, sent.task_id);
    assertFramed(got, 'echo: fetch me later');
  });

  it('maps error statuses as JSON-RPC errors map: TaskNotFound, TaskNotCancelable', BOUNDED, async () => {
    const rpc = new RemoteRpc(airlock.transport);
    const failureOf = async (agent: string, run: (r: RemoteRpc, e: never) => Promise<unknown>) => {
      const endpoint = await resolveEndpoint(airlock.registry.get(agent), airlock.cards);
      try {
        await run(rpc, endpoint as never);
      } catch (error) {
        assert.ok(error instanceof CallFailure, String(error));
        return { type: error.errorType, binding: endpoint.binding, text: error.remoteText };
      }
      assert.fail('no failure');
    };
    const missing = await failureOf('rest', (r, e) => r.getTask(e, 'no-such-task'));
    assert.deepEqual(
      { type: missing.type, binding: missing.binding },
      { type: 'task_not_found', binding: 'HTTP+JSON' },
    );
    // The same request over JSON-RPC to the peer that offers both: the same error type.
    const missingRpc = await failureOf('both', (r, e) => r.getTask(e, 'no-such-task'));
    assert.deepEqual(
      { type: missingRpc.type, binding: missingRpc.binding },
      { type: 'task_not_found', binding: 'JSONRPC' },
    );

    const done = await airlock.send({ agent: 'rest', message: 'finished' });
    const notCancelable = await failureOf('rest', (r, e) => r.cancelTask(e, done.task_id!));
    assert.equal(notCancelable.type, 'remote_error');
    assert.match(notCancelable.text ?? '', /^HTTP 400 TASK_NOT_CANCELABLE: /);
    const doneRpc = await airlock.send({ agent: 'both', message: 'finished' });
    const notCancelableRpc = await failureOf('both', (r, e) => r.cancelTask(e, doneRpc.task_id!));
    assert.deepEqual(
      { type: notCancelableRpc.type, binding: notCancelableRpc.binding },
      { type: 'remote_error', binding: 'JSONRPC' },
    );
  });

  it('a card listing both bindings is spoken to over JSON-RPC, never REST', BOUNDED, async () => {
    const result = await airlock.send({ agent: 'both', message: 'which route' });
    assert.equal(result.status, 'success', JSON.stringify(result));
    assertFramed(result, 'echo: which route');
    const streamed = await airlock.send({ agent: 'both', message: 'stream route', stream: true });
    assert.equal(streamed.status, 'success', JSON.stringify(streamed));
    assert.ok(both.hits(`POST ${RPC_PATH}`) >= 2, both.seen.map((row) => row.route).join(', '));
    assert.equal(both.hits(REST_PATH), 0, 'no request reached the REST endpoint');
  });

  it('refuses a REST response over max_response_bytes (send and stream)', BOUNDED, async () => {
    const sent = await airlock.send({ agent: 'rest-capped', message: 'big reply' });
    assert.equal(sent.status, 'error', JSON.stringify(sent));
    assert.equal(sent.error_type, 'response_too_large');
    const streamed = await airlock.send({ agent: 'rest-capped', message: 'big stream', stream: true });
    assert.equal(streamed.status, 'error', JSON.stringify(streamed));
    assert.equal(streamed.error_type, 'response_too_large');
  });

  it("the gateway's a2a upstream backend speaks REST through the same connector", BOUNDED, async () => {
    const connector = createUpstreamConnector({
      registryPath: join(dir, 'registry.yaml'),
      registry: loadRegistryFile(join(dir, 'registry.yaml'), { AIRLOCK_SECRET_PEER: TOKEN }),
      pinsPath: join(dir, 'upstream-pins.json'),
      env: { AIRLOCK_SECRET_PEER: TOKEN },
    });
    try {
      const signal = new AbortController().signal;
      const channel = await connector.open('rest').connect(signal);
      const sends = rest.hits(`POST ${REST_PATH}/message:send`);
      const sent = await channel.send({ text: 'relayed', signal, timeoutMs: 5_000 });
      assert.equal(rest.hits(`POST ${REST_PATH}/message:send`), sends + 1);
      assert.ok(sent.kind === 'task', JSON.stringify(sent));
      const task = await channel.getTask(sent.task.id, signal);
      assert.equal(task.id, sent.task.id);
      const states: string[] = [];
      for await (const event of channel.stream({ text: 'streamed relay', signal, timeoutMs: 5_000 })) {
        if (event.kind === 'status-update') states.push(event.status.state);
      }
      assert.ok(states.includes('completed'), states.join(', '));
    } finally {
      await connector.close();
    }
  });

  it('refuses a redirect from the REST endpoint and never follows it', BOUNDED, async () => {
    const result = await airlock.send({ agent: 'redirect', message: 'go elsewhere' });
    assert.equal(result.status, 'error', JSON.stringify(result));
    assert.equal(result.error_type, 'redirect_refused');
    assert.equal(redirector.followed(), 0);
  });
});
