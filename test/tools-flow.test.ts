/**
 * The whole tool flow, end to end (issue 17): an `@a2a-js/sdk` client asks a published agent
 * backed by a model (a scripted OpenAI-compatible server on loopback) that has the official
 * filesystem MCP server on a sandbox folder. Reading is L1 and runs at once; writing is L4: the
 * task parks with the action, a premature "go on" from the caller decides nothing, the person
 * approves over `/approvals`, and the gateway resumes the turn itself: the file is written with
 * exactly the approved arguments, once, and the task completes with the model's reply. A denial
 * (with `actions.onDenied: continue`) is handed to the model as a refused tool result and
 * nothing is written; with the default it fails the task.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Task } from '@a2a-js/sdk';
import { MemoryAuditSink } from '../src/audit/index.js';
import { parseConfig } from '../src/config/load.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';
import { startToolServers } from '../src/server/tools.js';
import type { ToolHub } from '../src/tools/index.js';
import { rpc } from './helpers/gateway.js';
import { startScriptedModel, type ScriptedModel } from './helpers/scripted-model.js';
import { asTask, sdkClient, sendRequest, stateOf, userMessage } from './helpers/sdk-caller.js';

const require = createRequire(import.meta.url);
const FILESYSTEM_BIN = join(
  dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist',
  'index.js',
);
const BOT_TOKEN = 'bot-client-token-0123456789abcdef0123456789';
const ALICE_TOKEN = 'alice-person-token-0123456789abcdef012345678';
const BOUNDED = { timeout: 30_000 };

let dir: string;
let sandbox: string;
let model: ScriptedModel;
const gateways: { gateway: Gateway; hub: ToolHub | undefined }[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-tools-flow-'));
  sandbox = await realpath(await mkdtemp(join(dir, 'sandbox-')));
  // The model asks to write the file the caller names; once a tool result is back it answers
  // with what happened (so the reply shows whether the write ran or was refused).
  model = await startScriptedModel((request) => {
    const messages = request.body.messages as { role: string; content?: string }[];
    const last = messages.at(-1);
    if (last?.role === 'tool') {
      return {
        text: /denied|refused/i.test(last.content ?? '')
          ? 'The person said no; nothing was written.'
          : 'Wrote the note.',
      };
    }
    const file = /file (\S+)/.exec(last?.content ?? '')?.[1] ?? 'note.txt';
    return {
      toolCalls: [{ name: 'files__write_file', arguments: { path: join(sandbox, file), content: 'approved words' } }],
    };
  });
});
after(async () => {
  for (const { gateway, hub } of gateways) {
    await gateway.close();
    await hub?.close();
  }
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

async function start(onDenied: 'fail' | 'continue'): Promise<{ url: string; audit: MemoryAuditSink }> {
  const yaml = `
server: { host: 127.0.0.1, port: 0 }
approvals:
  people:
    - { id: alice, token: "\${ALICE_TOKEN}" }
tools:
  pins: ${join(dir, `pins-${onDenied}.json`)}
  servers:
    - name: files
      stdio: { command: "${process.execPath}", args: ["${FILESYSTEM_BIN}", "${sandbox}"] }
      tools:
        read_text_file: { level: L1 }
        write_file: { level: L4, description: Write a file in the sandbox. }
agents:
  - slug: files
    name: Files
    description: Keeps notes in a folder.
    skills: [{ id: notes, name: Notes, description: Writes notes }]
    backend: { type: openai, baseUrl: "${model.baseUrl}", model: test-model }
    allowTools: true
    tools: { allow: [files.read_text_file, files.write_file] }
    actions: { maxLevel: L4, onDenied: ${onDenied} }
clients:
  - { id: bot, token: "\${BOT_TOKEN}", agents: [files], owner: alice }
`;
  const config = parseConfig(yaml, { BOT_TOKEN, ALICE_TOKEN });
  const audit = new MemoryAuditSink();
  const hub = await startToolServers(config, silentLogger, process.env);
  const gateway = createGateway(config, {
    logger: silentLogger,
    auditSink: audit,
    ...(hub !== undefined && { tools: hub }),
  });
  gateways.push({ gateway, hub });
  return { url: await gateway.listen(), audit };
}

function actionOf(task: Task): { action_id: string; tool: string; level: string; args: unknown } {
  for (const part of task.status?.message?.parts ?? []) {
    if (part.content?.$case === 'data') return part.content.value as never;
  }
  assert.fail(`no action in ${JSON.stringify(task.status?.message)}`);
}

async function decide(url: string, actionId: string, decision: 'approve' | 'deny'): Promise<number> {
  const response = await fetch(`${url}/approvals/${actionId}/${decision}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_TOKEN}` },
  });
  await response.arrayBuffer();
  return response.status;
}

/** GetTask until the task leaves `working` (the gateway resumed it on its own). */
async function settled(url: string, taskId: string): Promise<any> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const read = await rpc(`${url}/a2a/files`, 'GetTask', { id: taskId }, { token: BOT_TOKEN, version: '1.0' });
    const state = read.body.result?.status?.state;
    if (state !== 'TASK_STATE_WORKING' && state !== 'TASK_STATE_INPUT_REQUIRED') return read.body.result;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail('the task never moved on');
}

