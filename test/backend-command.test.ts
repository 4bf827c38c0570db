/**
 * The command backend end to end: real programs (the shell scripts in test/fixtures/command/)
 * behind a real gateway on loopback, in both dialects. Each agent's backend is built from the
 * parsed YAML, so the loader's defaults are the ones in use.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';

import type { AgentBackend } from '../src/agents/backend.js';
import { createCommandBackend } from '../src/agents/command/index.js';
import { collect, fakeTurn } from './helpers/agent-turn.js';
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

const FIXTURES = 'test/fixtures/command';

let scratch: string;
let askState: string;
let hangPids: string;
let gw: TestGateway;
let backends: Record<string, AgentBackend>;

function agentYaml(slug: string, backend: string): string {
  return `
  - slug: ${slug}
    name: ${slug}
    description: A program run once per turn.
    skills: [{ id: ${slug}, name: ${slug}, description: Runs a script, tags: [test] }]
    backend: ${backend}`;
}

function gatewayYaml(): string {
  const slugs = ['cmd', 'cmd-chunks', 'cmd-fail', 'cmd-ask', 'cmd-hang'];
  return `
server: { host: 127.0.0.1, port: 0, defaultAgent: cmd }
agents:${[
    agentYaml('cmd', `{ type: command, command: ${FIXTURES}/upper.sh }`),
    agentYaml('cmd-chunks', `{ type: command, command: ${FIXTURES}/chunks.sh }`),
    agentYaml('cmd-fail', `{ type: command, command: ${FIXTURES}/exit.sh, args: ['3'] }`),
    agentYaml('cmd-ask', `{ type: command, command: ${FIXTURES}/ask.sh, args: [${JSON.stringify(askState)}] }`),
    agentYaml('cmd-hang', `{ type: command, command: ${FIXTURES}/hang.sh, args: [${JSON.stringify(hangPids)}] }`),
  ].join('')}
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [${slugs.join(', ')}] }
`;
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'airlock-command-e2e-'));
  askState = await mkdtemp(join(scratch, 'ask-'));
  hangPids = await mkdtemp(join(scratch, 'hang-'));
  const yaml = gatewayYaml();
  const config = parseConfig(yaml, { TOKEN_A, TOKEN_B, TOKEN_C });
  backends = {};
  for (const agent of config.agents) {
    if (agent.backend.type === 'command') {
      backends[agent.slug] = createCommandBackend(agent.backend, { agent: agent.slug });
    }
  }
  gw = await startGateway(yaml, { backends });
});

after(async () => {
  await gw.close();
  await Promise.all(Object.values(backends).map(async (backend) => backend.close?.()));
  await rm(scratch, { recursive: true, force: true });
});

const url = (slug: string): string => `${gw.url}/a2a/${slug}`;

/** True while `pid` runs; a zombie (left where init does not reap orphans) counts as gone. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).charAt(0) !== 'Z';
  } catch {
    return true;
  }
}

/** The pids hang.sh wrote for its current run, once both files are complete. */
async function hangingPids(): Promise<{ leader: number; grandchild: number }> {
  const read = (name: string): number => Number(readFileSync(join(hangPids, name), 'utf8').trim());
  await eventually(
    () => {
      try {
        return read('leader') > 0 && read('grandchild') > 0;
      } catch {
        return false;
      }
    },
    5000,
    'the hanging script to start',
  );
  return { leader: read('leader'), grandchild: read('grandchild') };
}

function joinedText(artifactEvents: any[], field: 'artifactUpdate' | 'artifact'): string {
  return artifactEvents
    .map((event) => (field === 'artifactUpdate' ? event.artifactUpdate.artifact : event.artifact))
    .flatMap((artifact) => artifact.parts)
    .map((part) => part.text)
    .join('');
}

