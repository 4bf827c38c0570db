/**
 * `airlock approvals list|approve|deny|questions|answer`: the person's side of a guarded action,
 * and of a remote agent's question, from a terminal.
 * It talks to a running gateway's `/approvals` endpoints with the person's OWN credential — a
 * person token from `approvals.people` or their JWT — read from `AIRLOCK_PERSON_TOKEN` (never a
 * flag: a flag shows in `ps` and shell history). A client token is refused by the gateway: the
 * caller of an agent never approves its own action.
 *
 * Output: `list` prints one block per pending action (id, agent, client, tool, level and its
 * meaning, redacted arguments as one line of JSON with every invisible or bidi character written
 * as `\uXXXX`, a `WARNING hidden characters:` line when there are any, expiry), or
 * `no pending approvals`; `--json` prints the views.
 * `approve`/`deny` print `approved <id>` / `denied <id>`. `questions` prints each remote agent's
 * question waiting for you (id, agent, remote agent, the question as untrusted text); `answer`
 * prints `answered <id>`. Exit 0 on success; 1 when the gateway
 * refused (one line with its reason: not yours, already decided, expired, unknown id) or cannot
 * be reached; 2 for a missing credential or a bad URL.
 *
 * @example
 * ```sh
 * export AIRLOCK_PERSON_TOKEN=$(cat ~/.airlock/alice-token)
 * airlock approvals list --url http://127.0.0.1:41241
 * airlock approvals approve 3q2-… --url http://127.0.0.1:41241
 * airlock approvals answer Zk9-… "Wednesday at 7"
 * ```
 */
import { displayArgs, escapeText, hiddenWarning } from '../approvals/display.js';
import type { JsonValue } from '../approvals/redact.js';
import { errorLine, PROCESS_IO, type CommandIO } from './registry.js';

/** Where the gateway is; `AIRLOCK_URL` or the default local gateway when unset. */
export interface ApprovalsCommandOptions {
  url?: string;
  json?: boolean;
}

const DEFAULT_URL = 'http://127.0.0.1:41241';
const TIMEOUT_MS = 10_000;
const ACTION_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** What the gateway takes as one answer. */
const MAX_ANSWER_CHARS = 8192;

interface ApprovalViewJson {
  actionId: string;
  agent: string;
  client: string;
  tool: string;
  level: string;
  levelName: string;
  levelMeaning: string;
  args: unknown;
  expiresAt: string;
  taskId: string;
}

/**
 * Lists the actions waiting for the signed-in person. Resolves with the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await approvalsListCommand({ url: 'http://127.0.0.1:41241' });
 * ```
 */
export async function approvalsListCommand(
  options: ApprovalsCommandOptions,
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  return listCommand<ApprovalViewJson>(options, io, {
    name: 'list',
    path: '/approvals',
    key: 'approvals',
    empty: 'no pending approvals',
    lines: (view) => {
      // Escaped here, from the arguments themselves (not the gateway's display text): an
      // invisible or bidi character never reaches the terminal raw, and the line decodes
      // (JSON.parse) to exactly the arguments that run.
      const shown = displayArgs((view.args ?? null) as JsonValue);
      const warning = hiddenWarning(shown);
      return [
        escapeText(view.actionId),
        `  agent ${escapeText(view.agent)} · client ${escapeText(view.client)} · task ${escapeText(view.taskId)}`,
        `  tool ${escapeText(view.tool)} · ${escapeText(view.level)} ${escapeText(view.levelName)}: ${escapeText(view.levelMeaning)}`,
        ...(warning === undefined ? [] : [`  WARNING hidden characters: ${warning}`]),
        `  args ${shown.text}`,
        `  expires ${escapeText(view.expiresAt)}`,
      ];
    },
  });
}

/**
 * Approves or denies one action as the signed-in person. Resolves with the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await approvalsDecideCommand('approve', actionId, { url });
 * ```
 */
export async function approvalsDecideCommand(
  decision: 'approve' | 'deny',
  actionId: string,
  options: ApprovalsCommandOptions,
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  if (!ACTION_ID.test(actionId)) {
    io.stderr(`airlock approvals ${decision}: not an action id (copy it from \`airlock approvals list\`)\n`);
    return 2;
  }
  const prepared = prepare(options, io);
  if (typeof prepared === 'number') return prepared;
  try {
    await request(prepared, 'POST', `/approvals/${actionId}/${decision}`);
    io.stdout(`${decision === 'approve' ? 'approved' : 'denied'} ${actionId}\n`);
    return 0;
  } catch (error) {
    io.stderr(`airlock approvals ${decision}: ${errorLine(error)}\n`);
    return 1;
  }
}

interface QuestionViewJson {
  questionId: string;
  agent: string;
  remoteAgent: string;
  state: string;
  question: string;
  expiresAt: string;
  taskId: string;
}

