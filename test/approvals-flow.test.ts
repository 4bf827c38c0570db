/**
 * Guarded actions end to end, through a real gateway on loopback: a backend proposes, the task
 * parks, the caller's reply is not a decision, only the person behind the principal decides
 * (over the out-of-band endpoint, with their own credential), and the approval is used once.
 * The caller is the official `@a2a-js/sdk` client; the person is plain fetch.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Task } from '@a2a-js/sdk';
import type { AgentBackend, AgentEvent, AgentTurn, ApprovedAction } from '../src/agents/backend.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { MemoryAuditSink } from '../src/audit/memory.js';
import { approvalsDecideCommand, approvalsListCommand } from '../src/cli/approvals.js';
import { captureIO } from './helpers/command-io.js';
import { rpc, startGateway, v03Message, type TestGateway } from './helpers/gateway.js';
import { asTask, sdkClient, sendRequest, stateOf, userMessage } from './helpers/sdk-caller.js';

const BOT_TOKEN = 'bot-client-token-0123456789abcdef0123456789';
const ORPHAN_TOKEN = 'orphan-client-token-0123456789abcdef01234567';
const ALICE_TOKEN = 'alice-person-token-0123456789abcdef012345678';
const MALLORY_TOKEN = 'mallory-person-token-0123456789abcdef0123456';
const API_KEY = 'sk-live-abcdefghijklmnopqrstuvwxyz012345';

const YAML = (ttlMinutes: number): string => `
server: { host: 127.0.0.1, port: 0 }
content: { scrubSecrets: ["\${API_KEY}"] }
approvals:
  ttlMinutes: ${ttlMinutes}
  people:
    - { id: alice, token: "\${ALICE_TOKEN}" }
    - { id: mallory, token: "\${MALLORY_TOKEN}" }
agents:
  - slug: ops
    name: Ops
    description: Acts on your behalf.
    skills: [{ id: ops, name: Ops, description: Sends mail, tags: [demo] }]
    backend: { type: echo }
    actions: { maxLevel: L4 }
  - slug: reader
    name: Reader
    description: Reads only.
    skills: [{ id: read, name: Read, description: Reads, tags: [demo] }]
    backend: { type: echo }
clients:
  - { id: bot, token: "\${BOT_TOKEN}", agents: [ops, reader], owner: alice }
  - { id: orphan, token: "\${ORPHAN_TOKEN}", agents: [ops] }
`;

/** Proposes `send_email` (L4) on a fresh turn; takes it when the turn carries the approval. */
class MailBackend implements AgentBackend {
  readonly kind = 'test-mail';
  readonly turns: { resumed: boolean; approvedAction?: ApprovedAction; text: string }[] = [];
  constructor(readonly level: string = 'L4') {}
  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    const text = turn.message.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('');
    this.turns.push({
      resumed: turn.resumed,
      text,
      ...(turn.approvedAction && { approvedAction: turn.approvedAction }),
    });
    if (turn.approvedAction !== undefined) {
      yield { type: 'completed', text: `sent ${turn.approvedAction.tool}` };
      return;
    }
    yield {
      type: 'propose-action',
      action: {
        tool: 'send_email',
        args: { to: 'bob@example.com', subject: 'Quarterly', apiKey: API_KEY },
        level: this.level,
      },
    };
  }
}

let gw: TestGateway;
let audit: MemoryAuditSink;
let mail: MailBackend;
let reader: MailBackend;

before(async () => {
  audit = new MemoryAuditSink();
  mail = new MailBackend('L4');
  reader = new MailBackend('L2');
  gw = await startGateway(YAML(30), {
    auditSink: audit,
    env: { BOT_TOKEN, ORPHAN_TOKEN, ALICE_TOKEN, MALLORY_TOKEN, API_KEY },
    backends: { ops: mail, reader },
  });
});
after(async () => {
  await gw.close();
});

const BOUNDED = { timeout: 10_000 };

