/**
 * Issue 16, second hardening round — what a person decides on, and who is a person.
 *
 * 1. The approval screen cannot show other arguments than those that run: a backend proposes an
 *    action whose arguments hide bidi and invisible characters (`"⁦‮9876543210‬⁩"` draws as
 *    `"0123456789"`); the `/approvals` JSON, the console page (read from a real Chromium) and the
 *    CLI show them escaped, with a warning, and what the person reads decodes (JSON.parse) to
 *    exactly the arguments the backend receives once approved.
 * 2. A person is not just a `sub`: a machine JWT of another client carrying `sub: alice` (no
 *    person marker, or another `azp`) cannot decide alice's action (403 `not_a_person`, audited
 *    `a2a.approval.decision_refused`); alice's own person token can.
 *
 * Real gateways on loopback, the official `@a2a-js/sdk` client as the caller, no HTTP mocks.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import type { Browser } from 'playwright-core';
import { chromiumSkip, launchChromium } from './helpers/chromium.js';
import type { AgentBackend, AgentEvent, AgentTurn } from '../src/agents/backend.js';
import { hasHiddenCharacters } from '../src/approvals/display.js';
import { MemoryAuditSink } from '../src/audit/memory.js';
import { approvalsDecideCommand, approvalsListCommand } from '../src/cli/approvals.js';
import { captureIO } from './helpers/command-io.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { asTask, sdkClient, sendRequest, stateOf, userMessage } from './helpers/sdk-caller.js';

const BOT_TOKEN = 'bot-client-token-hardening2-approvals-0123456789';
const ALICE_TOKEN = 'alice-person-token-hardening2-approvals-012345';
const BOUNDED = { timeout: 60_000 };

/** Reads as "0123456789" on a screen that renders the controls; the text is "9876543210". */
const TRICK = '\u2066\u202E9876543210\u202C\u2069';
const TRICK_ARGS = {
  account: TRICK,
  'memo\u200B': 'pay\u00A0now\uFEFF',
  nested: { list: ['\u200Fx', 'plain', { 'k\u2028': '\u00AD' }] },
  path: 'C:\\tmp\\u202E literally',
};

/** Proposes `transfer` (L4) with hidden characters in its arguments; records what it is handed back. */
class TransferBackend implements AgentBackend {
  readonly kind = 'test-transfer';
  readonly received: unknown[] = [];
  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    if (turn.approvedAction !== undefined) {
      this.received.push(turn.approvedAction.args);
      yield { type: 'completed', text: 'transferred' };
      return;
    }
    yield { type: 'propose-action', action: { tool: 'transfer', args: TRICK_ARGS, level: 'L4' } };
  }
}

const YAML = `
server: { host: 127.0.0.1, port: 0 }
approvals:
  console: true
  people:
    - { id: alice, token: "\${ALICE_TOKEN}" }
agents:
  - slug: bank
    name: Bank
    description: Moves money.
    skills: [{ id: bank, name: Bank, description: Transfers, tags: [demo] }]
    backend: { type: echo }
    actions: { maxLevel: L4 }
clients:
  - { id: bot, token: "\${BOT_TOKEN}", agents: [bank], owner: alice }
`;

const skipBrowser = chromiumSkip;

/** Every character of `text` a person could not see (layout newlines and table tabs aside). */
function invisible(text: string): string[] {
  return [...text].filter((char) => char !== '\n' && char !== '\t' && hasHiddenCharacters(char));
}

