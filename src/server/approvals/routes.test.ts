/**
 * The /approvals API and the console's session routes over a real loopback `node:http` server.
 * The desk is a small in-test implementation over the real MemoryApprovalStore; nothing at the
 * HTTP level is mocked.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type {
  ApprovalDesk,
  ApprovalView,
  PersonAuditRow,
  PersonTaskView,
  RemoteQuestionView,
} from '../../approvals/desk.js';
import { levelView } from '../../approvals/desk.js';
import { argsView } from '../../approvals/display.js';
import { redactActionArgs } from '../../approvals/redact.js';
import { MemoryApprovalStore } from '../../approvals/memory-store.js';
import { ApprovalError, approvalStatus, type PendingAction } from '../../approvals/store.js';
import { hashToken } from '../../config/tokens.js';
import { PersonAuthenticator } from '../auth/persons.js';
import { AuthFailureLimiter } from '../limits/address-failures.js';
import type { Logger } from '../log.js';
import { CONSOLE_CSP } from '../console/assets.js';
import { createApprovalRoutes, type ApprovalRoutes, type ApprovalRoutesOptions } from './routes.js';

const ALICE_TOKEN = 'alice-person-token-0123456789abcdef-XYZ';
const BOB_TOKEN = 'bob-person-token-0123456789abcdef-XYZ!!';
/** A client (agent caller) token: not a person credential. */
const CLIENT_TOKEN = 'client-bot-token-0123456789abcdef-QRS';
const ALICE = 'person:alice';
const BOB = 'person:bob';

/** The desk's clock (wall time, ms); tests move it to expire actions. */
let deskNow = Date.parse('2030-01-01T00:00:00Z');

function toView(action: PendingAction): ApprovalView {
  return {
    actionId: action.actionId,
    taskId: action.taskId,
    contextId: `ctx-${action.taskId}`,
    agent: 'ops',
    client: 'bot',
    tool: action.tool,
    args: action.args,
    ...argsView(action.args),
    level: action.level,
    ...levelView(action.level),
    status: approvalStatus(action, deskNow),
    createdAt: new Date(action.createdAt).toISOString(),
    expiresAt: new Date(action.expiresAt).toISOString(),
    ...(action.decidedAt !== undefined && { decidedAt: new Date(action.decidedAt).toISOString() }),
  };
}

/** A desk over the real store, as the gateway's would be (owner is the client's principal key). */
class TestDesk implements ApprovalDesk {
  readonly store = new MemoryApprovalStore();
  readonly owners = new Map<string, string>();
  readonly decisions: { actionId: string; userId: string; decision: string; remote: string | undefined }[] = [];
  readonly questionList: RemoteQuestionView[] = [];
  readonly answers: { questionId: string; userId: string; text: string }[] = [];
  failNext = false;

  async propose(decider: string, taskId: string, ttlMs = 60_000): Promise<string> {
    const owner = 'client:bot';
    const { value: args } = redactActionArgs(
      { to: 'bob@example.com', subject: 'hi', apiKey: 'sk-live-0123456789' },
      { secrets: [] },
    );
    const action = this.store.create(
      {
        taskId,
        owner,
        decider: { kind: 'user', userId: decider, via: 'client_owner' },
        tool: 'send_email',
        args,
        level: 'L4',
        expiresAt: deskNow + ttlMs,
      },
      deskNow,
    );
    this.owners.set(action.actionId, owner);
    return action.actionId;
  }