describe('guarded actions through the gateway', () => {
  it(
    'propose → park → premature resume → wrong person → approve → double approve → resume → completed (SDK client)',
    BOUNDED,
    async () => {
      const client = await sdkClient(gw.url, 'ops', BOT_TOKEN);
      const turnsBefore = mail.turns.length;
      const parked = asTask(await client.sendMessage(sendRequest(userMessage('mail bob the numbers'))));
      assert.equal(stateOf(parked), 'TASK_STATE_INPUT_REQUIRED');
      const action = actionPartOf(parked);
      assert.equal(action.tool, 'send_email');
      assert.equal(action.level, 'L4');
      assert.match(action.action_id, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(action.approve_url, `${gw.url}/approvals/${action.action_id}`);
      assert.ok(Date.parse(action.expires_at) > Date.now());
      // Redacted like any tool result: no email address, no secret.
      const shown = JSON.stringify(action.args);
      assert.ok(!shown.includes('bob@example.com'), shown);
      assert.ok(!shown.includes(API_KEY), shown);

      // The caller's reply is not a decision: the task stays parked and the backend does not run.
      const premature = asTask(
        await client.sendMessage(
          sendRequest(userMessage('I approve, go ahead', { taskId: parked.id, contextId: parked.contextId })),
        ),
      );
      assert.equal(stateOf(premature), 'TASK_STATE_INPUT_REQUIRED');
      assert.equal(actionPartOf(premature).action_id, action.action_id);
      assert.equal(mail.turns.length, turnsBefore + 1, 'no turn ran on the premature resume');

      // The caller's own token is not a person's credential.
      assert.equal((await decide(action.action_id, 'approve', BOT_TOKEN)).status, 401);
      // Another person cannot decide, and learns nothing about the action.
      const wrong = await decide(action.action_id, 'approve', MALLORY_TOKEN);
      assert.equal(wrong.status, 403);
      assert.ok(!JSON.stringify(wrong.body).includes('send_email'));
      assert.deepEqual((await listApprovals(MALLORY_TOKEN)).approvals, []);

      // The owner sees it and approves it, once.
      const listed = await listApprovals(ALICE_TOKEN);
      assert.deepEqual(
        listed.approvals.map((view: { actionId: string }) => view.actionId),
        [action.action_id],
      );
      const approved = await decide(action.action_id, 'approve', ALICE_TOKEN);
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.equal(approved.body.approval.status, 'approved');
      const again = await decide(action.action_id, 'approve', ALICE_TOKEN);
      assert.equal(again.status, 409);
      assert.equal(again.body.error.reason, 'already_decided');

      // Any message resumes; the backend gets the action with its real arguments, once.
      const done = asTask(
        await client.sendMessage(sendRequest(userMessage('go on', { taskId: parked.id, contextId: parked.contextId }))),
      );
      assert.equal(stateOf(done), 'TASK_STATE_COMPLETED');
      const last = mail.turns.at(-1)!;
      assert.equal(last.approvedAction?.actionId, action.action_id);
      assert.equal(last.approvedAction?.approvedBy, 'person:alice');
      assert.deepEqual(last.approvedAction?.args, { to: 'bob@example.com', subject: 'Quarterly', apiKey: API_KEY });

      const rows = audit.events.filter((row) => 'taskId' in row && row.taskId === parked.id).map((row) => row.type);
      for (const type of [
        'a2a.approval.requested',
        'a2a.approval.reparked',
        'a2a.approval.decided',
        'a2a.approval.consumed',
        'a2a.task.completed',
      ]) {
        assert.ok(rows.includes(type as never), `${type} in ${rows.join(', ')}`);
      }
      const refused = audit.events.filter((row) => row.type === 'a2a.approval.decision_refused');
      assert.ok(
        refused.some((row) => 'reason' in row && row.reason === 'not_decider' && row.user === 'person:mallory'),
      );
      assert.ok(refused.some((row) => 'reason' in row && row.reason === 'already_decided'));
      for (const row of audit.lines) {
        assert.ok(!row.includes(API_KEY) && !row.includes(ALICE_TOKEN) && !row.includes('bob@example.com'), row);
      }
    },
  );

  it('deny: the next message fails the task with a clear status, and the action is never taken', BOUNDED, async () => {
    const parked = await sendRaw('ops', 'please mail bob');
    const action = parked.status.message.parts.find((part: any) => part.data !== undefined).data;
    const denied = await decide(action.action_id, 'deny', ALICE_TOKEN);
    assert.equal(denied.status, 200);
    assert.equal(denied.body.approval.status, 'denied');
    const turns = mail.turns.length;
    const resumed = await resumeRaw('ops', parked.id, 'go on');
    assert.equal(resumed.status.state, 'TASK_STATE_FAILED');
    assert.match(resumed.status.message.parts[0].text, /denied/);
    assert.equal(mail.turns.length, turns, 'the backend did not run');
    const failed = audit.events.find((row) => row.type === 'a2a.task.failed' && row.taskId === parked.id);
    assert.equal(failed && 'reason' in failed ? failed.reason : undefined, 'action_denied');
  });

  it('a client without an owner: the proposal is refused up front with a clear reason', BOUNDED, async () => {
    const failed = await sendRaw('ops', 'mail bob', ORPHAN_TOKEN);
    assert.equal(failed.status.state, 'TASK_STATE_FAILED');
    assert.match(failed.status.message.parts[0].text, /nobody is configured to approve/);
    const row = audit.events.find((event) => event.type === 'a2a.approval.refused' && event.taskId === failed.id);
    assert.equal(row && 'reason' in row ? row.reason : undefined, 'no_decider');
  });

  it('a read-only proposal (L2) runs at once, without a person', BOUNDED, async () => {
    const done = await sendRaw('reader', 'look it up');
    assert.equal(done.status.state, 'TASK_STATE_COMPLETED');
    const last = reader.turns.at(-1)!;
    assert.equal(last.approvedAction?.level, 'L2');
    assert.equal(last.approvedAction?.approvedBy, undefined);
  });

  it('an acting proposal on an agent capped at L2 is refused', BOUNDED, async () => {
    reader.turns.length = 0;
    const strict = new MailBackend('L3');
    const local = await startGateway(YAML(30), {
      env: { BOT_TOKEN, ORPHAN_TOKEN, ALICE_TOKEN, MALLORY_TOKEN, API_KEY },
      backends: { ops: mail, reader: strict },
    });
    try {
      const failed = await sendRaw('reader', 'delete it', BOT_TOKEN, local.url);
      assert.equal(failed.status.state, 'TASK_STATE_FAILED');
      assert.match(failed.status.message.parts[0].text, /above this agent's maximum of L2/);
    } finally {
      await local.close();
    }
  });

  it('cancel while parked withdraws the action from the person’s list', BOUNDED, async () => {
    const parked = await sendRaw('ops', 'mail bob once more');
    const action = parked.status.message.parts.find((part: any) => part.data !== undefined).data;
    assert.ok((await listApprovals(ALICE_TOKEN)).approvals.some((view: any) => view.actionId === action.action_id));
    const canceled = await rpc(
      `${gw.url}/a2a/ops`,
      'CancelTask',
      { id: parked.id },
      { token: BOT_TOKEN, version: '1.0' },
    );
    assert.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED');
    assert.ok(!(await listApprovals(ALICE_TOKEN)).approvals.some((view: any) => view.actionId === action.action_id));
    assert.equal((await decide(action.action_id, 'approve', ALICE_TOKEN)).status, 404);
  });

  it('v0.3: the parked task carries the same data part, as a v0.3 data part', BOUNDED, async () => {
    const sent = await rpc(
      `${gw.url}/a2a/ops`,
      'message/send',
      { message: v03Message('mail bob (0.3)') },
      { token: BOT_TOKEN, version: '0.3' },
    );
    const task = sent.body.result;
    assert.equal(task.status.state, 'input-required');
    const data = task.status.message.parts.find((part: any) => part.kind === 'data');
    assert.ok(data, JSON.stringify(task.status.message));
    assert.match(data.data.action_id, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(data.data.tool, 'send_email');
  });
});

describe('airlock approvals (CLI) against the gateway', () => {
  it('list and approve as the person; refusals are one line with the reason and exit 1', BOUNDED, async () => {
    const parked = await sendRaw('ops', 'mail bob from the CLI');
    const id = parked.status.message.parts.find((part: any) => part.data !== undefined).data.action_id;

    const missing = captureIO({});
    assert.equal(await approvalsListCommand({ url: gw.url }, missing), 2);
    assert.match(missing.err, /AIRLOCK_PERSON_TOKEN/);

    const asCaller = captureIO({ AIRLOCK_PERSON_TOKEN: BOT_TOKEN });
    assert.equal(await approvalsListCommand({ url: gw.url }, asCaller), 1);
    assert.match(asCaller.err, /401/);
    assert.ok(!asCaller.err.includes(BOT_TOKEN));

    const alice = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE_TOKEN });
    assert.equal(await approvalsListCommand({ url: gw.url }, alice), 0);
    assert.ok(alice.out.includes(id), alice.out);
    assert.match(alice.out, /send_email · L4 irreversible_acting/);
    assert.ok(!alice.out.includes('bob@example.com') && !alice.out.includes(API_KEY), alice.out);

    const mallory = captureIO({ AIRLOCK_PERSON_TOKEN: MALLORY_TOKEN });
    assert.equal(await approvalsDecideCommand('approve', id, { url: gw.url }, mallory), 1);
    assert.match(mallory.err, /403 \(not_decider\)/);

    const approve = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE_TOKEN });
    assert.equal(await approvalsDecideCommand('approve', id, { url: gw.url }, approve), 0);
    assert.equal(approve.out, `approved ${id}\n`);
    const twice = captureIO({ AIRLOCK_PERSON_TOKEN: ALICE_TOKEN });
    assert.equal(await approvalsDecideCommand('deny', id, { url: gw.url }, twice), 1);
    assert.match(twice.err, /409 \(already_decided\)/);

    const done = await resumeRaw('ops', parked.id, 'go');
    assert.equal(done.status.state, 'TASK_STATE_COMPLETED');
  });
});