describe('approvals: hidden characters are shown escaped, and what is shown is what runs', () => {
  let gw: TestGateway;
  let browser: Browser | undefined;
  const backend = new TransferBackend();

  before(async () => {
    gw = await startGateway(YAML, { env: { BOT_TOKEN, ALICE_TOKEN }, backends: { bank: backend } });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  async function park(): Promise<{
    client: Awaited<ReturnType<typeof sdkClient>>;
    taskId: string;
    contextId: string;
    actionId: string;
  }> {
    const client = await sdkClient(gw.url, 'bank', BOT_TOKEN);
    const parked = asTask(await client.sendMessage(sendRequest(userMessage('pay the invoice'))));
    assert.equal(stateOf(parked), 'TASK_STATE_INPUT_REQUIRED');
    const data = parked.status?.message?.parts.find((part) => part.content?.$case === 'data');
    const actionId = (data?.content as { value: { action_id: string } } | undefined)?.value.action_id;
    assert.ok(actionId, JSON.stringify(parked.status?.message));
    return { client, taskId: parked.id, contextId: parked.contextId, actionId };
  }

  async function resume(parked: Awaited<ReturnType<typeof park>>): Promise<void> {
    const done = asTask(
      await parked.client.sendMessage(
        sendRequest(userMessage('go on', { taskId: parked.taskId, contextId: parked.contextId })),
      ),
    );
    assert.equal(stateOf(done), 'TASK_STATE_COMPLETED');
  }

  it('GET /approvals carries argsDisplay (escaped, lossless), hiddenCharacters and a warning', BOUNDED, async () => {
    const parked = await park();
    const response = await fetch(`${gw.url}/approvals/${parked.actionId}`, {
      headers: { authorization: `Bearer ${ALICE_TOKEN}` },
    });
    assert.equal(response.status, 200);
    const raw = await response.text();
    const { approval } = JSON.parse(raw);
    assert.equal(approval.hiddenCharacters, true);
    assert.equal(approval.warnings.length, 1);
    assert.match(
      approval.warnings[0],
      /invisible or direction-changing characters \(U\+2066, U\+202E, U\+202C, U\+2069/,
    );
    assert.ok(approval.argsDisplay.includes('"\\u2066\\u202E9876543210\\u202C\\u2069"'), approval.argsDisplay);
    assert.deepEqual(invisible(approval.argsDisplay), []);
    assert.deepEqual(JSON.parse(approval.argsDisplay), TRICK_ARGS);
    // `args` stays the machine-readable value itself.
    assert.deepEqual(approval.args, TRICK_ARGS);
    assert.equal(
      (
        await fetch(`${gw.url}/approvals/${parked.actionId}/deny`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ALICE_TOKEN}` },
        })
      ).status,
      200,
    );
  });

  it(
    'the console page shows the escaped arguments and the warning; approving runs exactly what was read',
    { ...BOUNDED, skip: skipBrowser },
    async () => {
      browser = await launchChromium();
      const parked = await park();
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      await page.goto(`${gw.url}/console`);
      await page.getByLabel('Your token or JWT').fill(ALICE_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in as person:alice', { exact: true }).waitFor();
      const item = page.locator(`li[data-action-id="${parked.actionId}"]`);
      await item.waitFor();

      // The visible marker and the warning, next to the arguments.
      const warning = item.getByRole('alert');
      await warning.waitFor();
      const warningText = await warning.innerText();
      assert.match(warningText, /Hidden characters/);
      assert.match(warningText, /U\+202E/);

      // What the person reads: the escaped form, no invisible character anywhere on the page.
      const shown = await item.locator('pre.args').innerText();
      assert.ok(shown.includes('\\u202E9876543210'), shown);
      assert.deepEqual(invisible(shown), []);
      assert.deepEqual(invisible(await page.locator('body').innerText()), []);
      const read = JSON.parse(shown);

      // Irreversible (L4): approve, then confirm.
      await item.getByRole('button', { name: /^Approve transfer/ }).click();
      await item.getByRole('button', { name: /^Confirm: approve transfer/ }).click();
      await item.waitFor({ state: 'detached' });
      await resume(parked);
      // The backend received exactly what the person read (decoded).
      assert.deepEqual(backend.received.at(-1), read);
      assert.deepEqual(read, TRICK_ARGS);
      assert.deepEqual(problems, []);
      await context.close();
    },
  );

  it('the CLI lists the escaped arguments with a warning line; approving runs exactly that', BOUNDED, async () => {
    const parked = await park();
    const io = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE_TOKEN });
    assert.equal(await approvalsListCommand({ url: gw.url }, io), 0, io.err);
    const block = io.out.split('\n\n').find((chunk) => chunk.startsWith(parked.actionId));
    assert.ok(block, io.out);
    assert.match(block, /\n {2}WARNING hidden characters: The arguments contain \d+ invisible/);
    assert.deepEqual(invisible(io.out), []);
    const argsLine = block.split('\n').find((line) => line.startsWith('  args '));
    assert.ok(argsLine);
    const read = JSON.parse(argsLine.slice('  args '.length));
    const json = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE_TOKEN });
    assert.equal(await approvalsListCommand({ url: gw.url, json: true }, json), 0);
    assert.deepEqual(invisible(json.out), []);

    const approve = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE_TOKEN });
    assert.equal(await approvalsDecideCommand('approve', parked.actionId, { url: gw.url }, approve), 0, approve.err);
    await resume(parked);
    assert.deepEqual(backend.received.at(-1), read);
    assert.deepEqual(read, TRICK_ARGS);
  });
});

describe('approvals: a person is issuer + subject + the person marker, not a sub alone', () => {
  const ISSUER = 'https://idp.hardening2.test';
  const AUDIENCE = 'airlock-hardening2';
  let dir: string;
  let key: CryptoKey;
  let gw: TestGateway;
  const sink = new MemoryAuditSink();
  const backend = new TransferBackend();

  async function mint(claims: JWTPayload): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(key);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-hardening2-persons-'));
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    const jwksFile = join(dir, 'jwks.json');
    writeFileSync(
      jwksFile,
      JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' }] }),
    );
    gw = await startGateway(
      `
server: { host: 127.0.0.1, port: 0 }
auth:
  jwt: { issuer: '${ISSUER}', audience: '${AUDIENCE}', algorithms: [ES256], jwksFile: '${jwksFile}' }
approvals:
  console: true
  persons: { requiredScope: 'airlock:person', allowedAzp: [console-login] }
agents:
  - slug: bank
    name: Bank
    description: Moves money.
    skills: [{ id: bank, name: Bank, description: Transfers, tags: [demo] }]
    backend: { type: echo }
    actions: { maxLevel: L4 }
`,
      { auditSink: sink, backends: { bank: backend } },
    );
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function decide(actionId: string, token: string): Promise<{ status: number; body: any }> {
    const response = await fetch(`${gw.url}/approvals/${actionId}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: response.status, body: await response.json() };
  }

  it(
    'a machine JWT with sub alice cannot approve alice’s action (403, audited); alice’s person JWT can',
    BOUNDED,
    async () => {
      // An agent acting for alice (delegated: `act`) proposes; alice decides.
      const agent = await mint({ sub: 'alice', act: { sub: 'planner' }, azp: 'planner-app', scope: 'a2a:bank' });
      const client = await sdkClient(gw.url, 'bank', agent);
      const parked = asTask(await client.sendMessage(sendRequest(userMessage('pay the invoice'))));
      assert.equal(stateOf(parked), 'TASK_STATE_INPUT_REQUIRED');
      const data = parked.status?.message?.parts.find((part) => part.content?.$case === 'data');
      const actionId = (data?.content as { value: { action_id: string } }).value.action_id;
      const requested = sink.ofType('a2a.approval.requested').find((row) => row.actionId === actionId);
      assert.equal(requested?.user, `jwt:${ISSUER}#alice`, 'the decider is namespaced by issuer');

      // A client-credentials token of another client carrying `sub: alice`: no person marker.
      const machine = await mint({ sub: 'alice', azp: 'billing-batch', scope: 'a2a:bank' });
      const refused = await decide(actionId, machine);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.error.reason, 'not_a_person');
      assert.match(refused.body.error.message, /approvals\.persons\.requiredScope/);
      // Nor can it list alice's actions, or open a console session.
      const listed = await fetch(`${gw.url}/approvals`, { headers: { authorization: `Bearer ${machine}` } });
      assert.equal(listed.status, 403);
      const session = await fetch(`${gw.url}/console/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: machine }),
      });
      assert.equal(session.status, 403);
      assert.equal(session.headers.get('set-cookie'), null);
      // The marker scope through a client people do not sign in through: still not a person.
      const wrongClient = await mint({ sub: 'alice', azp: 'billing-batch', scope: 'airlock:person' });
      const refusedAzp = await decide(actionId, wrongClient);
      assert.equal(refusedAzp.status, 403);
      assert.match(refusedAzp.body.error.message, /approvals\.persons\.allowedAzp/);
      // The agent's own delegated token never decides either.
      assert.equal((await decide(actionId, agent)).status, 401);

      const rows = sink.ofType('a2a.approval.decision_refused').filter((row) => row.reason === 'not_a_person');
      assert.ok(rows.length >= 3, JSON.stringify(rows));
      assert.ok(rows.every((row) => row.user === `jwt:${ISSUER}#alice` && row.outcome === 'denied'));
      assert.ok(!JSON.stringify(rows).includes(machine), 'no token in an audit row');
      assert.equal(sink.ofType('a2a.approval.decided').filter((row) => row.actionId === actionId).length, 0);

      // Alice's own person JWT: no act, the marker, the console's client.
      const alice = await mint({ sub: 'alice', azp: 'console-login', scope: 'openid airlock:person' });
      const approved = await decide(actionId, alice);
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      const decided = sink.ofType('a2a.approval.decided').find((row) => row.actionId === actionId);
      assert.equal(decided?.user, `jwt:${ISSUER}#alice`);
      const done = asTask(
        await client.sendMessage(sendRequest(userMessage('go on', { taskId: parked.id, contextId: parked.contextId }))),
      );
      assert.equal(stateOf(done), 'TASK_STATE_COMPLETED');
      assert.deepEqual(backend.received.at(-1), TRICK_ARGS);
    },
  );
});