  async pending(userId: string): Promise<ApprovalView[]> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('database on fire: secret detail');
    }
    return (await this.store.listForDecider(userId, deskNow)).map(toView);
  }

  async get(userId: string, actionId: string): Promise<ApprovalView | undefined> {
    const owner = this.owners.get(actionId);
    if (owner === undefined) return undefined;
    const action = await this.store.get(owner, actionId);
    return action !== undefined && action.decider.userId === userId ? toView(action) : undefined;
  }

  async decide(actionId: string, userId: string, decision: 'approve' | 'deny', remote?: string): Promise<ApprovalView> {
    this.decisions.push({ actionId, userId, decision, remote });
    return toView(await this.store.decide(actionId, { kind: 'user', userId }, decision, deskNow));
  }

  async recentTasks(_userId: string, limit: number): Promise<PersonTaskView[]> {
    const task: PersonTaskView = {
      taskId: 'task-1',
      contextId: 'ctx-1',
      agent: 'ops',
      client: 'bot',
      state: 'input-required',
      createdAt: new Date(deskNow).toISOString(),
      updatedAt: new Date(deskNow).toISOString(),
    };
    return [task].slice(0, limit);
  }

  async auditTail(_userId: string, limit: number): Promise<PersonAuditRow[]> {
    return [{ type: 'approval.decided', outcome: 'ok', taskId: 'task-1', time: new Date(deskNow).toISOString() }].slice(
      0,
      limit,
    );
  }

  async questions(userId: string): Promise<RemoteQuestionView[]> {
    return userId === ALICE ? this.questionList.filter((q) => q.status === 'pending') : [];
  }

  async answer(questionId: string, userId: string, text: string): Promise<RemoteQuestionView> {
    const index = this.questionList.findIndex((q) => q.questionId === questionId);
    const question = this.questionList[index];
    if (question === undefined) throw new ApprovalError('not_found');
    if (userId !== ALICE) throw new ApprovalError('not_decider');
    if (question.status !== 'pending') throw new ApprovalError('already_decided');
    this.answers.push({ questionId, userId, text });
    const answered: RemoteQuestionView = { ...question, status: 'answered' };
    this.questionList[index] = answered;
    return answered;
  }
}

interface Harness {
  url: string;
  host: string;
  desk: TestDesk;
  routes: ApprovalRoutes;
  server: Server;
  logs: string[];
  authFailed: { reason: string; remote: string | undefined }[];
  /** The lockout's clock (ms). */
  clock: { now: number };
}

