/**
 * An OpenAI-compatible chat-completions server on loopback that plays a script: each request
 * gets the next scripted answer, streamed as `chat.completion.chunk` SSE events the way OpenAI
 * streams them (text in token deltas; tool calls as a first delta with index, id and name, then
 * the arguments in small pieces, parallel calls interleaved if asked), then `finish_reason` and
 * `[DONE]`. It records every request (parsed body), so a test can read what the model was sent:
 * the offered tools, the tool results, the transcript.
 *
 * @example
 * ```ts
 * const model = await startScriptedModel([
 *   { toolCalls: [{ name: 'fs_read', arguments: { path: 'a.txt' } }] },
 *   { text: ['The file ', 'says hi.'] },
 * ]);
 * const backend = createOpenAiBackend(testConfig(model.baseUrl));
 * await collect(backend, turn);
 * model.requests[1].body.messages.at(-1); // { role: 'tool', tool_call_id: 'call_1', content: … }
 * await model.close();
 * ```
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One tool call the model makes. */
export interface ScriptedCall {
  /** Sent as the call's id; `call_<n>` (n counting over the whole script) when left out, none when `null`. */
  readonly id?: string | null;
  readonly name: string;
  /** A string is sent as it is (so it may be malformed JSON); anything else as its JSON. */
  readonly arguments?: unknown;
}

/** One scripted answer. */
export type ScriptedAnswer =
  /** A text reply, streamed one delta per piece. */
  | { readonly text: string | readonly string[] }
  /**
   * An answer with tool calls (and optional text before them). `interleave` streams the argument
   * pieces of parallel calls alternately; `json` answers with one whole JSON object instead of a stream.
   */
  | {
      readonly toolCalls: readonly ScriptedCall[];
      readonly text?: string;
      readonly interleave?: boolean;
      readonly json?: boolean;
      readonly finishReason?: string;
    }
  /** The response head, one text delta, and then nothing: a model that stalls. */
  | { readonly stall: true }
  /** The response head and then nothing at all: a model that never sends a token. */
  | { readonly silent: true }
  /** An HTTP error with an OpenAI error body. */
  | { readonly status: number; readonly message: string };

/** A request the model received. */
export interface ScriptedRequest {
  /** The JSON body, parsed. */
  readonly body: any;
  /** Resolves once the response is over: `finished`, or `closed` when the client went away first. */
  readonly ended: Promise<'finished' | 'closed'>;
}

/** A running scripted model. */
export interface ScriptedModel {
  /** `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string;
  readonly requests: ScriptedRequest[];
  /** Resolves when the `n`-th request (1-based) has arrived. */
  requestArrived(n: number): Promise<ScriptedRequest>;
  close(): Promise<void>;
}

/**
 * Starts the server. `script` is a list (played in order; a request past its end gets HTTP 500)
 * or a function of the request and its 1-based number (for a model that never stops calling).
 *
 * @example
 * ```ts
 * const endless = await startScriptedModel(() => ({ toolCalls: [{ name: 'fs_read', arguments: {} }] }));
 * ```
 */
export async function startScriptedModel(
  script: readonly ScriptedAnswer[] | ((request: ScriptedRequest, n: number) => ScriptedAnswer),
): Promise<ScriptedModel> {
  const requests: ScriptedRequest[] = [];
  const waiters: Array<{ n: number; resolve: (request: ScriptedRequest) => void }> = [];
  let callNumber = 0;
  const server = createServer((req, res) => {
    const ended = new Promise<'finished' | 'closed'>((resolve) => {
      res.on('close', () => resolve(res.writableFinished ? 'finished' : 'closed'));
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      const request: ScriptedRequest = { body, ended };
      requests.push(request);
      const n = requests.length;
      for (const waiter of waiters.filter((w) => w.n <= n)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(requests[waiter.n - 1] as ScriptedRequest);
      }
      const answer = typeof script === 'function' ? script(request, n) : script[n - 1];
      if (answer === undefined) {
        answerError(res, 500, `the script has no answer for request ${n}`);
        return;
      }
      play(res, answer, () => ++callNumber);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    requestArrived(n) {
      if (requests.length >= n) return Promise.resolve(requests[n - 1] as ScriptedRequest);
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function play(res: ServerResponse, answer: ScriptedAnswer, nextCall: () => number): void {
  if ('status' in answer) {
    answerError(res, answer.status, answer.message);
    return;
  }
  if ('silent' in answer) {
    startStream(res);
    return;
  }
  if ('stall' in answer) {
    startStream(res);
    res.write(chunk({ role: 'assistant', content: 'thinking' }));
    return;
  }
  if ('text' in answer && !('toolCalls' in answer)) {
    const pieces = typeof answer.text === 'string' ? [answer.text] : answer.text;
    startStream(res);
    res.write(chunk({ role: 'assistant', content: '' }));
    for (const piece of pieces) res.write(chunk({ content: piece }));
    res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
    return;
  }
  const calls = answer.toolCalls.map((call) => {
    const number = nextCall();
    return {
      id: call.id === undefined ? `call_${number}` : call.id,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
    };
  });
  const finishReason = answer.finishReason ?? 'tool_calls';
  if (answer.json === true) {
    const body = JSON.stringify({
      id: 'chatcmpl-scripted',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'scripted',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: answer.text ?? null,
            tool_calls: calls.map((call) => ({
              ...(call.id !== null && { id: call.id }),
              type: 'function',
              function: { name: call.name, arguments: call.arguments },
            })),
          },
          finish_reason: finishReason,
        },
      ],
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  startStream(res);
  res.write(chunk({ role: 'assistant', content: answer.text ?? null }));
  calls.forEach((call, index) => {
    res.write(
      chunk({
        tool_calls: [
          {
            index,
            ...(call.id !== null && { id: call.id }),
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
  });
  const pieces = calls.map((call) => splitEvery(call.arguments, 7));
  if (answer.interleave === true) {
    const longest = Math.max(0, ...pieces.map((list) => list.length));
    for (let step = 0; step < longest; step++) {
      pieces.forEach((list, index) => {
        const piece = list[step];
        if (piece !== undefined) res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      });
    }
  } else {
    pieces.forEach((list, index) => {
      for (const piece of list) res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
  }
  res.end(`${chunk({}, finishReason)}data: [DONE]\n\n`);
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const body = {
    id: 'chatcmpl-scripted',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'scripted',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function answerError(res: ServerResponse, status: number, message: string): void {
  const text = JSON.stringify({ error: { message, type: 'scripted_error' } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function splitEvery(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}
