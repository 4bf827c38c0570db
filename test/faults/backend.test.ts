/**
 * Fault catalogue, agent backends: a real gateway on loopback (backends made as `airlock serve`
 * makes them), driven over JSON-RPC, with backends that crash, hang, answer garbage or never
 * stop. Every fault ends the task; none takes the gateway down; replies stay valid JSON-RPC.
 *
 * | Fault                                              | Expected behaviour                                                                                 | Asserted in                          |
 * | -------------------------------------------------- | -------------------------------------------------------------------------------------------------- | ------------------------------------ |
 * | command killed by SIGSEGV mid-reply                | task FAILED "the command was killed by signal SIGSEGV"; partial text kept; no secret; pid gone     | crashing › killed by a signal        |
 * | command exits 7 mid-reply                          | task FAILED "the command exited with code 7"; no secret in the reply; pid gone; next request OK    | crashing › exits non-zero            |
 * | module backend throws mid-stream                   | stream ends FAILED "The agent failed to process the message."; detail only in agent_backend_failed | crashing › module throws             |
 * | command hangs (sleep, with a grandchild)           | FAILED "did not finish within 0.5 s" within timeout + 3 s; whole process group gone                | hanging › timeoutMs                  |
 * | code backend never yields (honours the signal)     | CancelTask → CANCELED in < 1 s; the backend's signal aborted                                       | hanging › never yields               |
 * | code backend never yields and ignores the signal   | CancelTask → CANCELED in < 1 s all the same; GetTask stays CANCELED                                | hanging › ignores its signal         |
 * | command writes invalid UTF-8 / random binary       | COMPLETED; bad bytes become U+FFFD; valid JSON; next request OK                                    | garbage › binary                     |
 * | command floods junk `@airlock` control lines       | COMPLETED with the plain text only; unknown verbs logged (verb only when well-formed)              | garbage › control-line flood         |
 * | module yields malformed events (bad text/type/null)| FAILED "the agent's module yielded an invalid event (…)"                                           | garbage › module malformed           |
 * | code backend (no module checker) yields junk event | no crash; valid JSON-RPC; FAILED "The agent ended its turn without a result." (junk text coerced)    | garbage › code backend               |
 * | command writes forever (`yes`)                     | cut at maxOutputBytes: FAILED "wrote more than 65536 bytes"; artifact ≤ cap; pid gone (both paths) | streaming forever                    |
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AgentBackend, AgentEvent, AgentTurn } from '../../src/agents/backend.js';
import { eventually, rpc, rpcStream, rpcText, v10Message } from '../helpers/gateway.js';
import { SECRET_DETAIL } from './fixtures/misbehaving-agent.js';
import { BOUNDED, gatewayYaml, isRunning, pidFrom, startFaultGateway, type FaultGateway } from './support.js';

const v1 = { version: '1.0' };
/** In the programs' environment and stderr: must never reach a caller. */
const SECRET = 'sk-live-COMMAND-SECRET-0123456789abcdef';
const OUTPUT_CAP = 65_536;

let scratch: string;
let gw: FaultGateway;
/** Turns the code backends saw, and whether each one's signal was aborted. */
const seenSignals: AbortSignal[] = [];

/** A code backend that never yields and returns once its turn is aborted. */
const neverYields: AgentBackend = {
  kind: 'never',
  async *run(turn: AgentTurn): AsyncGenerator<AgentEvent> {
    seenSignals.push(turn.signal);
    await new Promise<void>((resolve) => turn.signal.addEventListener('abort', () => resolve(), { once: true }));
    // Reached only once aborted: the gateway no longer reads the turn.
    yield { type: 'failed', reason: 'unreachable' };
  },
};

/** A code backend that never yields and never looks at its signal (it ends after 30 s at most). */
const deaf: AgentBackend = {
  kind: 'deaf',
  async *run(): AsyncGenerator<AgentEvent> {
    await new Promise((resolve) => setTimeout(resolve, 30_000).unref());
    yield { type: 'completed' };
  },
};

/** A code backend given in code (no module checker between it and the task service). */
const junk: AgentBackend = {
  kind: 'junk',
  async *run(): AsyncGenerator<AgentEvent> {
    yield { type: 'text', text: { not: 'a string' } } as unknown as AgentEvent;
    yield { type: 'no-such-event' } as unknown as AgentEvent;
  },
};