async function startHarness(overrides: Partial<ApprovalRoutesOptions> = {}): Promise<Harness> {
  const desk = new TestDesk();
  const logs: string[] = [];
  const logger: Logger = {
    info: (fields) => logs.push(JSON.stringify(fields)),
    warn: (fields) => logs.push(JSON.stringify(fields)),
    error: (fields) => logs.push(JSON.stringify(fields)),
  };
  const authFailed: Harness['authFailed'] = [];
  const clock = { now: 1_000_000 };
  const persons = new PersonAuthenticator([
    { id: 'alice', tokenDigest: hashToken(ALICE_TOKEN) },
    { id: 'bob', tokenDigest: hashToken(BOB_TOKEN) },
  ]);
  const routes = createApprovalRoutes({
    desk,
    persons,
    console: true,
    secureCookies: false,
    authFailures: new AuthFailureLimiter({ limit: 5 }),
    onAuthFailed: (reason, remote) => authFailed.push({ reason, remote }),
    logger,
    maxBodyBytes: 65_536,
    bodyTimeoutMs: 2_000,
    now: () => clock.now,
    ...overrides,
  });
  const server = createServer((req, res) => {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const path = q === -1 ? raw : raw.slice(0, q);
    void Promise.resolve(routes.handle(req, res, path, req.socket.remoteAddress)).then((handled) => {
      if (!handled) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"code":404,"status":"NOT_FOUND","message":"not a route"}}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    desk,
    routes,
    server,
    logs,
    authFailed,
    clock,
  };
}

async function stopHarness(h: Harness): Promise<void> {
  h.routes.close();
  await new Promise<void>((resolve) => {
    h.server.close(() => resolve());
    h.server.closeAllConnections();
  });
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/** One request with exactly these headers (node:http: Cookie, Origin and Host are ours to set). */
function call(
  h: Harness,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | object } = {},
): Promise<Reply> {
  const payload =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (payload !== undefined) {
    headers['content-length'] = String(Buffer.byteLength(payload));
    if (headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  }
  return new Promise((resolve, reject) => {
    const req = request(`${h.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any;
        try {
          body = text.length > 0 ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Signs alice in; returns the cookie pair to send, the raw session id and the CSRF token. */
async function signIn(
  h: Harness,
  token = ALICE_TOKEN,
): Promise<{ cookie: string; id: string; csrf: string; setCookie: string }> {
  const reply = await call(h, 'POST', '/console/session', { body: { token } });
  assert.equal(reply.status, 200, reply.text);
  const setCookie = ([] as string[]).concat(reply.headers['set-cookie'] ?? [])[0];
  assert.ok(setCookie !== undefined, 'a session cookie is set');
  const pair = setCookie.split(';')[0]!;
  return { cookie: pair, id: pair.slice(pair.indexOf('=') + 1), csrf: reply.body.csrf, setCookie };
}

describe('/approvals with a bearer credential', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => stopHarness(h));

  it('lists, gets, approves and denies the person’s own actions', async () => {
    const first = await h.desk.propose(ALICE, 't1');
    const second = await h.desk.propose(ALICE, 't2');
    await h.desk.propose(BOB, 't3');

    const list = await call(h, 'GET', '/approvals', { headers: bearer(ALICE_TOKEN) });
    assert.equal(list.status, 200);
    assert.equal(list.headers['cache-control'], 'no-store');
    assert.match(String(list.headers['content-type']), /^application\/json/);
    assert.deepEqual(
      list.body.approvals.map((a: ApprovalView) => a.actionId),
      [first, second],
    );
    const view = list.body.approvals[0] as ApprovalView;
    assert.equal(view.tool, 'send_email');
    assert.equal(view.level, 'L4');
    assert.equal(view.levelName, 'irreversible_acting');
    assert.ok(!list.text.includes('bob@example.com') && !list.text.includes('sk-live'), 'the args are redacted');

    const one = await call(h, 'GET', `/approvals/${first}`, { headers: bearer(ALICE_TOKEN) });
    assert.equal(one.status, 200);
    assert.equal(one.body.approval.actionId, first);

    const approved = await call(h, 'POST', `/approvals/${first}/approve`, { headers: bearer(ALICE_TOKEN) });
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.approval.status, 'approved');
    assert.equal(h.desk.decisions[0]?.remote, '127.0.0.1', 'the remote address reaches the desk');

    const denied = await call(h, 'POST', `/approvals/${second}/deny`, { headers: bearer(ALICE_TOKEN) });
    assert.equal(denied.status, 200);
    assert.equal(denied.body.approval.status, 'denied');

    const after = await call(h, 'GET', '/approvals', { headers: bearer(ALICE_TOKEN) });
    assert.deepEqual(after.body.approvals, []);
  });

  it('refuses another person (403), a second decision (409), an expired action (410), an unknown id (404)', async () => {
    const id = await h.desk.propose(ALICE, 't1');
    const byBob = await call(h, 'POST', `/approvals/${id}/approve`, { headers: bearer(BOB_TOKEN) });
    assert.equal(byBob.status, 403);
    assert.deepEqual(
      { status: byBob.body.error.status, reason: byBob.body.error.reason, code: byBob.body.error.code },
      { status: 'PERMISSION_DENIED', reason: 'not_decider', code: 403 },
    );
    assert.equal(typeof byBob.body.error.message, 'string');
    const bobGet = await call(h, 'GET', `/approvals/${id}`, { headers: bearer(BOB_TOKEN) });
    assert.equal(bobGet.status, 404, 'another person’s action is not even shown');

    assert.equal((await call(h, 'POST', `/approvals/${id}/approve`, { headers: bearer(ALICE_TOKEN) })).status, 200);
    const again = await call(h, 'POST', `/approvals/${id}/approve`, { headers: bearer(ALICE_TOKEN) });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.status, 'ALREADY_DECIDED');
    assert.equal(again.body.error.reason, 'already_decided');

    const shortLived = await h.desk.propose(ALICE, 't2', 1_000);
    deskNow += 5_000;
    try {
      const late = await call(h, 'POST', `/approvals/${shortLived}/deny`, { headers: bearer(ALICE_TOKEN) });
      assert.equal(late.status, 410);
      assert.equal(late.body.error.status, 'EXPIRED');
      assert.equal(late.body.error.reason, 'expired');
    } finally {
      deskNow -= 5_000;
    }

    const unknown = 'A'.repeat(43);
    const missing = await call(h, 'POST', `/approvals/${unknown}/approve`, { headers: bearer(ALICE_TOKEN) });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.status, 'NOT_FOUND');
    assert.equal(missing.body.error.reason, 'not_found');
    assert.equal((await call(h, 'GET', `/approvals/${unknown}`, { headers: bearer(ALICE_TOKEN) })).status, 404);
  });

  it('answers 405 with Allow for a wrong method and 404 for an unknown subpath', async () => {
    const id = await h.desk.propose(ALICE, 't1');
    const wrong = await call(h, 'GET', `/approvals/${id}/approve`, { headers: bearer(ALICE_TOKEN) });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.allow, 'POST');
    const list = await call(h, 'DELETE', '/approvals', { headers: bearer(ALICE_TOKEN) });
    assert.equal(list.status, 405);
    assert.equal(list.headers.allow, 'GET');
    for (const path of [
      `/approvals/${id}/maybe`,
      `/approvals/${id}/approve/x`,
      '/approvals/questions/x',
      '/approvals/a%20b',
    ]) {
      const reply = await call(h, 'GET', path, { headers: bearer(ALICE_TOKEN) });
      assert.equal(reply.status, 404, path);
    }
    // Not its path at all: the gateway's own 404 (handle returned false).
    const other = await call(h, 'GET', '/approvalsx', { headers: bearer(ALICE_TOKEN) });
    assert.equal(other.body.error.message, 'not a route');
  });

  it('answers 401 with WWW-Authenticate, audits and counts a missing or invalid credential', async () => {
    const none = await call(h, 'GET', '/approvals');
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer realm="airlock"');
    assert.equal(none.body.error.status, 'UNAUTHENTICATED');
    assert.deepEqual(h.authFailed, [{ reason: 'missing_credentials', remote: '127.0.0.1' }]);

    const wrong = await call(h, 'GET', '/approvals', { headers: bearer('not-anybody-0123456789abcdef0123456') });
    assert.equal(wrong.status, 401);
    assert.equal(h.authFailed[1]?.reason, 'invalid_credentials');

    const notBearer = await call(h, 'GET', '/approvals', { headers: { authorization: `Basic ${ALICE_TOKEN}` } });
    assert.equal(notBearer.status, 401);
    assert.equal(h.authFailed.length, 3);
  });

  it('refuses a client (agent caller) token: it is not a person credential', async () => {
    await h.desk.propose(ALICE, 't1');
    const reply = await call(h, 'GET', '/approvals', { headers: bearer(CLIENT_TOKEN) });
    assert.equal(reply.status, 401);
    assert.equal(h.authFailed[0]?.reason, 'invalid_credentials');
  });

  it('locks the address out with 429 and Retry-After after the limit of failures', async () => {
    for (let i = 0; i < 5; i++) {
      const reply = await call(h, 'GET', '/approvals', { headers: bearer(`wrong-token-${i}-0123456789abcdef0123`) });
      assert.equal(reply.status, 401);
    }
    const locked = await call(h, 'GET', '/approvals', { headers: bearer(ALICE_TOKEN) });
    assert.equal(locked.status, 429, 'even the right token waits out the lockout');
    assert.equal(locked.body.error.status, 'RESOURCE_EXHAUSTED');
    assert.ok(Number(locked.headers['retry-after']) >= 1);
    const signInLocked = await call(h, 'POST', '/console/session', { body: { token: ALICE_TOKEN } });
    assert.equal(signInLocked.status, 429, 'sign-in is locked out too');
    assert.equal(h.authFailed.length, 5, 'a locked-out request is not audited as a failed sign-in');

    h.clock.now += 61_000;
    assert.equal((await call(h, 'GET', '/approvals', { headers: bearer(ALICE_TOKEN) })).status, 200);
  });

  it('answers an unexpected desk failure with a generic 500 and logs it', async () => {
    h.desk.failNext = true;
    const reply = await call(h, 'GET', '/approvals', { headers: bearer(ALICE_TOKEN) });
    assert.equal(reply.status, 500);
    assert.equal(reply.body.error.message, 'Internal error');
    assert.ok(!reply.text.includes('on fire'));
    assert.ok(h.logs.some((line) => line.includes('approvals_request_failed')));
  });
});

describe('/approvals/questions', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
    h.desk.questionList.push({
      questionId: 'q-1',
      taskId: 'task-9',
      agent: 'ops',
      remoteAgent: 'travel',
      remoteTaskId: 'rt-1',
      remoteContextId: 'rc-1',
      state: 'input-required',
      question: 'Which date?',
      status: 'pending',
      createdAt: new Date(deskNow).toISOString(),
      expiresAt: new Date(deskNow + 60_000).toISOString(),
    });
  });
  afterEach(() => stopHarness(h));

  it('lists the questions and records an answer', async () => {
    const list = await call(h, 'GET', '/approvals/questions', { headers: bearer(ALICE_TOKEN) });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.questions.map((q: RemoteQuestionView) => q.questionId),
      ['q-1'],
    );
    const answered = await call(h, 'POST', '/approvals/questions/q-1/answer', {
      headers: bearer(ALICE_TOKEN),
      body: { text: 'Friday' },
    });
    assert.equal(answered.status, 200, answered.text);
    assert.equal(answered.body.question.status, 'answered');
    assert.deepEqual(h.desk.answers, [{ questionId: 'q-1', userId: ALICE, text: 'Friday' }]);
    const twice = await call(h, 'POST', '/approvals/questions/q-1/answer', {
      headers: bearer(ALICE_TOKEN),
      body: { text: 'Saturday' },
    });
    assert.equal(twice.status, 409);
  });

  it('refuses an empty, too long, missing or non-string answer (400) and a non-JSON body (415)', async () => {
    const cases: unknown[] = [{ text: '' }, { text: 'x'.repeat(8193) }, {}, { text: 42 }, [], 'just text'];
    for (const body of cases) {
      const reply = await call(h, 'POST', '/approvals/questions/q-1/answer', {
        headers: bearer(ALICE_TOKEN),
        body: body as object,
      });
      assert.equal(reply.status, 400, JSON.stringify(body).slice(0, 40));
      assert.equal(reply.body.error.status, 'INVALID_ARGUMENT');
    }
    const exactly = await call(h, 'POST', '/approvals/questions/q-1/answer', {
      headers: bearer(ALICE_TOKEN),
      body: { text: 'y'.repeat(8192) },
    });
    assert.equal(exactly.status, 200, '8192 characters are allowed');
    const notJson = await call(h, 'POST', '/approvals/questions/q-1/answer', {
      headers: { ...bearer(ALICE_TOKEN), 'content-type': 'text/plain' },
      body: 'text=hello',
    });
    assert.equal(notJson.status, 415);
    const broken = await call(h, 'POST', '/approvals/questions/q-1/answer', {
      headers: bearer(ALICE_TOKEN),
      body: '{"text":',
    });
    assert.equal(broken.status, 400);
  });

  it('answers 404 for an unknown question', async () => {
    const reply = await call(h, 'POST', '/approvals/questions/nope/answer', {
      headers: bearer(ALICE_TOKEN),
      body: { text: 'hi' },
    });
    assert.equal(reply.status, 404);
    assert.equal(reply.body.error.reason, 'not_found');
  });
});

describe('console session (cookie) and CSRF', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => stopHarness(h));

  it('signs in with an HttpOnly, SameSite=Strict cookie, reports the session, and signs out', async () => {
    const { cookie, csrf, setCookie, id } = await signIn(h);
    assert.match(setCookie, /^airlock_console=[A-Za-z0-9_-]{43};/);
    assert.match(setCookie, /; HttpOnly/);
    assert.match(setCookie, /; SameSite=Strict/);
    assert.match(setCookie, /; Path=\//);
    assert.match(setCookie, /; Max-Age=28800/);
    assert.doesNotMatch(setCookie, /Secure/, 'no Secure flag unless configured');
    assert.match(csrf, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(csrf, id);

    const current = await call(h, 'GET', '/console/session', { headers: { cookie } });
    assert.equal(current.status, 200);
    assert.deepEqual(current.body, { userId: ALICE, csrf });

    const overview = await call(h, 'GET', '/console/api/overview', { headers: { cookie: `other=1; ${cookie}` } });
    assert.equal(overview.status, 200);
    assert.equal(overview.body.userId, ALICE);
    assert.deepEqual(Object.keys(overview.body).sort(), ['approvals', 'audit', 'questions', 'tasks', 'userId']);
    assert.equal(overview.headers['content-security-policy'], CONSOLE_CSP);

    const noCsrf = await call(h, 'DELETE', '/console/session', { headers: { cookie } });
    assert.equal(noCsrf.status, 403, 'sign-out is CSRF-checked too');
    const out = await call(h, 'DELETE', '/console/session', { headers: { cookie, 'x-airlock-csrf': csrf } });
    assert.equal(out.status, 200);
    const cleared = ([] as string[]).concat(out.headers['set-cookie'] ?? [])[0] ?? '';
    assert.match(cleared, /^airlock_console=;/);
    assert.match(cleared, /Max-Age=0/);

    const failuresBefore = h.authFailed.length;
    const gone = await call(h, 'GET', '/console/session', { headers: { cookie } });
    assert.equal(gone.status, 401, 'the session is gone after sign-out');
    assert.equal(
      (await call(h, 'GET', '/console/api/overview', { headers: { cookie } })).status,
      401,
      'the old cookie opens nothing',
    );
    assert.ok(h.authFailed.length > failuresBefore, 'a dead session cookie counts as a bad credential');
  });

  it('does not audit a plain missing cookie on GET /console/session', async () => {
    const reply = await call(h, 'GET', '/console/session');
    assert.equal(reply.status, 401);
    assert.deepEqual(h.authFailed, []);
  });

  it('refuses a bad sign-in with 401, audited, and sets no cookie', async () => {
    const wrong = await call(h, 'POST', '/console/session', { body: { token: CLIENT_TOKEN } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers['set-cookie'], undefined);
    assert.equal(wrong.headers['www-authenticate'], 'Bearer realm="airlock"');
    const empty = await call(h, 'POST', '/console/session', { body: { token: '' } });
    assert.equal(empty.status, 401);
    assert.deepEqual(
      h.authFailed.map((f) => f.reason),
      ['invalid_credentials', 'missing_credentials'],
    );
  });

  it('adds Secure to the cookie when configured', async () => {
    const secure = await startHarness({ secureCookies: true });
    try {
      const { setCookie } = await signIn(secure);
      assert.match(setCookie, /; Secure/);
    } finally {
      await stopHarness(secure);
    }
  });

  it('refuses a cookie POST without the CSRF header (403) and leaves the action pending', async () => {
    const id = await h.desk.propose(ALICE, 't1');
    const { cookie } = await signIn(h);
    const forged = await call(h, 'POST', `/approvals/${id}/approve`, { headers: { cookie } });
    assert.equal(forged.status, 403);
    assert.equal(forged.body.error.status, 'PERMISSION_DENIED');
    assert.equal(forged.body.error.reason, 'csrf');
    assert.equal(h.desk.decisions.length, 0, 'the desk was never asked');
    const still = await call(h, 'GET', `/approvals/${id}`, { headers: bearer(ALICE_TOKEN) });
    assert.equal(still.body.approval.status, 'pending');
  });

  it('refuses a cookie POST with a wrong CSRF token or a foreign Origin (403)', async () => {
    const id = await h.desk.propose(ALICE, 't1');
    const { cookie, csrf } = await signIn(h);
    const wrongToken = await call(h, 'POST', `/approvals/${id}/approve`, {
      headers: { cookie, 'x-airlock-csrf': `${csrf.slice(0, -1)}x` },
    });
    assert.equal(wrongToken.status, 403);
    const foreign = await call(h, 'POST', `/approvals/${id}/approve`, {
      headers: { cookie, 'x-airlock-csrf': csrf, origin: 'https://evil.example' },
    });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.error.reason, 'csrf');
    const crossSite = await call(h, 'POST', `/approvals/${id}/approve`, {
      headers: { cookie, 'x-airlock-csrf': csrf, 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(crossSite.status, 403);
    const otherPort = await call(h, 'POST', `/approvals/${id}/approve`, {
      headers: { cookie, 'x-airlock-csrf': csrf, origin: 'http://127.0.0.1:1' },
    });
    assert.equal(otherPort.status, 403);
    assert.equal(h.desk.decisions.length, 0);
    const foreignSignIn = await call(h, 'POST', '/console/session', {
      headers: { origin: 'https://evil.example' },
      body: { token: ALICE_TOKEN },
    });
    assert.equal(foreignSignIn.status, 403, 'no login CSRF');
  });

  it('accepts a cookie POST with the right CSRF header and same Origin (200)', async () => {
    const id = await h.desk.propose(ALICE, 't1');
    const question = {
      questionId: 'q-2',
      taskId: 't',
      agent: 'ops',
      remoteAgent: 'travel',
      remoteTaskId: 'r',
      remoteContextId: 'c',
      state: 'input-required',
      question: 'When?',
      status: 'pending',
      createdAt: new Date(deskNow).toISOString(),
      expiresAt: new Date(deskNow + 1000).toISOString(),
    } as const;
    h.desk.questionList.push(question);
    const { cookie, csrf } = await signIn(h);
    const reply = await call(h, 'POST', `/approvals/${id}/approve`, {
      headers: { cookie, 'x-airlock-csrf': csrf, origin: `http://${h.host}`, 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.approval.status, 'approved');
    assert.equal(h.desk.decisions[0]?.userId, ALICE);
    const answered = await call(h, 'POST', '/approvals/questions/q-2/answer', {
      headers: { cookie, 'x-airlock-csrf': csrf },
      body: { text: 'now' },
    });
    assert.equal(answered.status, 200);
  });

  it('lets a bearer decide when both a bearer and a cookie are sent (no CSRF header needed)', async () => {
    const id = await h.desk.propose(BOB, 't1');
    const { cookie } = await signIn(h); // alice's cookie
    const reply = await call(h, 'POST', `/approvals/${id}/approve`, { headers: { cookie, ...bearer(BOB_TOKEN) } });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(h.desk.decisions[0]?.userId, BOB);
    const badBearer = await call(h, 'GET', '/approvals', {
      headers: { cookie, authorization: 'Bearer nobody-0123456789' },
    });
    assert.equal(badBearer.status, 401, 'a bad bearer is not rescued by a good cookie');
  });

  it('never logs the session id, the CSRF token or a token', async () => {
    await h.desk.propose(ALICE, 't1');
    const { cookie, id, csrf } = await signIn(h);
    await call(h, 'GET', '/console/api/overview', { headers: { cookie } });
    await call(h, 'POST', '/console/session', { body: { token: CLIENT_TOKEN } });
    await call(h, 'GET', '/approvals', { headers: bearer(BOB_TOKEN) });
    await call(h, 'GET', '/approvals', { headers: bearer('wrong-0123456789abcdef0123456789') });
    await call(h, 'DELETE', '/console/session', { headers: { cookie } });
    await call(h, 'DELETE', '/console/session', { headers: { cookie, 'x-airlock-csrf': csrf } });
    await call(h, 'GET', '/console/api/overview', { headers: { cookie } });
    assert.ok(h.logs.length >= 4, 'something was logged');
    const all = h.logs.join('\n');
    for (const secret of [id, csrf, ALICE_TOKEN, BOB_TOKEN, CLIENT_TOKEN, 'wrong-0123456789abcdef0123456789']) {
      assert.ok(!all.includes(secret), 'a secret reached the log');
    }
  });
});

describe('console pages', () => {
  it('serves the page and assets with the strict CSP and security headers', async () => {
    const h = await startHarness();
    try {
      for (const [path, type] of [
        ['/console', /^text\/html/],
        ['/console/app.js', /^text\/javascript/],
        ['/console/app.css', /^text\/css/],
      ] as const) {
        const reply = await call(h, 'GET', path);
        assert.equal(reply.status, 200, path);
        assert.match(String(reply.headers['content-type']), type);
        assert.equal(reply.headers['content-security-policy'], CONSOLE_CSP);
        assert.equal(reply.headers['x-frame-options'], 'DENY');
        assert.equal(reply.headers['x-content-type-options'], 'nosniff');
        assert.equal(reply.headers['referrer-policy'], 'no-referrer');
        assert.equal(reply.headers['cache-control'], 'no-store');
      }
      const page = await call(h, 'GET', '/console');
      assert.doesNotMatch(page.text, /<script>|<style|style=|\bon[a-z]+=/i, 'no inline script or style');
      assert.match(page.text, /<label for="token">Your token or JWT<\/label>/);
      assert.match(page.text, /type="password"/);
      const script = await call(h, 'GET', '/console/app.js');
      assert.doesNotMatch(script.text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
      assert.equal((await call(h, 'POST', '/console/app.js')).status, 405);
      assert.equal((await call(h, 'GET', '/console/nope')).status, 404);
    } finally {
      await stopHarness(h);
    }
  });

  it('is not served when the console is disabled (404), while /approvals still is', async () => {
    const h = await startHarness({ console: false });
    try {
      for (const path of ['/console', '/console/app.js', '/console/session']) {
        const reply = await call(h, 'GET', path);
        assert.equal(reply.status, 404, path);
        assert.equal(reply.headers['content-security-policy'], undefined, 'not served by the console routes');
      }
      const signIn = await call(h, 'POST', '/console/session', { body: { token: ALICE_TOKEN } });
      assert.equal(signIn.status, 404);
      assert.equal((await call(h, 'GET', '/approvals', { headers: bearer(ALICE_TOKEN) })).status, 200);
    } finally {
      await stopHarness(h);
    }
  });
});