describe('guarded actions: expiry', () => {
  it(
    'an action not decided in time fails the task on the next message; a late approval is refused',
    BOUNDED,
    async () => {
      const local = await startGateway(YAML(0.002), {
        env: { BOT_TOKEN, ORPHAN_TOKEN, ALICE_TOKEN, MALLORY_TOKEN, API_KEY },
        backends: { ops: new MailBackend('L4') },
      });
      try {
        const parked = await sendRaw('ops', 'mail bob', BOT_TOKEN, local.url);
        const action = parked.status.message.parts.find((part: any) => part.data !== undefined).data;
        await new Promise((resolve) => setTimeout(resolve, 250));
        const late = await decide(action.action_id, 'approve', ALICE_TOKEN, local.url);
        assert.equal(late.status, 410);
        const resumed = await resumeRaw('ops', parked.id, 'go on', local.url);
        assert.equal(resumed.status.state, 'TASK_STATE_FAILED');
        assert.match(resumed.status.message.parts[0].text, /expired/);
      } finally {
        await local.close();
      }
    },
  );
});

describe('guarded actions: JWT principals', () => {
  const ISSUER = 'https://idp.example.test';
  const AUDIENCE = 'airlock-approvals-test';
  let dir: string;
  let key: CryptoKey;
  let local: TestGateway;
  const sink = new MemoryAuditSink();

  async function mint(claims: JWTPayload): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 300, scope: 'a2a:ops', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(key);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-approvals-jwt-'));
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const jwksFile = join(dir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [jwk] }));
    local = await startGateway(
      `${YAML(30)}
auth:
  jwt: { issuer: '${ISSUER}', audience: '${AUDIENCE}', algorithms: [ES256], jwksFile: '${jwksFile}' }
`,
      {
        auditSink: sink,
        env: { BOT_TOKEN, ORPHAN_TOKEN, ALICE_TOKEN, MALLORY_TOKEN, API_KEY },
        backends: { ops: new MailBackend('L4') },
      },
    );
  });
  after(async () => {
    await local.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a service principal is refused up front: capped below acting, never parked', BOUNDED, async () => {
    const service = await mint({ sub: 'svc-nightly' });
    const failed = await sendRaw('ops', 'mail everyone', service, local.url);
    assert.equal(failed.status.state, 'TASK_STATE_FAILED');
    assert.match(failed.status.message.parts[0].text, /service principals are capped at L2/);
    const row = sink.ofType('a2a.approval.refused').find((event) => event.taskId === failed.id);
    assert.equal(row?.reason, 'service_principal_capped');
    assert.equal(sink.ofType('a2a.approval.requested').filter((event) => event.taskId === failed.id).length, 0);
  });

  it('an identity-provider user named like a configured person cannot decide for that person', BOUNDED, async () => {
    // bot's owner is the configured person alice (person:alice); a JWT whose sub is "alice" is
    // jwt:alice, somebody else. Fails if the two namespaces are merged.
    const parked = await sendRaw('ops', 'mail bob', BOT_TOKEN, local.url);
    const action = parked.status.message.parts.find((part: any) => part.data !== undefined).data;
    const namesake = await mint({ sub: 'alice' });
    assert.equal((await decide(action.action_id, 'approve', namesake, local.url)).status, 403);
    assert.equal((await decide(action.action_id, 'approve', ALICE_TOKEN, local.url)).status, 200);
  });

  it('a delegated principal: only the delegating user, signed in as themself, approves', BOUNDED, async () => {
    const delegated = await mint({ sub: 'carol', act: { sub: 'planner-agent' } });
    const parked = await sendRaw('ops', 'mail the board', delegated, local.url);
    assert.equal(parked.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const action = parked.status.message.parts.find((part: any) => part.data !== undefined).data;
    // The agent's own (delegated) token never decides, nor does another user's JWT, nor a person token named alike.
    assert.equal((await decide(action.action_id, 'approve', delegated, local.url)).status, 401);
    assert.equal((await decide(action.action_id, 'approve', await mint({ sub: 'dave' }), local.url)).status, 403);
    assert.equal((await decide(action.action_id, 'approve', ALICE_TOKEN, local.url)).status, 403);
    // A person's own JWT carries the person marker (approvals.persons, default scope airlock:person).
    const carol = await mint({ sub: 'carol', scope: 'airlock:person' });
    const approved = await decide(action.action_id, 'approve', carol, local.url);
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const sent = await rpc(
      `${local.url}/a2a/ops`,
      'SendMessage',
      { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'go' }], taskId: parked.id } },
      { token: delegated, version: '1.0' },
    );
    assert.equal(sent.body.result.task.status.state, 'TASK_STATE_COMPLETED');
    const decided = sink.ofType('a2a.approval.decided').find((row) => row.actionId === action.action_id);
    // JWT people are namespaced by their issuer.
    assert.equal(decided?.user, `jwt:${ISSUER}#carol`);
  });
});

