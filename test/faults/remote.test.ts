/**
 * Fault catalogue, remote agents: a gateway whose agents relay (`a2a` backend, wired through
 * `createUpstreams` + `prepareBackends` as `airlock serve` wires them) to a hostile loopback
 * remote, driven over JSON-RPC; and the outbound client (`airlock call`'s path, `createClient`
 * over the real guarded transport) against the same remote.
 *
 * | Fault                                                  | Expected behaviour                                                                                           | Asserted in                      |
 * | ------------------------------------------------------ | ------------------------------------------------------------------------------------------------------------ | -------------------------------- |
 * | remote answers SendMessage with a gzip bomb            | never decoded (1 GiB inflated, ~1 MB sent; rss < +256 MB): FAILED "… (invalid_response): the remote sent a   | compression bomb › relay         |
 * |                                                        | compressed response, which Airlock never decodes.", < 5 s; log: upstream_failed type invalid_response     |                                  |
 * | remote serves its agent card as a gzip bomb            | card refused, no RPC sent: FAILED "… (card_invalid): the remote agent's card is invalid or unusable.", < 5 s  | compression bomb › card          |
 * | same bomb through the outbound client (`airlock call`) | error result, error_type invalid_response, < 5 s                                                             | compression bomb › client        |
 * | remote SSE stream that never ends (floods)             | cut at max_response_bytes: FAILED "(response_too_large)"; the remote sees the stream closed; upstream canceled | endless SSE › byte cap           |
 * | …with max_reply_chars 10000 (bytes cap not reached)    | cut at max_reply_chars first: COMPLETED with the text so far + "[Airlock: … cut at 10000 characters]"; canceled | endless SSE › reply chars        |
 * | remote SSE stream that never ends (keep-alives only)   | cut at max_wait_s (the stream's total, docs/OUTBOUND.md; timeouts.total does not apply): FAILED request_timeout | endless SSE › max_wait_s         |
 * | remote task that never terminates (always working)     | relay stops at max_wait_s: FAILED "did not finish within max_wait_s (1 s)"; CancelTask sent upstream          | never-terminating › deadline     |
 * | …and the caller cancels meanwhile                      | inbound CANCELED at once; CancelTask reaches the remote for the same task; polling stops                     | never-terminating › cancel       |
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createClient, parseRegistry } from '../../src/client/index.js';
import { makeTask, stubCards } from '../../src/client/fake-remote.test.js';
import { createGuardedClient } from '../../src/net/index.js';
import { encodeCardV10 } from '../../src/protocol/card.js';
import type { AgentCard, StreamEvent } from '../../src/protocol/model.js';
import { dialectForMethod } from '../../src/protocol/version.js';
import { eventually, rpc, v10Message } from '../helpers/gateway.js';
import { BOUNDED, gatewayYaml, sleep, startFaultGateway, type FaultGateway } from './support.js';

const v1 = { version: '1.0' };
const INFLATED_MEMBER = 16 * 1024 * 1024;
const MEMBERS = 64;
/** 64 gzip members of 16 MiB of zeros: about 1 MB on the wire, 1 GiB once inflated. */
const BOMB = Buffer.concat(
  Array.from({ length: MEMBERS }, () => gzipSync(Buffer.alloc(INFLATED_MEMBER), { level: 9 })),
);
const SSE_CAP = 65_536;
const REPLY_CHARS = 10_000;

type Mode = 'bomb' | 'card-bomb' | 'sse-flood' | 'sse-flood-chars' | 'sse-trickle' | 'never' | 'never-cancel';
const MODES: readonly Mode[] = [
  'bomb',
  'card-bomb',
  'sse-flood',
  'sse-flood-chars',
  'sse-trickle',
  'never',
  'never-cancel',
];

interface Seen {
  mode: Mode;
  method: string;
  id?: string;
}

interface HostileRemote {
  base: string;
  seen: Seen[];
  /** SSE responses the remote opened, and how many of them the peer has closed. */
  streams: { opened: number; closed: number };
  methods(mode: Mode): string[];
  close(): Promise<void>;
}

