/**
 * `airlock call`: send one message to an A2A endpoint and print the reply — a way to try an
 * endpoint by hand, like curl that speaks A2A v1.0. The token comes from `AIRLOCK_TOKEN`, so
 * it never sits in the process list. (Agents reach remote agents through the registry-bound
 * outbound client instead, never by URL.)
 *
 * Output: the reply text alone on stdout (streamed as it is written with `--stream`); progress
 * (each status the agent reports, one line each) and the task line on stderr. A failure is one
 * line: nothing listening at the URL, a URL that is not an agent endpoint, an HTTP status with
 * the server's own message.
 *
 * @example
 * ```sh
 * AIRLOCK_TOKEN=$(cat .airlock/demo-token) airlock call http://127.0.0.1:41241/a2a/writer "the sea" --stream
 * ```
 */
import { randomUUID } from 'node:crypto';
import { readSseEvents } from '../client/sse-reader.js';
import { A2AError } from '../protocol/errors.js';
import type { Message, Part, SendParams, StreamEvent, Task } from '../protocol/model.js';
import { v10 } from '../protocol/v10/index.js';

export interface CallOptions {
  url: string;
  text: string;
  token?: string;
  stream: boolean;
  taskId?: string;
  contextId?: string;
  json: boolean;
}

/** Exit codes: 0 completed, 3 the agent asks for input, 1 anything else. */
export async function call(options: CallOptions): Promise<number> {
  const url = new URL(options.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('the URL must be http or https');
  if (url.username !== '' || url.password !== '') throw new Error('the URL must not carry credentials');
  const message: Message = {
    messageId: randomUUID(),
    role: 'user',
    parts: [{ kind: 'text', text: options.text }],
    ...(options.taskId !== undefined && { taskId: options.taskId }),
    ...(options.contextId !== undefined && { contextId: options.contextId }),
  };
  const params: SendParams = { message, configuration: { returnImmediately: false } };
  const request = v10.encodeRequest({ method: options.stream ? 'stream' : 'send', params });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'a2a-version': '1.0',
    accept: options.stream ? 'text/event-stream' : 'application/json',
  };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers,
      redirect: 'error',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...request }),
    });
  } catch (error) {
    throw new Error(unreachable(url, error), { cause: error });
  }
  if (response.status === 401) throw new Error('401 unauthorized: set AIRLOCK_TOKEN to a client token');
  if (response.status === 403) throw new Error('403 forbidden: this client may not call this agent');
  if (response.status === 404 || response.status === 405) {
    await response.arrayBuffer();
    throw new Error(
      `${url.href} is not an agent endpoint (HTTP ${response.status}); did you mean ${url.origin}/a2a/<agent>? (the agents are listed in the gateway's banner)`,
    );
  }
  if (response.status >= 400 && !(response.headers.get('content-type') ?? '').includes('json')) {
    await response.arrayBuffer();
    throw new Error(`HTTP ${response.status} from ${url.href}`);
  }
  const contentType = response.headers.get('content-type') ?? '';
  let task: Task | undefined;
  let reply: Message | undefined;
  const progress = { wroteReply: false };
  if (contentType.startsWith('text/event-stream') && response.body !== null) {
    for await (const event of readSseEvents(response.body)) {
      const frame = parseFrame(event.data, response.status);
      const update = v10.decodeStreamEvent(frame);
      if (!options.json) printProgress(update, progress);
      if (update.kind === 'task') task = update.task;
      if (update.kind === 'message') reply = update.message;
      if (update.kind === 'status-update' && task !== undefined) task = { ...task, status: update.status };
    }
    if (!options.json && progress.wroteReply) process.stdout.write('\n');
  } else {
    const result = v10.decodeSendResult(parseFrame(await response.text(), response.status));
    if (result.kind === 'task') task = result.task;
    else reply = result.message;
    if (!options.json) process.stdout.write(`${replyText(task, reply)}\n`);
  }
  if (options.json) process.stdout.write(`${JSON.stringify(task ?? reply, null, 2)}\n`);
  if (task !== undefined) {
    process.stderr.write(`task ${task.id} ${task.status.state} (context ${task.contextId})\n`);
    if (task.status.state === 'input-required') return 3;
    return task.status.state === 'completed' ? 0 : 1;
  }
  return 0;
}

function parseFrame(text: string, status: number): unknown {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    throw new Error(status >= 400 ? `HTTP ${status}, and not JSON` : 'the endpoint did not answer JSON');
  }
  const record = frame as { jsonrpc?: unknown; result?: unknown; error?: unknown };
  if (record.jsonrpc !== '2.0') {
    // An HTTP refusal before JSON-RPC (google.rpc.Status-style): its own message, one line.
    const message = (record.error as { message?: unknown } | undefined)?.message;
    throw new Error(`HTTP ${status}${typeof message === 'string' ? `: ${oneLine(message)}` : ''}`);
  }
  if (record.error !== undefined) {
    const error = v10.decodeError(record.error);
    throw new Error(`${error.rpcCode} ${error.message}`);
  }
  if (record.result === undefined) throw new A2AError('INVALID_AGENT_RESPONSE', 'no result in the response');
  return record.result;
}

/** Reply text to stdout as it comes; each status the agent reports to stderr, one line each. */
function printProgress(event: StreamEvent, progress: { wroteReply: boolean }): void {
  const reply =
    event.kind === 'artifact-update'
      ? textOf(event.artifact.parts)
      : event.kind === 'message'
        ? textOf(event.message.parts)
        : '';
  if (reply.length > 0) {
    process.stdout.write(reply);
    progress.wroteReply = true;
  }
  if (event.kind === 'status-update') {
    const text = event.status.message === undefined ? '' : oneLine(textOf(event.status.message.parts));
    process.stderr.write(`[${event.status.state}]${text.length > 0 ? ` ${text}` : ''}\n`);
  }
}

/** Why nothing answered at `url`, in one line. */
function unreachable(url: URL, error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  if (code === 'ECONNREFUSED') return `nothing is listening at ${url.origin} (is the gateway running?)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `${url.hostname} does not resolve`;
  return `could not reach ${url.origin}${code !== undefined ? ` (${code})` : ''}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

function replyText(task: Task | undefined, reply: Message | undefined): string {
  if (reply !== undefined) return textOf(reply.parts);
  if (task === undefined) return '';
  const artifacts = task.artifacts.map((artifact) => textOf(artifact.parts)).filter((text) => text.length > 0);
  const status = task.status.message === undefined ? '' : textOf(task.status.message.parts);
  return [...artifacts, status].filter((text) => text.length > 0).join('\n');
}

function textOf(parts: readonly Part[]): string {
  return parts.map((part) => (part.kind === 'text' ? part.text : `[${part.kind} part]`)).join('');
}