function sh(script: string, pidFile: string, extra = ''): string {
  return `{ type: command, command: sh, args: [-c, ${JSON.stringify(script)}, ${JSON.stringify(pidFile)}], env: { PATH: /usr/bin:/bin, API_KEY: ${JSON.stringify(SECRET)} }${extra} }`;
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'airlock-faults-backend-'));
  const pid = (name: string) => join(scratch, `${name}.pid`);
  const yaml = gatewayYaml({
    echo: '{ type: echo }',
    'crash-signal': sh('echo $$ > "$0"; echo part; echo "leaked $API_KEY" >&2; kill -SEGV $$', pid('crash-signal')),
    'crash-exit': sh('echo $$ > "$0"; echo partial; echo "leaked $API_KEY" >&2; exit 7', pid('crash-exit')),
    hang: `{ type: command, command: test/fixtures/command/hang.sh, args: [${JSON.stringify(scratch)}], timeoutMs: 500 }`,
    binary: sh(
      'echo $$ > "$0"; printf "ok \\377\\376\\300 end\\n"; head -c 100000 /dev/urandom | tr "@" "#"',
      pid('binary'),
    ),
    flood: sh(
      'echo $$ > "$0"; i=0; while [ $i -lt 2000 ]; do printf "@airlock \\377junk-%s $API_KEY\\n@airlock frobnicate x\\n" $i; i=$((i+1)); done; echo plain text',
      pid('flood'),
    ),
    forever: sh('echo $$ > "$0"; exec yes all work and no play', pid('forever'), `, maxOutputBytes: ${OUTPUT_CAP}`),
    'forever-stream': sh(
      'echo $$ > "$0"; exec yes all work and no play',
      pid('forever-stream'),
      `, maxOutputBytes: ${OUTPUT_CAP}`,
    ),
    module: '{ type: module, module: test/faults/fixtures/misbehaving-agent.ts }',
    never: '{ type: echo }',
    deaf: '{ type: echo }',
    junk: '{ type: echo }',
  });
  gw = await startFaultGateway(yaml, { given: { never: neverYields, deaf, junk } });
});

