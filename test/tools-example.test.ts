/**
 * examples/tools.yaml as shipped, with a scripted OpenAI-compatible model on loopback in place of
 * Ollama and its state moved to a temporary folder: the caller (the `@a2a-js/sdk` client) asks
 * for a note, the write (L4) waits, alice signs in to the console in headless Chromium and
 * approves it, and the gateway resumes the task itself: the file holds exactly what she saw and
 * the task completes with the model's reply.
 *
 * Needs /usr/bin/chromium. Skipped (with the reason) only outside CI when it is missing.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Task } from '@a2a-js/sdk';
import type { Browser } from 'playwright-core';
import { chromiumSkip, launchChromium } from './helpers/chromium.js';
import { parseConfig } from '../src/config/load.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';
import { startToolServers } from '../src/server/tools.js';
import type { ToolHub } from '../src/tools/index.js';
import { rpc } from './helpers/gateway.js';
import { startScriptedModel, type ScriptedModel } from './helpers/scripted-model.js';
import { asTask, sdkClient, sendRequest, stateOf, userMessage } from './helpers/sdk-caller.js';

const DEMO = 'demo-client-token-0123456789abcdef012345';
const ALICE = 'alice-person-token-0123456789abcdef01234';
const skip = chromiumSkip;

describe('examples/tools.yaml, the person approving in the console', { skip }, () => {
  let dir: string;
  let model: ScriptedModel;
  let hub: ToolHub | undefined;
  let gateway: Gateway;
  let url: string;
  let browser: Browser;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-tools-example-'));
    await mkdir(join(dir, 'sandbox'));
    model = await startScriptedModel((request) => {
      const messages = request.body.messages as { role: string }[];
      return messages.at(-1)?.role === 'tool'
        ? { text: 'Done: todo.txt says buy milk.' }
        : {
            toolCalls: [
              { name: 'files__write_file', arguments: { path: join(dir, 'sandbox', 'todo.txt'), content: 'buy milk' } },
            ],
          };
    });
    const shipped = await readFile('examples/tools.yaml', 'utf8');
    const yaml = shipped
      .replace(/^ {2}port: \d+$/m, '  port: 0')
      .replace('baseUrl: http://127.0.0.1:11434/v1', `baseUrl: ${model.baseUrl}`)
      .replaceAll('.airlock/tools/', `${dir}/`);
    assert.ok(yaml.includes(model.baseUrl) && !yaml.includes('.airlock/tools'), 'the example was rewritten');
    const config = parseConfig(yaml, { AIRLOCK_DEMO_TOKEN: DEMO, AIRLOCK_ALICE_TOKEN: ALICE });
    hub = await startToolServers(config, silentLogger, process.env);
    gateway = createGateway(config, { logger: silentLogger, ...(hub !== undefined && { tools: hub }) });
    url = await gateway.listen();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
    await hub?.close();
    await model?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'the write waits for alice, she approves in the console, the gateway writes it and completes',
    { timeout: 60_000 },
    async () => {
      const client = await sdkClient(url, 'notes', DEMO);
      const parked = asTask(
        await client.sendMessage(sendRequest(userMessage('Write a note called todo.txt that says: buy milk'))),
      );
      assert.equal(stateOf(parked), 'TASK_STATE_INPUT_REQUIRED');
      const action = actionOf(parked);
      assert.equal(action.tool, 'files__write_file');
      await assert.rejects(readFile(join(dir, 'sandbox', 'todo.txt')), 'nothing is written before the approval');

      // approve_url is a person's page: the console, opened on this action.
      assert.equal(action.approve_url, `${url}/console#action-${action.action_id}`);
      const page = await (await browser.newContext()).newPage();
      await page.goto(action.approve_url);
      await page.getByLabel('Your token or JWT').fill(ALICE);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const item = page.locator(`li.linked[data-action-id="${action.action_id}"]`);
      await item.waitFor();
      const shown = await item.innerText();
      assert.match(shown, /files__write_file/);
      assert.match(shown, /L4/);
      assert.match(shown, /buy milk/, 'alice sees what will be written');
      await mkdir(new URL('../test-artifacts/', import.meta.url), { recursive: true });
      await page.screenshot({ path: fileURLToPath(new URL('../test-artifacts/tools-approval.png', import.meta.url)) });
      // Writing is irreversible (L4): approve, then confirm.
      await page.getByRole('button', { name: /^Approve files__write_file/ }).click();
      await page.getByRole('button', { name: /^Confirm: approve files__write_file/ }).click();
      await item.waitFor({ state: 'detached' });

      // No message from the caller: the gateway resumes the task on the decision.
      let done: any;
      for (let attempt = 0; attempt < 200; attempt++) {
        done = (await rpc(`${url}/a2a/notes`, 'GetTask', { id: parked.id }, { token: DEMO, version: '1.0' })).body
          .result;
        if (done?.status?.state === 'TASK_STATE_COMPLETED') break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.equal(done?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(done));
      assert.match(JSON.stringify(done.artifacts), /Done: todo.txt says buy milk/);
      assert.equal(await readFile(join(dir, 'sandbox', 'todo.txt'), 'utf8'), 'buy milk');
    },
  );
});

function actionOf(task: Task): { action_id: string; tool: string; approve_url: string } {
  for (const part of task.status?.message?.parts ?? []) {
    if (part.content?.$case === 'data') return part.content.value as never;
  }
  assert.fail(`no action in ${JSON.stringify(task.status?.message)}`);
}
