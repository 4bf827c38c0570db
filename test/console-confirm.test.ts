/**
 * The console's second click for irreversible actions, in a real browser against a real
 * gateway: an L4 approval is sent only by a second, separate click on the armed button; a
 * double-click, a click elsewhere, Escape or the timeout leave the action pending. L3 approvals
 * and denials stay one click. "Pending" is read from the person's own `/approvals` API.
 *
 * Needs /usr/bin/chromium. Skipped (with the reason) only outside CI when it is missing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import type { AgentBackend, AgentEvent, AgentTurn } from '../src/agents/backend.js';
import { chromiumSkip, launchChromium } from './helpers/chromium.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { asTask, sdkClient, sendRequest, stateOf, userMessage } from './helpers/sdk-caller.js';

const BOT_TOKEN = 'bot-client-token-for-confirm-0123456789abcdef';
const ALICE_TOKEN = 'alice-person-token-for-confirm-0123456789abc';

const YAML = `
server: { host: 127.0.0.1, port: 0 }
approvals:
  console: true
  people:
    - { id: alice, token: { env: ALICE_TOKEN } }
agents:
  - slug: ops
    name: Ops
    description: Acts on your behalf.
    skills: [{ id: ops, name: Ops, description: Labels and sends mail, tags: [demo] }]
    backend: { type: echo }
    actions: { maxLevel: L4 }
clients:
  - { id: bot, token: "\${BOT_TOKEN}", agents: [ops], owner: alice }
`;

/** "label …" proposes add_label (L3, reversible); anything else send_email (L4). */
class OpsBackend implements AgentBackend {
  readonly kind = 'test-ops';
  approved = 0;
  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    if (turn.approvedAction !== undefined) {
      this.approved++;
      yield { type: 'completed', text: 'done' };
      return;
    }
    const text = turn.message.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('');
    yield text.startsWith('label')
      ? { type: 'propose-action', action: { tool: 'add_label', args: { label: 'later' }, level: 'L3' } }
      : { type: 'propose-action', action: { tool: 'send_email', args: { subject: 'hi' }, level: 'L4' } };
  }
}

describe('console: irreversible approvals take a second click', { skip: chromiumSkip }, () => {
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  const ops = new OpsBackend();

  before(async () => {
    gw = await startGateway(YAML, { env: { BOT_TOKEN, ALICE_TOKEN }, backends: { ops } });
    browser = await launchChromium();
    context = await browser.newContext();
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text()))
        problems.push(`console: ${message.text()}`);
    });
    await page.goto(`${gw.url}/console`);
    await page.getByLabel('Your token or JWT').fill(ALICE_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Signed in as person:alice', { exact: true }).waitFor();
  });
  after(async () => {
    assert.deepEqual(problems, [], 'no script errors or CSP violations');
    await context?.close();
    await browser?.close();
    await gw?.close();
  });

  /** Parks a new task on a proposal and returns its card and action id. */
  async function park(text: string): Promise<{ item: Locator; actionId: string }> {
    const client = await sdkClient(gw.url, 'ops', BOT_TOKEN);
    const parked = asTask(await client.sendMessage(sendRequest(userMessage(text))));
    assert.equal(stateOf(parked), 'TASK_STATE_INPUT_REQUIRED');
    const part = (parked.status?.message?.parts ?? []).find((p) => p.content?.$case === 'data');
    assert.ok(part?.content?.$case === 'data');
    const actionId = String((part.content.value as { action_id?: unknown }).action_id);
    const item = page.locator(`li[data-action-id="${actionId}"]`);
    await item.waitFor();
    return { item, actionId };
  }

  /** The action's status as alice's own API call sees it. */
  async function statusOf(actionId: string): Promise<string> {
    const reply = await fetch(`${gw.url}/approvals/${actionId}`, {
      headers: { authorization: `Bearer ${ALICE_TOKEN}` },
    });
    const body = (await reply.json()) as { approval?: { status?: unknown } };
    return reply.status === 200 ? String(body.approval?.status) : `HTTP ${reply.status}`;
  }

  const approveButton = (item: Locator): Locator => item.locator('button[data-decision="approve"]');
  /** A button's text; fails fast when the card is gone (approved when it should not have been). */
  const labelOf = (button: Locator): Promise<string> => button.innerText({ timeout: 5_000 });

  it('an L3 approve takes one click', { timeout: 30_000 }, async () => {
    const before = ops.approved;
    const { item, actionId } = await park('label it for later');
    assert.equal(await labelOf(approveButton(item)), 'Approve');
    await approveButton(item).click();
    await item.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Approved add_label.' }).waitFor();
    assert.notEqual(await statusOf(actionId), 'pending');
    await waitFor(() => ops.approved === before + 1, 'the gateway resumed the approved L3 action');
  });

  it('an L4 deny takes one click', { timeout: 30_000 }, async () => {
    const { item, actionId } = await park('mail bob');
    await item.locator('button[data-decision="deny"]').click();
    await item.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Denied send_email.' }).waitFor();
    assert.notEqual(await statusOf(actionId), 'pending');
  });

  it('an L4 approve: a double-click, a click elsewhere or Escape sends nothing', { timeout: 30_000 }, async () => {
    const before = ops.approved;
    const { item, actionId } = await park('mail carol');
    const approve = approveButton(item);

    // A double-click is one gesture: it arms the button, it does not confirm.
    await approve.dblclick();
    assert.equal(await labelOf(approve), 'Confirm: approve send_email (irreversible)');
    await page.getByRole('status').filter({ hasText: 'send_email cannot be undone' }).waitFor();
    assert.equal(await statusOf(actionId), 'pending');

    // A click elsewhere puts it back; the next click arms again rather than approving.
    await page.getByRole('heading', { name: 'Pending approvals' }).click();
    assert.equal(await labelOf(approve), 'Approve');
    await approve.click();
    assert.equal(await labelOf(approve), 'Confirm: approve send_email (irreversible)');
    assert.equal(await statusOf(actionId), 'pending');

    // So does Escape.
    await page.keyboard.press('Escape');
    assert.equal(await labelOf(approve), 'Approve');
    assert.equal(await statusOf(actionId), 'pending');
    assert.equal(ops.approved, before);

    // Two separate clicks approve it.
    await approve.click();
    await approve.click();
    await item.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Approved send_email.' }).waitFor();
    await waitFor(() => ops.approved === before + 1, 'the gateway resumed the approved L4 action');
  });

  it('an armed L4 approve times out and sends nothing', { timeout: 30_000 }, async () => {
    const { item, actionId } = await park('mail dave');
    const approve = approveButton(item);
    await approve.click();
    assert.equal(await labelOf(approve), 'Confirm: approve send_email (irreversible)');
    await page.getByRole('status').filter({ hasText: 'Not approved: the confirmation timed out.' }).waitFor({
      timeout: 10_000,
    });
    assert.equal(await labelOf(approve), 'Approve');
    // After the timeout one click arms again; it does not approve.
    await approve.click();
    assert.equal(await labelOf(approve), 'Confirm: approve send_email (irreversible)');
    assert.equal(await statusOf(actionId), 'pending');
    await item.locator('button[data-decision="deny"]').click();
    await item.waitFor({ state: 'detached' });
  });
});

/** Polls `done` until it holds (the gateway resumes the task asynchronously). */
async function waitFor(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(done(), what);
}