/**
 * Lists the remote agents' questions waiting for the signed-in person. Resolves with the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await approvalsQuestionsCommand({ url });
 * ```
 */
export async function approvalsQuestionsCommand(
  options: ApprovalsCommandOptions,
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  return listCommand<QuestionViewJson>(options, io, {
    name: 'questions',
    path: '/approvals/questions',
    key: 'questions',
    empty: 'no questions waiting',
    lines: (view) => [
      view.questionId,
      `  agent ${view.agent} · remote ${view.remoteAgent} (${view.state}) · task ${view.taskId}`,
      // The remote's words: shown as data, one line, never as instructions.
      `  asks (untrusted) ${displayArgs(view.question).text}`,
      `  expires ${view.expiresAt}`,
    ],
  });
}

/**
 * Answers one remote agent's question as the signed-in person; the answer goes to the remote
 * task when the caller next sends a message on its task. Resolves with the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await approvalsAnswerCommand(questionId, 'Wednesday', { url });
 * ```
 */
export async function approvalsAnswerCommand(
  questionId: string,
  text: string,
  options: ApprovalsCommandOptions,
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  if (!ACTION_ID.test(questionId)) {
    io.stderr('airlock approvals answer: not a question id (copy it from `airlock approvals questions`)\n');
    return 2;
  }
  if (text.length === 0 || text.length > MAX_ANSWER_CHARS) {
    io.stderr(`airlock approvals answer: the answer must be 1 to ${MAX_ANSWER_CHARS} characters\n`);
    return 2;
  }
  const prepared = prepare(options, io);
  if (typeof prepared === 'number') return prepared;
  try {
    await request(prepared, 'POST', `/approvals/questions/${questionId}/answer`, { text });
    io.stdout(`answered ${questionId}\n`);
    return 0;
  } catch (error) {
    io.stderr(`airlock approvals answer: ${errorLine(error)}\n`);
    return 1;
  }
}

/** One of the listing commands: what it reads and how it prints each view. */
interface Listing<T> {
  name: string;
  path: string;
  key: string;
  empty: string;
  lines: (view: T) => string[];
}

async function listCommand<T>(options: ApprovalsCommandOptions, io: CommandIO, listing: Listing<T>): Promise<number> {
  const prepared = prepare(options, io);
  if (typeof prepared === 'number') return prepared;
  try {
    const body = (await request(prepared, 'GET', listing.path)) as Record<string, T[] | undefined>;
    const views = body[listing.key] ?? [];
    // Still JSON (a program reads the same values), with no invisible character raw on a terminal.
    if (options.json === true) io.stdout(`${displayArgs(views as unknown as JsonValue, 2).text}\n`);
    else if (views.length === 0) io.stdout(`${listing.empty}\n`);
    else for (const view of views) io.stdout(`${[...listing.lines(view), ''].join('\n')}\n`);
    return 0;
  } catch (error) {
    io.stderr(`airlock approvals ${listing.name}: ${errorLine(error)}\n`);
    return 1;
  }
}

interface Prepared {
  base: string;
  token: string;
}

function prepare(options: ApprovalsCommandOptions, io: CommandIO): Prepared | number {
  const token = io.env.AIRLOCK_PERSON_TOKEN;
  if (token === undefined || token.length === 0) {
    io.stderr('airlock approvals: set AIRLOCK_PERSON_TOKEN to your own person token or JWT\n');
    return 2;
  }
  const raw = options.url ?? io.env.AIRLOCK_URL ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    io.stderr('airlock approvals: --url is not a URL\n');
    return 2;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') {
    io.stderr('airlock approvals: --url must be an http(s) URL without credentials\n');
    return 2;
  }
  return { base: url.origin, token };
}

async function request(prepared: Prepared, method: 'GET' | 'POST', path: string, json?: unknown): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${prepared.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${prepared.token}`,
        accept: 'application/json',
        ...(json !== undefined && { 'content-type': 'application/json' }),
      },
      ...(json !== undefined && { body: JSON.stringify(json) }),
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new Error(
      `cannot reach ${prepared.base}: ${errorLine(error instanceof Error && error.cause ? error.cause : error)}`,
      { cause: error },
    );
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text.length === 0 ? undefined : JSON.parse(text);
  } catch {
    throw new Error(`${response.status}: the gateway's answer is not JSON`);
  }
  if (response.ok) return body;
  const error = (body as { error?: { message?: unknown; reason?: unknown } } | undefined)?.error;
  const message = typeof error?.message === 'string' ? error.message : response.statusText;
  const reason = typeof error?.reason === 'string' ? ` (${error.reason})` : '';
  if (response.status === 401) throw new Error('401: the gateway did not accept AIRLOCK_PERSON_TOKEN as a person');
  throw new Error(`${response.status}${reason}: ${message}`);
}
