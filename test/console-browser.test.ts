/**
 * The web console end to end, in a real browser: a real gateway on loopback, the official
 * `@a2a-js/sdk` client as the agent caller (`bot`), and Chromium (driven by playwright-core) as
 * the person (`alice`) who signs in with her own token and approves the guarded action. The
 * page runs under the console's strict CSP; any CSP violation or script error fails the test.
 *
 * The sign-in page says where each person's token is kept (never the token); an approval card
 * names the task, agent and caller; an irreversible (L4) approval takes a second click.
 *
 * Needs /usr/bin/chromium. Skipped (with the reason) only outside CI when it is missing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Task } from '@a2a-js/sdk';
import type { Browser } from 'playwright-core';
import { chromiumSkip, launchChromium } from './helpers/chromium.js';
import type { AgentBackend, AgentEvent, AgentTurn } from '../src/agents/backend.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { asTask, sdkClient, sendRequest, stateOf, userMessage } from './helpers/sdk-caller.js';

const BOT_TOKEN = 'bot-client-token-for-console-0123456789abcdef';
const ALICE_TOKEN = 'alice-person-token-for-console-0123456789abcd';
const API_KEY = 'sk-live-console-test-0123456789abcdefghijkl';
const SCREENSHOT = fileURLToPath(new URL('../test-artifacts/console-approval.png', import.meta.url));

const TOKEN_DIR = mkdtempSync(join(tmpdir(), 'airlock-console-'));
/** Bob's token is generated at load into this file: the sign-in page names the file. */
const BOB_TOKEN_FILE = join(TOKEN_DIR, 'bob-token');

const YAML = `
server: { host: 127.0.0.1, port: 0 }
approvals:
  console: true
  people:
    - { id: alice, token: { env: ALICE_TOKEN } }
    - { id: bob, token: { file: "${BOB_TOKEN_FILE}", generate: true } }
agents:
  - slug: ops
    name: Ops
    description: Acts on your behalf.
    skills: [{ id: ops, name: Ops, description: Sends mail, tags: [demo] }]
    backend: { type: echo }
    actions: { maxLevel: L4 }
clients:
  - { id: bot, token: "\${BOT_TOKEN}", agents: [ops], owner: alice }
`;

/** Proposes send_email (L4) on a fresh turn; sends it once the turn carries the approval. */
class MailBackend implements AgentBackend {
  readonly kind = 'test-mail';
  turns = 0;
  approved = 0;
  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    this.turns++;
    if (turn.approvedAction !== undefined) {
      this.approved++;
      yield { type: 'completed', text: 'sent' };
      return;
    }
    yield {
      type: 'propose-action',
      action: { tool: 'send_email', args: { to: 'bob@example.com', subject: 'hi', apiKey: API_KEY }, level: 'L4' },
    };
  }
}

const skip = chromiumSkip;