describe('command backend through the gateway, A2A v1.0', () => {
  beforeEach(async () => {
    await rm(join(hangPids, 'leader'), { force: true });
    await rm(join(hangPids, 'grandchild'), { force: true });
  });

  it('SendMessage completes with stdout as the reply artifact', async () => {
    const { body } = await rpc(url('cmd'), 'SendMessage', { message: v10Message('hello gateway') }, { version: '1.0' });
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(task.artifacts.length, 1);
    assert.equal(task.artifacts[0].parts[0].text, 'HELLO GATEWAY');
  });

  it('SendStreamingMessage streams the chunks as the program writes them', async () => {
    const { events } = await rpcStream(
      url('cmd-chunks'),
      'SendStreamingMessage',
      { message: v10Message('go') },
      { version: '1.0' },
    );
    const results = events.map((event) => event.result);
    const chunks = results.filter((result) => result.artifactUpdate);
    assert.ok(chunks.length >= 3, `got ${chunks.length} chunks`);
    assert.equal(joinedText(chunks, 'artifactUpdate'), 'one two three');
    assert.equal(chunks.at(-1).artifactUpdate.lastChunk, true);
    assert.equal(results.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED');
  });

  it('a failing program fails the task with its exit code in the status message', async () => {
    const { body } = await rpc(url('cmd-fail'), 'SendMessage', { message: v10Message('x') }, { version: '1.0' });
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_FAILED');
    assert.match(task.status.message.parts[0].text, /exited with code 3/);
    assert.equal(task.artifacts[0].parts[0].text, 'partial reply\n');
  });

  it('input-required, then the answer on the same task completes it', async () => {
    const first = await rpc(url('cmd-ask'), 'SendMessage', { message: v10Message('a poem') }, { version: '1.0' });
    const task = first.body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(task.status.message.parts[0].text, 'What is your name?');
    const second = await rpc(
      url('cmd-ask'),
      'SendMessage',
      { message: v10Message('Ada', { taskId: task.id, contextId: task.contextId }) },
      { version: '1.0' },
    );
    const done = second.body.result.task;
    assert.equal(done.id, task.id);
    assert.equal(done.status.state, 'TASK_STATE_COMPLETED');
    assert.match(JSON.stringify(done.artifacts), /Hello, Ada! You first said: a poem/);
  });

  it('CancelTask on a hanging program cancels the task and ends the process group', async () => {
    const { body } = await rpc(
      url('cmd-hang'),
      'SendMessage',
      { message: v10Message('wait'), configuration: { returnImmediately: true } },
      { version: '1.0' },
    );
    const id = body.result.task.id;
    const { leader, grandchild } = await hangingPids();
    assert.ok(isRunning(leader) && isRunning(grandchild));
    const canceled = await rpc(url('cmd-hang'), 'CancelTask', { id }, { version: '1.0' });
    assert.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED');
    await eventually(() => !isRunning(leader) && !isRunning(grandchild), 3000, 'the process group to be gone');
    const got = await rpc(url('cmd-hang'), 'GetTask', { id }, { version: '1.0' });
    assert.equal(got.body.result.status.state, 'TASK_STATE_CANCELED');
  });
});

describe('command backend through the gateway, A2A v0.3', () => {
  beforeEach(async () => {
    await rm(join(hangPids, 'leader'), { force: true });
    await rm(join(hangPids, 'grandchild'), { force: true });
  });

  it('message/send completes with stdout as the reply artifact', async () => {
    const { body } = await rpc(url('cmd'), 'message/send', { message: v03Message('quiet words') });
    assert.equal(body.result.status.state, 'completed');
    assert.equal(body.result.artifacts[0].parts[0].kind, 'text');
    assert.equal(body.result.artifacts[0].parts[0].text, 'QUIET WORDS');
  });

  it('message/stream streams the chunks and ends with final: true', async () => {
    const { events } = await rpcStream(url('cmd-chunks'), 'message/stream', { message: v03Message('go') });
    const results = events.map((event) => event.result);
    const chunks = results.filter((result) => result.kind === 'artifact-update');
    assert.ok(chunks.length >= 3, `got ${chunks.length} chunks`);
    assert.equal(joinedText(chunks, 'artifact'), 'one two three');
    const last = results.at(-1);
    assert.equal(last.status.state, 'completed');
    assert.equal(last.final, true);
  });

  it('a failing program fails the task with its exit code in the status message', async () => {
    const { body } = await rpc(url('cmd-fail'), 'message/send', { message: v03Message('x') });
    assert.equal(body.result.status.state, 'failed');
    assert.match(body.result.status.message.parts[0].text, /exited with code 3/);
  });

  it('input-required, then the answer on the same task completes it', async () => {
    const first = await rpc(url('cmd-ask'), 'message/send', { message: v03Message('a song') });
    const task = first.body.result;
    assert.equal(task.status.state, 'input-required');
    const second = await rpc(url('cmd-ask'), 'message/send', {
      message: v03Message('Grace', { taskId: task.id, contextId: task.contextId }),
    });
    assert.equal(second.body.result.status.state, 'completed');
    assert.match(JSON.stringify(second.body.result.artifacts), /Hello, Grace! You first said: a song/);
  });

  it('tasks/cancel on a hanging program cancels the task and ends the process group', async () => {
    const { body } = await rpc(url('cmd-hang'), 'message/send', {
      message: v03Message('wait'),
      configuration: { blocking: false },
    });
    const id = body.result.id;
    const { leader, grandchild } = await hangingPids();
    const canceled = await rpc(url('cmd-hang'), 'tasks/cancel', { id });
    assert.equal(canceled.body.result.status.state, 'canceled');
    await eventually(() => !isRunning(leader) && !isRunning(grandchild), 3000, 'the process group to be gone');
  });
});

describe('examples/command.yaml', () => {
  it('loads, and its word-count agent counts, asks when there is nothing to count, and resumes', async () => {
    const config = parseConfig(readFileSync('examples/command.yaml', 'utf8'), {
      AIRLOCK_COMMAND_TOKEN: 'example-token-0123456789abcdef0123456789',
    });
    const agent = config.agents.find((entry) => entry.slug === 'wordcount');
    assert.equal(agent?.backend.type, 'command');
    if (agent?.backend.type !== 'command') return;
    const backend = createCommandBackend(agent.backend, { agent: agent.slug });
    const counted = await collect(backend, fakeTurn({ text: 'the quick brown fox\njumps' }));
    assert.deepEqual(counted[0], { type: 'working', text: 'counting' });
    assert.equal(counted.map((event) => (event.type === 'text' ? event.text : '')).join(''), 'words: 5, lines: 2\n');
    assert.deepEqual(counted.at(-1), { type: 'completed' });
    assert.deepEqual(await collect(backend, fakeTurn({ text: '   ' })), [
      { type: 'input-required', question: 'What text should I count the words of?' },
    ]);
    const resumed = await collect(backend, fakeTurn({ text: 'two words', resumed: true }));
    assert.deepEqual(resumed.at(-1), { type: 'completed' });
  });
});