function replyOf(task: any): string {
  return JSON.stringify(task.artifacts ?? []) + JSON.stringify(task.status?.message ?? {});
}

describe('a model with MCP tools under the ladder (issue 17)', () => {
  it(
    'the write parks; the caller’s reply decides nothing; the person approves; the gateway resumes and the file is written once',
    BOUNDED,
    async () => {
      const { url, audit } = await start('continue');
      const client = await sdkClient(url, 'files', BOT_TOKEN);
      const parked = asTask(await client.sendMessage(sendRequest(userMessage('please write the file approved.txt'))));
      assert.equal(stateOf(parked), 'TASK_STATE_INPUT_REQUIRED');
      const action = actionOf(parked);
      assert.equal(action.tool, 'files__write_file');
      assert.equal(action.level, 'L4');
      await assert.rejects(readFile(join(sandbox, 'approved.txt')), 'nothing written before the decision');

      // "Go on" from the caller is not a decision: still parked, nothing written.
      const premature = asTask(
        await client.sendMessage(
          sendRequest(userMessage('yes, go ahead', { taskId: parked.id, contextId: parked.contextId })),
        ),
      );
      assert.equal(stateOf(premature), 'TASK_STATE_INPUT_REQUIRED');
      await assert.rejects(readFile(join(sandbox, 'approved.txt')));

      assert.equal(await decide(url, action.action_id, 'approve'), 200);
      const done = await settled(url, parked.id);
      assert.equal(done.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(done));
      assert.match(replyOf(done), /Wrote the note/);
      assert.equal(await readFile(join(sandbox, 'approved.txt'), 'utf8'), 'approved words');

      // The caller's own message after the decision gets the finished task, and runs nothing more.
      const after = asTask(
        await client.sendMessage(
          sendRequest(userMessage('and now?', { taskId: parked.id, contextId: parked.contextId })),
        ),
      );
      assert.equal(stateOf(after), 'TASK_STATE_COMPLETED');
      const called = audit.events.filter((event) => event.type === 'a2a.tool.called');
      assert.equal(called.length, 1, 'the approved write ran exactly once');
      assert.equal((called[0] as { actionId?: string }).actionId, action.action_id);
      for (const type of [
        'a2a.tool.parked',
        'a2a.approval.requested',
        'a2a.approval.decided',
        'a2a.approval.consumed',
      ]) {
        assert.ok(
          audit.events.some((event) => event.type === type),
          type,
        );
      }
      assert.ok(!JSON.stringify(audit.events).includes('approved words'), 'no argument reaches the audit trail');
    },
  );

  it('denied with onDenied: continue, the model is told and replies; nothing is written', BOUNDED, async () => {
    const { url } = await start('continue');
    const client = await sdkClient(url, 'files', BOT_TOKEN);
    const parked = asTask(await client.sendMessage(sendRequest(userMessage('please write the file denied.txt'))));
    assert.equal(stateOf(parked), 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(await decide(url, actionOf(parked).action_id, 'deny'), 200);
    const done = await settled(url, parked.id);
    assert.equal(done.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(done));
    assert.match(replyOf(done), /nothing was written/);
    await assert.rejects(readFile(join(sandbox, 'denied.txt')));
  });

  it(
    'denied with the default (onDenied: fail), the task fails at once, saying so; nothing is written',
    BOUNDED,
    async () => {
      const { url } = await start('fail');
      const client = await sdkClient(url, 'files', BOT_TOKEN);
      const parked = asTask(await client.sendMessage(sendRequest(userMessage('please write the file failed.txt'))));
      assert.equal(await decide(url, actionOf(parked).action_id, 'deny'), 200);
      const done = await settled(url, parked.id);
      assert.equal(done.status.state, 'TASK_STATE_FAILED', JSON.stringify(done));
      assert.match(JSON.stringify(done.status.message), /denied/);
      await assert.rejects(readFile(join(sandbox, 'failed.txt')));
    },
  );
});