// ---- helpers ----------------------------------------------------------------------------------

/** The action data part of a parked task, as the SDK decoded it. */
function actionPartOf(task: Task): {
  action_id: string;
  tool: string;
  level: string;
  args: unknown;
  expires_at: string;
  approve_url: string;
} {
  for (const part of task.status?.message?.parts ?? []) {
    if (part.content?.$case === 'data') return part.content.value as never;
  }
  assert.fail(`no data part in ${JSON.stringify(task.status?.message)}`);
}

async function decide(
  actionId: string,
  decision: 'approve' | 'deny',
  token: string,
  base = gw.url,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}/approvals/${actionId}/${decision}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: await response.json() };
}

async function listApprovals(token: string): Promise<any> {
  const response = await fetch(`${gw.url}/approvals`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.status, 200);
  return response.json();
}

async function sendRaw(slug: string, text: string, token = BOT_TOKEN, base = gw.url): Promise<any> {
  const sent = await rpc(
    `${base}/a2a/${slug}`,
    'SendMessage',
    { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } },
    { token, version: '1.0' },
  );
  assert.ok(sent.body.result?.task, JSON.stringify(sent.body));
  return sent.body.result.task;
}

async function resumeRaw(slug: string, taskId: string, text: string, base = gw.url): Promise<any> {
  const sent = await rpc(
    `${base}/a2a/${slug}`,
    'SendMessage',
    { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], taskId } },
    { token: BOT_TOKEN, version: '1.0' },
  );
  assert.ok(sent.body.result?.task, JSON.stringify(sent.body));
  return sent.body.result.task;
}
