/**
 * How the console shows an approval's untrusted strings, in a real browser: the caller's request
 * line (`ApprovalView.request`) and the sign-in page's token hints go into the page as text,
 * never as markup, under the console's CSP; a card without a request shows no request row.
 *
 * The routes are the real ones (`createApprovalRoutes`) on a loopback `node:http` server; the
 * desk is a small in-test implementation that serves fixed views (as in
 * src/server/approvals/routes.test.ts), so the rendering is tested whatever the approval
 * records fill in. Nothing at the HTTP level is mocked.
 *
 * Needs /usr/bin/chromium. Skipped (with the reason) only outside CI when it is missing.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  levelView,
  type ApprovalDesk,
  type ApprovalView,
  type PersonAuditRow,
  type PersonTaskView,
  type RemoteQuestionView,
} from '../src/approvals/desk.js';
import { argsView } from '../src/approvals/display.js';
import { hashToken } from '../src/config/tokens.js';
import { createApprovalRoutes, type ApprovalRoutes } from '../src/server/approvals/routes.js';
import { PersonAuthenticator } from '../src/server/auth/persons.js';
import { AuthFailureLimiter } from '../src/server/limits/address-failures.js';
import { silentLogger } from '../src/server/log.js';
import { chromiumSkip, launchChromium } from './helpers/chromium.js';

const ALICE_TOKEN = 'alice-person-token-for-request-0123456789ab';
const ALICE = 'person:alice';
/** Markup a caller might send: it must arrive as these characters, and build no element. */
const HOSTILE_REQUEST = `Please <img src=x id="injected"> <b id="bold">ship</b> it & "now"`;
const HOSTILE_HINT = 'in /srv/<i id="hint-markup">keys</i>/alice-token';

function view(actionId: string, taskId: string, request: string | undefined): ApprovalView {
  const args = { subject: 'hi' };
  const now = Date.now();
  return {
    actionId,
    taskId,
    contextId: `ctx-${taskId}`,
    agent: 'ops',
    client: 'bot',
    ...(request !== undefined && { request }),
    tool: 'send_email',
    args,
    ...argsView(args),
    level: 'L4',
    ...levelView('L4'),
    status: 'pending',
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 600_000).toISOString(),
  };
}

/** Serves fixed views to alice; decisions are not part of this test. */
class FixedDesk implements ApprovalDesk {
  constructor(readonly views: ApprovalView[]) {}
  async pending(userId: string): Promise<ApprovalView[]> {
    return userId === ALICE ? this.views : [];
  }
  async get(userId: string, actionId: string): Promise<ApprovalView | undefined> {
    return (await this.pending(userId)).find((entry) => entry.actionId === actionId);
  }
  async decide(): Promise<ApprovalView> {
    throw new Error('not decided in this test');
  }
  async recentTasks(): Promise<PersonTaskView[]> {
    return [];
  }
  async auditTail(): Promise<PersonAuditRow[]> {
    return [];
  }
  async questions(): Promise<RemoteQuestionView[]> {
    return [];
  }
  async answer(): Promise<RemoteQuestionView> {
    throw new Error('no questions in this test');
  }
}

describe('console: untrusted strings on cards and the sign-in page', { skip: chromiumSkip }, () => {
  let server: Server;
  let routes: ApprovalRoutes;
  let url: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    routes = createApprovalRoutes({
      desk: new FixedDesk([
        view('act-with-request', 'task-with-request', HOSTILE_REQUEST),
        view('act-without-request', 'task-without-request', undefined),
        view('act-empty-request', 'task-empty-request', ''),
      ]),
      persons: new PersonAuthenticator([{ id: 'alice', tokenDigest: hashToken(ALICE_TOKEN) }]),
      console: true,
      tokenHints: [{ person: 'alice', where: HOSTILE_HINT }],
      secureCookies: false,
      authFailures: new AuthFailureLimiter({ limit: 5 }),
      onAuthFailed: () => undefined,
      logger: silentLogger,
      maxBodyBytes: 65_536,
      bodyTimeoutMs: 2_000,
    });
    server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      // The gate resolves the client address before the routes; this test plays a remote one.
      const remote =
        req.headers['x-test-remote'] === undefined ? req.socket.remoteAddress : String(req.headers['x-test-remote']);
      void Promise.resolve(routes.handle(req, res, path, remote)).then((handled) => {
        if (!handled) res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    context = await browser.newContext();
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text()))
        problems.push(`console: ${message.text()}`);
    });
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    routes?.close();
    await new Promise<void>((resolve) => {
      if (server === undefined) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  });

  it('shows the token hint as text on the sign-in page', async () => {
    await page.goto(`${url}/console`);
    const hints = page.getByRole('list', { name: /Where each person's token is kept/ });
    await hints.getByText(`alice: token ${HOSTILE_HINT}`, { exact: true }).waitFor();
    assert.equal(await page.locator('#hint-markup').count(), 0, 'the hint builds no element');
  });

  it('serves the hints without a credential, as JSON under the console headers, GET only', async () => {
    const reply = await fetch(`${url}/console/api/sign-in`);
    assert.equal(reply.status, 200);
    assert.match(reply.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.equal(reply.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await reply.json(), { tokenHints: [{ person: 'alice', where: HOSTILE_HINT }] });
    assert.equal((await fetch(`${url}/console/api/sign-in`, { method: 'POST' })).status, 405);
  });

  it('tells only a person on this machine where tokens are: a remote address gets no hints', async () => {
    const reply = await fetch(`${url}/console/api/sign-in`, { headers: { 'x-test-remote': '203.0.113.7' } });
    assert.equal(reply.status, 200);
    assert.deepEqual(await reply.json(), { tokenHints: [] });
  });

  it('shows task id, agent, caller and the request line as text; no request row without one', async () => {
    await page.getByLabel('Your token or JWT').fill(ALICE_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Signed in as person:alice', { exact: true }).waitFor();

    const withRequest = page.locator('li[data-action-id="act-with-request"]');
    await withRequest.waitFor();
    const terms = await withRequest.locator('dt').allTextContents();
    const values = await withRequest.locator('dd').allTextContents();
    const facts = terms.map((term, i) => [term, values[i]]);
    assert.deepEqual(facts.slice(0, 4), [
      ['Task', 'task-with-request'],
      ['Agent', 'ops'],
      ['Caller', 'bot'],
      ['Request', HOSTILE_REQUEST],
    ]);
    assert.equal(await page.locator('#injected, #bold').count(), 0, 'the request builds no element');

    for (const id of ['act-without-request', 'act-empty-request']) {
      const item = page.locator(`li[data-action-id="${id}"]`);
      await item.waitFor();
      const terms = await item.locator('dt').allInnerTexts();
      assert.deepEqual(terms.slice(0, 3), ['Task', 'Agent', 'Caller']);
      assert.ok(!terms.includes('Request'), `${id}: no request row`);
    }
    assert.deepEqual(problems, [], 'no script errors or CSP violations');
  });
});