describe('web console in a real browser', { skip }, () => {
  let gw: TestGateway;
  let browser: Browser;
  const mail = new MailBackend();

  before(async () => {
    gw = await startGateway(YAML, { env: { BOT_TOKEN, ALICE_TOKEN, API_KEY }, backends: { ops: mail } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    rmSync(TOKEN_DIR, { recursive: true, force: true });
  });

  it(
    'alice signs in, sees the redacted action, approves it; the SDK caller then completes',
    { timeout: 60_000 },
    async () => {
      // The agent caller proposes; the task parks with the action's data part.
      const client = await sdkClient(gw.url, 'ops', BOT_TOKEN);
      const parked = asTask(await client.sendMessage(sendRequest(userMessage('mail bob hello'))));
      assert.equal(stateOf(parked), 'TASK_STATE_INPUT_REQUIRED');
      const action = actionPartOf(parked);
      assert.match(action.action_id, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(action.tool, 'send_email');

      // A reply before the decision is not a decision: still parked, nothing ran.
      const premature = asTask(
        await client.sendMessage(
          sendRequest(userMessage('yes, do it', { taskId: parked.id, contextId: parked.contextId })),
        ),
      );
      assert.equal(stateOf(premature), 'TASK_STATE_INPUT_REQUIRED');
      assert.equal(mail.approved, 0);

      // The person, in the browser.
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      page.on('response', (reply) => {
        const path = new URL(reply.url()).pathname;
        // 401s are expected: the first session check, the refused sign-in, the final check.
        if (reply.status() >= 400 && reply.status() !== 401) problems.push(`HTTP ${reply.status()} for ${path}`);
      });
      page.on('console', (message) => {
        if (message.type() === 'error' && !/Failed to load resource/.test(message.text()))
          problems.push(`console: ${message.text()}`);
      });

      const response = await page.goto(`${gw.url}/console`);
      assert.equal(response?.status(), 200);
      assert.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'/);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();

      // Where each person's token is kept, as the startup banner says it; never a token.
      const hints = page.getByRole('list', { name: /Where each person's token is kept/ });
      await hints.getByText('alice: token in $ALICE_TOKEN', { exact: true }).waitFor();
      await hints.getByText(`bob: token generated into ${BOB_TOKEN_FILE}`, { exact: true }).waitFor();
      const bobToken = readFileSync(BOB_TOKEN_FILE, 'utf8').trim();
      const signInHtml = await page.content();
      assert.ok(!signInHtml.includes(ALICE_TOKEN), "alice's token is not on the sign-in page");
      assert.ok(!signInHtml.includes(bobToken), "bob's token is not on the sign-in page");

      // A wrong token is refused with a message in the live region; no session.
      await page.getByLabel('Your token or JWT').fill('not-a-person-token-0123456789abcdef');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('status').filter({ hasText: 'not accepted' }).waitFor();

      await page.getByLabel('Your token or JWT').fill(ALICE_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in as person:alice', { exact: true }).waitFor();
      assert.equal(await page.getByLabel('Your token or JWT').inputValue(), '', 'the token is not left in the form');
      const cookies = await context.cookies();
      const session = cookies.find((cookie) => cookie.name === 'airlock_console');
      assert.ok(session, 'a session cookie');
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Strict');

      await page.getByRole('heading', { name: 'Pending approvals' }).waitFor();
      const item = page.locator(`li[data-action-id="${action.action_id}"]`);
      await item.waitFor();
      await item.getByRole('heading', { name: 'send_email' }).waitFor();
      const itemText = await item.innerText();
      // Which task, which agent, which caller.
      assert.match(itemText, new RegExp(`Task\\s+${parked.id}`));
      assert.match(itemText, /Agent\s+ops/);
      assert.match(itemText, /Caller\s+bot/);
      // The first line of what the caller asked, as the gateway recorded it (scrubbed).
      assert.match(itemText, /Request\s+mail bob hello/);
      assert.match(itemText, /L4/);
      assert.match(itemText, /irreversible_acting/);
      assert.match(itemText, /"subject": "hi"/);
      // The task shows up in "Recent tasks".
      await page.locator('#tasks td', { hasText: parked.id }).first().waitFor();

      const pageText = await page.locator('body').innerText();
      assert.ok(!pageText.includes('bob@example.com'), 'the email address is not on the page');
      assert.ok(!pageText.includes('sk-'), 'the API key is not on the page');
      assert.ok(!(await page.content()).includes(API_KEY), 'nor anywhere in the DOM');

      mkdirSync(fileURLToPath(new URL('../test-artifacts/', import.meta.url)), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });

      // L4: the first click only asks for confirmation; nothing is decided yet.
      const approve = item.locator('button[data-decision="approve"]');
      assert.equal(await approve.getAttribute('data-action-id'), action.action_id);
      assert.equal(await approve.innerText(), 'Approve');
      await approve.click();
      await item.getByRole('button', { name: /^Confirm: approve send_email \(irreversible\)/ }).waitFor();
      assert.equal(await pendingStatus(gw.url, action.action_id), 'pending', 'one click sends nothing');
      assert.equal(mail.approved, 0);
      await approve.click();
      await item.waitFor({ state: 'detached' });
      await page.getByRole('status').filter({ hasText: 'Approved send_email.' }).waitFor();
      await page.getByText('No actions are waiting for your decision.').waitFor();

      // The caller goes on: the approved action is taken, once.
      const done = asTask(
        await client.sendMessage(sendRequest(userMessage('go on', { taskId: parked.id, contextId: parked.contextId }))),
      );
      assert.equal(stateOf(done), 'TASK_STATE_COMPLETED');
      assert.ok(textsOf(done).includes('sent'), JSON.stringify(done));
      assert.equal(mail.approved, 1);

      // Sign out ends the session in the page and on the server.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      const after = await page.evaluate(async () => (await fetch('/console/api/overview')).status);
      assert.equal(after, 401);

      assert.deepEqual(problems, [], 'no script errors or CSP violations');
      await context.close();
    },
  );
});

// ---- helpers ----------------------------------------------------------------------------------

/** The action's status as alice's own API call sees it (`pending` until decided). */
async function pendingStatus(base: string, actionId: string): Promise<string> {
  const reply = await fetch(`${base}/approvals/${actionId}`, { headers: { authorization: `Bearer ${ALICE_TOKEN}` } });
  assert.equal(reply.status, 200);
  const body = (await reply.json()) as { approval?: { status?: unknown } };
  return String(body.approval?.status);
}

/** Every text of the task: its status message and its artifacts. */
function textsOf(task: Task): string[] {
  const parts = [
    ...(task.status?.message?.parts ?? []),
    ...(task.artifacts ?? []).flatMap((artifact) => artifact.parts),
  ];
  return parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
}

function actionPartOf(task: Task): { action_id: string; tool: string; level: string } {
  for (const part of task.status?.message?.parts ?? []) {
    if (part.content?.$case === 'data') return part.content.value as never;
  }
  assert.fail(`no data part in ${JSON.stringify(task.status?.message)}`);
}