after(async () => {
  await gw.close();
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

function artifactText(task: any): string {
  return (task.artifacts ?? [])
    .flatMap((artifact: any) => artifact.parts)
    .map((part: any) => part.text ?? '')
    .join('');
}

/** The gateway still serves: an echo round trip completes. */
async function stillServing(): Promise<void> {
  const { body } = await send('echo', 'still there?');
  assert.equal(body.result.task.status.state, 'TASK_STATE_COMPLETED');
}

describe('fault: the agent backend crashes', () => {
  it('a command killed by a signal mid-reply fails the task, secret-free, and leaves no process', BOUNDED, async () => {
    const { status, body } = await send('crash-signal', 'hello');
    assert.equal(status, 200);
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_FAILED');
    assert.equal(statusText(task), 'the command was killed by signal SIGSEGV');
    assert.equal(artifactText(task), 'part\n', 'what it wrote before the crash is kept');
    assert.ok(!JSON.stringify(body).includes(SECRET), 'no secret in the reply');
    assert.ok(!JSON.stringify(body).includes('leaked'), 'no stderr in the reply');
    const pid = await pidFrom(join(scratch, 'crash-signal.pid'));
    await eventually(() => !isRunning(pid), 3_000, 'the crashed program to be gone');
    const finished = gw.logger.events('command_finished').find((line) => line.taskId === task.id);
    assert.equal(finished?.end, 'signaled');
    assert.equal(finished?.signal, 'SIGSEGV');
    await stillServing();
  });

  it(
    'a command that exits non-zero mid-reply fails the task with its exit code, and the gateway serves on',
    BOUNDED,
    async () => {
      const { body } = await send('crash-exit', 'hello');
      const task = body.result.task;
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assert.equal(statusText(task), 'the command exited with code 7');
      assert.equal(artifactText(task), 'partial\n');
      assert.ok(!JSON.stringify(body).includes(SECRET));
      // Its stderr (with the secret it printed) is for the operator's log only.
      const stderr = gw.logger.events('command_stderr').find((line) => line.taskId === task.id);
      assert.match(String(stderr?.text), /leaked/);
      const pid = await pidFrom(join(scratch, 'crash-exit.pid'));
      await eventually(() => !isRunning(pid), 3_000, 'the program to be gone');
      await stillServing();
    },
  );

  it('a module backend that throws mid-stream fails the task; the detail is only in the log', BOUNDED, async () => {
    const { status, events } = await rpcStream(
      gw.agent('module'),
      'SendStreamingMessage',
      {
        message: v10Message('throw now'),
      },
      v1,
    );
    assert.equal(status, 200);
    const results = events.map((event) => event.result);
    assert.ok(events.every((event) => event.jsonrpc === '2.0' && event.error === undefined));
    assert.ok(results.some((result) => result.artifactUpdate?.artifact.parts[0].text === 'half a reply'));
    const last = results.at(-1).statusUpdate;
    assert.equal(last.status.state, 'TASK_STATE_FAILED');
    assert.equal(last.status.message.parts[0].text, 'The agent failed to process the message.');
    assert.ok(!JSON.stringify(events).includes(SECRET_DETAIL), 'the error detail never reaches the caller');
    const logged = gw.logger.events('agent_backend_failed').find((line) => line.taskId === last.taskId);
    assert.match(String(logged?.error), new RegExp(SECRET_DETAIL));
    assert.equal(logged?.level, 'error');
    await stillServing();
  });
});

describe('fault: the agent backend hangs', () => {
  it(
    'a command past its timeoutMs fails with a timeout reason and its whole process group is killed',
    BOUNDED,
    async () => {
      const { body, ms } = await send('hang', 'wait');
      const task = body.result.task;
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assert.equal(statusText(task), 'the command did not finish within 0.5 s');
      assert.ok(ms >= 500 && ms < 3_500, `answered after ${ms} ms (timeout 500 ms)`);
      const leader = await pidFrom(join(scratch, 'leader'));
      const grandchild = await pidFrom(join(scratch, 'grandchild'));
      await eventually(() => !isRunning(leader) && !isRunning(grandchild), 3_000, 'the process group to be gone');
      await stillServing();
    },
  );

  it('a code backend that never yields is canceled promptly by CancelTask', BOUNDED, async () => {
    const { body } = await send('never', 'wait', { returnImmediately: true });
    const id = body.result.task.id;
    assert.equal(body.result.task.status.state, 'TASK_STATE_SUBMITTED', 'nothing came from the backend yet');
    const started = Date.now();
    const canceled = await rpc(gw.agent('never'), 'CancelTask', { id }, v1);
    assert.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED');
    assert.ok(Date.now() - started < 1_000, `canceled in ${Date.now() - started} ms`);
    await eventually(() => seenSignals.at(-1)?.aborted === true, 1_000, "the backend's signal to abort");
  });

  it('a code backend that never yields and ignores its signal is canceled promptly all the same', BOUNDED, async () => {
    const { body } = await send('deaf', 'wait', { returnImmediately: true });
    const id = body.result.task.id;
    const started = Date.now();
    const canceled = await rpc(gw.agent('deaf'), 'CancelTask', { id }, v1);
    assert.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED');
    assert.ok(Date.now() - started < 1_000, `canceled in ${Date.now() - started} ms`);
    const got = await rpc(gw.agent('deaf'), 'GetTask', { id }, v1);
    assert.equal(got.body.result.status.state, 'TASK_STATE_CANCELED');
    await stillServing();
  });
});

describe('fault: the agent backend returns garbage', () => {
  it('invalid UTF-8 and random binary become U+FFFD in a valid JSON reply', BOUNDED, async () => {
    const { status, text } = await rpcText(gw.agent('binary'), 'SendMessage', { message: v10Message('x') }, v1);
    assert.equal(status, 200);
    const body = JSON.parse(text);
    assert.equal(body.jsonrpc, '2.0');
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    const reply = artifactText(task);
    assert.ok(reply.startsWith('ok \uFFFD'), reply.slice(0, 20));
    assert.ok(reply.includes(' end\n'));
    assert.ok(
      !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(reply),
      'no lone surrogates',
    );
    const pid = await pidFrom(join(scratch, 'binary.pid'));
    await eventually(() => !isRunning(pid), 3_000, 'the program to be gone');
    await stillServing();
  });

  it('a flood of junk control lines is dropped: the task completes with the plain text only', BOUNDED, async () => {
    const { body } = await send('flood', 'x');
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(artifactText(task), 'plain text\n');
    assert.ok(!JSON.stringify(body).includes(SECRET));
    const unknown = gw.logger.events('command_unknown_control_line').filter((line) => line.taskId === task.id);
    assert.equal(unknown.length, 4_000, 'each unknown control line is logged');
    // The verb is logged only when it looks like one: never the junk (nor the secret after it).
    assert.equal(unknown.filter((line) => line.verb === 'frobnicate').length, 2_000);
    assert.ok(!JSON.stringify(unknown).includes(SECRET));
    await stillServing();
  });

  for (const [word, problem] of [
    ['garbage', /text/],
    ['bogus', /explode|type/],
    ['null', /./],
  ] as const) {
    it(
      `a module yielding a malformed event (${word}) fails the task with an "invalid event" reason`,
      BOUNDED,
      async () => {
        const { status, body } = await send('module', `${word} please`);
        assert.equal(status, 200);
        const task = body.result.task;
        assert.equal(task.status.state, 'TASK_STATE_FAILED');
        const reason = statusText(task);
        assert.match(reason, /^the agent's module yielded an invalid event \(/);
        assert.match(reason, problem);
      },
    );
  }

  it(
    'a code backend yielding malformed events does not crash the gateway: valid JSON-RPC, task failed',
    BOUNDED,
    async () => {
      const { status, text } = await rpcText(gw.agent('junk'), 'SendMessage', { message: v10Message('x') }, v1);
      assert.equal(status, 200);
      const body = JSON.parse(text);
      assert.equal(body.jsonrpc, '2.0');
      const task = body.result.task;
      // Backends given in code are not checked like modules: the unknown event is ignored and
      // the turn ends without an outcome; the non-string text is coerced, still a string.
      assert.equal(task.status.state, 'TASK_STATE_FAILED', text);
      assert.equal(statusText(task), 'The agent ended its turn without a result.');
      assert.ok(
        task.artifacts.every((artifact: any) => artifact.parts.every((part: any) => typeof part.text === 'string')),
      );
      await stillServing();
    },
  );
});

describe('fault: the agent backend streams forever', () => {
  it(
    '`yes` is cut at maxOutputBytes: the task fails, the artifact stays under the cap, the process is gone',
    BOUNDED,
    async () => {
      const { body, ms } = await send('forever', 'go');
      const task = body.result.task;
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assert.equal(statusText(task), `the command wrote more than ${OUTPUT_CAP} bytes`);
      const kept = Buffer.byteLength(artifactText(task));
      assert.ok(kept <= OUTPUT_CAP, `kept ${kept} bytes`);
      assert.ok(ms < 5_000, `ended after ${ms} ms`);
      const pid = await pidFrom(join(scratch, 'forever.pid'));
      await eventually(() => !isRunning(pid), 3_000, 'yes to be killed');
      await stillServing();
    },
  );

  it('over SendStreamingMessage the stream ends too, with a FAILED status as its last event', BOUNDED, async () => {
    const { events } = await rpcStream(
      gw.agent('forever-stream'),
      'SendStreamingMessage',
      {
        message: v10Message('go'),
      },
      v1,
    );
    const results = events.map((event) => event.result);
    const chunks = results.filter((result) => result.artifactUpdate !== undefined);
    const streamed = chunks.map((result) => result.artifactUpdate.artifact.parts[0].text ?? '').join('');
    assert.ok(Buffer.byteLength(streamed) <= OUTPUT_CAP, `streamed ${Buffer.byteLength(streamed)} bytes`);
    const last = results.at(-1).statusUpdate;
    assert.equal(last.status.state, 'TASK_STATE_FAILED');
    assert.equal(last.status.message.parts[0].text, `the command wrote more than ${OUTPUT_CAP} bytes`);
    const pid = await pidFrom(join(scratch, 'forever-stream.pid'));
    await eventually(() => !isRunning(pid), 3_000, 'yes to be killed');
  });
});