function cardFor(base: string, mode: Mode): AgentCard {
  return {
    name: `Hostile ${mode}`,
    description: 'A remote agent that misbehaves.',
    version: '1',
    interfaces: [{ url: `${base}/${mode}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: mode.startsWith('sse'), pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  };
}

/** The remote: `/<mode>/.well-known/agent-card.json` and `/<mode>/rpc`, each mode hostile its own way. */
async function startHostileRemote(): Promise<HostileRemote> {
  const seen: Seen[] = [];
  const streams = { opened: 0, closed: 0 };
  const open = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  let base = '';
  const remote: HostileRemote = {
    base: '',
    seen,
    streams,
    methods: (mode) => seen.filter((row) => row.mode === mode).map((row) => row.method),
    close: async () => undefined,
  };
  const sendBomb = (res: ServerResponse, contentType: string): void => {
    res.writeHead(200, { 'content-type': contentType, 'content-encoding': 'gzip', 'content-length': BOMB.length });
    res.end(BOMB);
  };
  const server = createServer((req, res) => {
    const [, first, rest] = /^\/([^/]+)(\/.*)$/.exec(req.url ?? '') ?? [];
    const mode = first as Mode;
    if (!MODES.includes(mode)) return void res.writeHead(404).end();
    if (req.method === 'GET' && rest === '/.well-known/agent-card.json') {
      if (mode === 'card-bomb') return sendBomb(res, 'application/json');
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(encodeCardV10(cardFor(base, mode))));
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const frame = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number;
        method: string;
        params: unknown;
      };
      const dialect = dialectForMethod(frame.method)!;
      const request = dialect.decodeRequest(frame.method, frame.params);
      const id =
        request.method === 'get' || request.method === 'cancel' ? (request.params as { id: string }).id : undefined;
      seen.push({ mode, method: frame.method, ...(id !== undefined && { id }) });
      const json = (result: unknown): void => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: frame.id, result }));
      };
      if (mode === 'bomb') return sendBomb(res, 'application/json');
      if (request.method === 'cancel') return json(dialect.encodeTask(makeTask(id!, 'canceled')));
      if (request.method === 'get') return json(dialect.encodeTask(makeTask(id!, 'working')));
      if (request.method === 'send') {
        return json(dialect.encodeSendResult({ kind: 'task', task: makeTask(`t-${mode}`, 'working') }));
      }
      // A stream: it never ends by itself.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      streams.opened += 1;
      open.add(res);
      const event = (payload: StreamEvent): void => {
        res.write(
          `data: ${JSON.stringify({ jsonrpc: '2.0', id: frame.id, result: dialect.encodeStreamEvent(payload) })}\n\n`,
        );
      };
      event({ kind: 'task', task: makeTask(`t-${mode}`, 'working') });
      let i = 0;
      const timer = setInterval(
        () => {
          if (mode === 'sse-trickle') return void res.write(': keep-alive\n\n');
          event({
            kind: 'artifact-update',
            taskId: `t-${mode}`,
            contextId: 'ctx-1',
            artifact: { artifactId: 'a-1', parts: [{ kind: 'text', text: `chunk ${i++} ${'x'.repeat(2_000)}` }] },
            append: i > 1,
            lastChunk: false,
          });
        },
        mode === 'sse-trickle' ? 100 : 2,
      );
      timers.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        timers.delete(timer);
        open.delete(res);
        streams.closed += 1;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  remote.base = base;
  remote.close = () =>
    new Promise<void>((resolve) => {
      for (const timer of timers) clearInterval(timer);
      for (const res of open) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return remote;
}

function registryYaml(base: string): string {
  const entry = (mode: Mode, extra: string) => `  - name: ${mode}
    card_url: ${base}/${mode}/.well-known/agent-card.json
    description: Hostile (${mode}).
    effect: read_only
    poll_interval_s: 0.05
${extra}`;
  return `agents:
${entry('bomb', '    max_wait_s: 10\n')}${entry('card-bomb', '    max_wait_s: 10\n')}${entry(
    'sse-flood',
    `    max_wait_s: 10\n    max_response_bytes: ${SSE_CAP}\n    max_reply_chars: 1000000\n`,
  )}${entry('sse-flood-chars', `    max_wait_s: 10\n    max_reply_chars: ${REPLY_CHARS}\n`)}${entry(
    'sse-trickle',
    '    max_wait_s: 1.5\n    timeouts: { connect: 1, read: 1, total: 1 }\n',
  )}${entry('never', '    max_wait_s: 1\n')}${entry('never-cancel', '    max_wait_s: 10\n')}`;
}

let scratch: string;
let remote: HostileRemote;
let gw: FaultGateway;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'airlock-faults-remote-'));
  remote = await startHostileRemote();
  await writeFile(join(scratch, 'upstreams.yaml'), registryYaml(remote.base));
  const agents: Record<string, string> = { echo: '{ type: echo }' };
  for (const mode of MODES) agents[mode] = `{ type: a2a, agent: ${mode} }`;
  const upstreams = `upstreams: { registry: ${JSON.stringify(join(scratch, 'upstreams.yaml'))}, pins: ${JSON.stringify(join(scratch, 'pins.json'))} }`;
  gw = await startFaultGateway(gatewayYaml(agents, upstreams));
});

after(async () => {
  await gw.close();
  await remote.close();
  await rm(scratch, { recursive: true, force: true });
});

async function send(slug: string, text: string, configuration?: Record<string, unknown>) {
  const started = Date.now();
  const reply = await rpc(
    gw.agent(slug),
    'SendMessage',
    { message: v10Message(text), ...(configuration !== undefined && { configuration }) },
    v1,
  );
  return { ...reply, ms: Date.now() - started };
}

function statusText(task: any): string {
  return task.status.message?.parts?.map((part: any) => part.text ?? '').join('') ?? '';
}

async function stillServing(): Promise<void> {
  const { body } = await send('echo', 'still there?');
  assert.equal(body.result.task.status.state, 'TASK_STATE_COMPLETED');
}

describe('fault: the remote agent sends a compression bomb', () => {
  it(
    'a gzip reply to SendMessage is refused undecoded: the inbound task fails with a clear reason',
    BOUNDED,
    async () => {
      const rssBefore = process.memoryUsage().rss;
      const { status, body, ms } = await send('bomb', 'hello');
      assert.equal(status, 200);
      const task = body.result.task;
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assert.equal(
        statusText(task),
        'The upstream agent could not be used (invalid_response): the remote sent a compressed response, which Airlock never decodes.',
      );
      const logged = gw.logger.events('upstream_failed').filter((line) => line.agent === 'bomb');
      assert.deepEqual(
        logged.map((line) => line.type),
        ['invalid_response'],
      );
      assert.ok(ms < 5_000, `answered in ${ms} ms`);
      // Nothing near 1 GiB was inflated (nor even all of the ~1 MB read).
      const grown = process.memoryUsage().rss - rssBefore;
      assert.ok(grown < 256 * 1024 * 1024, `rss grew by ${grown} bytes`);
      assert.deepEqual(remote.methods('bomb'), ['SendMessage']);
      await stillServing();
    },
  );

  it('an agent card served as a gzip bomb is refused: nothing is sent to the remote', BOUNDED, async () => {
    const { body, ms } = await send('card-bomb', 'hello');
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_FAILED');
    assert.equal(
      statusText(task),
      "The upstream agent could not be used (card_invalid): the remote agent's card is invalid or unusable.",
    );
    assert.ok(ms < 5_000, `answered in ${ms} ms`);
    assert.deepEqual(remote.methods('card-bomb'), [], 'no call without a trusted card');
    await stillServing();
  });

  it("through the outbound client (`airlock call`'s path) the bomb is an invalid_response error", BOUNDED, async () => {
    const transport = createGuardedClient({});
    try {
      const registry = parseRegistry(
        `agents:
  - name: bomb
    card_url: ${remote.base}/bomb/.well-known/agent-card.json
    description: Hostile.
    effect: read_only
    max_wait_s: 5
`,
        {},
      );
      const client = createClient({ registry, transport, cards: stubCards(`${remote.base}/bomb/rpc`, '1.0') });
      const started = Date.now();
      const result = await client.send({ agent: 'bomb', message: 'hello' });
      assert.equal(result.status, 'error', JSON.stringify(result));
      assert.equal(result.error_type, 'invalid_response');
      assert.match(JSON.stringify(result), /compressed response/);
      assert.ok(Date.now() - started < 5_000);
    } finally {
      await transport.close();
    }
  });
});

describe('fault: the remote agent streams forever', () => {
  it(
    'an endless SSE flood is cut at max_response_bytes; the stream is closed and the upstream task canceled',
    BOUNDED,
    async () => {
      const opened = remote.streams.opened;
      const { body, ms } = await send('sse-flood', 'hello');
      const task = body.result.task;
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assert.match(statusText(task), /^The upstream agent could not be used \(response_too_large\): /);
      assert.ok(ms < 5_000, `answered in ${ms} ms`);
      assert.equal(remote.streams.opened, opened + 1);
      await eventually(
        () => remote.streams.closed === remote.streams.opened,
        3_000,
        'the remote to see its stream closed',
      );
      await eventually(() => remote.methods('sse-flood').includes('CancelTask'), 3_000, 'the upstream cancel');
      await stillServing();
    },
  );

  it(
    'an endless SSE flood is cut at max_reply_chars first: COMPLETED with what came and a note; upstream canceled',
    BOUNDED,
    async () => {
      const { body, ms } = await send('sse-flood-chars', 'hello');
      const task = body.result.task;
      assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
      assert.ok(ms < 5_000, `answered in ${ms} ms`);
      const text = JSON.stringify(task.artifacts);
      assert.match(text, /chunk 0 /);
      assert.match(text, /\[Airlock: the upstream agent's reply was cut at 10000 characters\]/);
      assert.ok(text.length < REPLY_CHARS + 1_000, `kept ${text.length} chars`);
      await eventually(
        () => remote.streams.closed === remote.streams.opened,
        3_000,
        'the remote to see its stream closed',
      );
      await eventually(() => remote.methods('sse-flood-chars').includes('CancelTask'), 3_000, 'the upstream cancel');
      await stillServing();
    },
  );

  it(
    'an endless SSE stream of keep-alives is cut at max_wait_s (the stream total; timeouts.total does not apply)',
    BOUNDED,
    async () => {
      const { body, ms } = await send('sse-trickle', 'hello');
      const task = body.result.task;
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assert.equal(
        statusText(task),
        'The upstream agent did not finish within max_wait_s (1.5 s) (request_timeout); Airlock asked it to cancel the task.',
      );
      assert.ok(ms >= 1_400 && ms < 4_500, `answered in ${ms} ms (max_wait_s 1.5)`);
      await eventually(
        () => remote.streams.closed === remote.streams.opened,
        3_000,
        'the remote to see its stream closed',
      );
      await eventually(() => remote.methods('sse-trickle').includes('CancelTask'), 3_000, 'the upstream cancel');
      await stillServing();
    },
  );
});

describe('fault: the remote task never terminates', () => {
  it('the relay stops polling at max_wait_s with a clear failure and cancels the upstream task', BOUNDED, async () => {
    const { body, ms } = await send('never', 'hello');
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_FAILED');
    assert.equal(
      statusText(task),
      'The upstream agent did not finish within max_wait_s (1 s) (request_timeout); Airlock asked it to cancel the task.',
    );
    assert.ok(ms >= 1_000 && ms < 3_500, `answered in ${ms} ms (max_wait_s 1)`);
    await eventually(() => remote.methods('never').includes('CancelTask'), 3_000, 'the upstream cancel');
    const methods = remote.methods('never');
    assert.equal(methods[0], 'SendMessage');
    assert.ok(methods.filter((method) => method === 'GetTask').length >= 5, 'it was polled meanwhile');
    assert.equal(remote.seen.find((row) => row.mode === 'never' && row.method === 'CancelTask')?.id, 't-never');
    // Polling stopped with the deadline.
    const polls = methods.length;
    await sleep(300);
    assert.equal(remote.methods('never').length, polls);
  });

  it("the caller's CancelTask cancels the inbound task at once and reaches the remote task", BOUNDED, async () => {
    const { body } = await send('never-cancel', 'hello', { returnImmediately: true });
    const id = body.result.task.id;
    await eventually(() => remote.methods('never-cancel').includes('GetTask'), 3_000, 'the relay to poll');
    const started = Date.now();
    const canceled = await rpc(gw.agent('never-cancel'), 'CancelTask', { id }, v1);
    assert.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED');
    assert.ok(Date.now() - started < 1_000, `canceled in ${Date.now() - started} ms`);
    await eventually(() => remote.methods('never-cancel').includes('CancelTask'), 3_000, 'the upstream cancel');
    assert.equal(
      remote.seen.find((row) => row.mode === 'never-cancel' && row.method === 'CancelTask')?.id,
      't-never-cancel',
    );
    const polls = remote.methods('never-cancel').length;
    await sleep(300);
    assert.equal(remote.methods('never-cancel').length, polls, 'polling stopped');
    const got = await rpc(gw.agent('never-cancel'), 'GetTask', { id }, v1);
    assert.equal(got.body.result.status.state, 'TASK_STATE_CANCELED');
  });
});
