/**
 * The reference: an echo agent on the official SDK (@a2a-js/sdk 1.3, express 5), serving
 * v0.3 JSON-RPC through `legacyCompat`. It does what Airlock's echo agent does for
 * `message/send`: a task with one artifact holding the caller's text, then COMPLETED. Like
 * Airlock it checks a bearer token on every call (SHA-256 + constant-time compare), so both
 * agents pay for authentication.
 *
 * Two more agents for the streaming and memory benches, on their own endpoints:
 * - `POST /a2a/writer`: the equivalent of Airlock's `writer` agent with no pause between chunks:
 *   the task, two `working` updates (the second with a status message), five text chunks of one
 *   artifact (appended), then COMPLETED: nine events, as Airlock streams them;
 * - `POST /a2a/hold`: the task and one `working` update, then the task stays open until it is
 *   canceled or the process ends (held streams for the memory bench).
 *
 * Run by bench/inbound.ts, bench/stream.ts and bench/memory.ts; prints
 * `listening on http://127.0.0.1:PORT` as its first line.
 * JSON-RPC endpoints: POST /a2a/jsonrpc (echo), /a2a/writer, /a2a/hold.
 * Env: PORT (default 0 = any free port), BENCH_TOKEN (required bearer token; unset = no auth).
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { A2A_PROTOCOL_VERSION, TaskState, type AgentCard } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import {
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutionEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
// The SDK's event literals, shared with the tests' SDK peers.
import { replyChunk, statusEvent, openingTask, textOf } from '../../test/helpers/sdk-events.js';

const HOST = '127.0.0.1';
const RPC_PATH = '/a2a/jsonrpc';
const WRITER_PATH = '/a2a/writer';
const HOLD_PATH = '/a2a/hold';
/** A held task ends by itself after this long, so that nothing outlives a forgotten run. */
const HOLD_MAX_MS = 600_000;

function echoCard(baseUrl: string, path = RPC_PATH): AgentCard {
  return {
    name: 'sdk-echo',
    description: 'Echo agent on @a2a-js/sdk (benchmark peer)',
    version: '1.0.0',
    // legacyCompat answers v0.3 calls only when the card declares a v0.3 interface.
    supportedInterfaces: duplicateInterfacesForLegacy(
      [
        {
          url: `${baseUrl}${path}`,
          protocolBinding: 'JSONRPC',
          tenant: '',
          protocolVersion: A2A_PROTOCOL_VERSION,
        },
      ],
      ['JSONRPC'],
    ),
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Repeats the text it was sent.',
        tags: ['echo'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/** Task first (the SDK requires it), then the echoed text as an artifact, then COMPLETED. */
class EchoExecutor implements AgentExecutor {
  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = context;
    bus.publish(openingTask(context));
    bus.publish(replyChunk(taskId, contextId, { text: textOf(userMessage.parts) }));
    bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_COMPLETED));
  };

  /** The handler waits for a terminal event after a cancel, so publish one. */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    cancelled(taskId, bus);
  };
}

/** The same chunks as Airlock's writer agent about "hello". */
const WRITER_CHUNKS = [
  'Here is a short piece about "hello". ',
  'Every subject starts as a question, and this one is no exception. ',
  'Look at it closely and the small details begin to matter; ',
  'step back and the shape of the whole becomes clear. ',
  'That is all for now: thank you for asking about "hello".',
];

function working(context: RequestContext, text?: string): AgentExecutionEvent {
  return statusEvent(context.taskId, context.contextId, TaskState.TASK_STATE_WORKING, text);
}

/** Streams like Airlock's writer agent with `chunkDelayMs: 0`. */
class WriterExecutor implements AgentExecutor {
  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = context;
    bus.publish(openingTask(context));
    bus.publish(working(context));
    bus.publish(working(context, 'Writing about "hello"…'));
    const artifactId = randomUUID();
    for (const [index, text] of WRITER_CHUNKS.entries()) {
      const last = index === WRITER_CHUNKS.length - 1;
      bus.publish(replyChunk(taskId, contextId, { text, artifactId, append: index > 0, last }));
    }
    bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_COMPLETED));
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => cancelled(taskId, bus);
}

/** Keeps its task working until it is canceled (or HOLD_MAX_MS pass). */
class HoldExecutor implements AgentExecutor {
  readonly #release = new Map<string, () => void>();

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    bus.publish(openingTask(context));
    bus.publish(working(context, 'Holding'));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, HOLD_MAX_MS);
      timer.unref();
      this.#release.set(context.taskId, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.#release.delete(context.taskId);
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.#release.get(taskId)?.();
    cancelled(taskId, bus);
  };
}

function cancelled(taskId: string, bus: ExecutionEventBus): void {
  bus.publish(statusEvent(taskId, '', TaskState.TASK_STATE_CANCELED));
}

/** Express middleware: 401 unless `Authorization: Bearer <token>` matches. */
function bearerGuard(token: string): (req: Request, res: Response, next: NextFunction) => void {
  const expected = createHash('sha256').update(token).digest();
  return (req, res, next) => {
    const header = req.get('authorization') ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7) : '';
    const digest = createHash('sha256').update(given).digest();
    if (given.length > 0 && timingSafeEqual(digest, expected)) return next();
    res.status(401).json({ error: 'unauthorized' });
  };
}

const app = express();
const token = process.env.BENCH_TOKEN;
const server = app.listen(Number(process.env.PORT ?? 0), HOST, () => {
  const baseUrl = `http://${HOST}:${(server.address() as AddressInfo).port}`;
  const agents: [string, AgentExecutor][] = [
    [RPC_PATH, new EchoExecutor()],
    [WRITER_PATH, new WriterExecutor()],
    [HOLD_PATH, new HoldExecutor()],
  ];
  for (const [path, executor] of agents) {
    const requestHandler = new DefaultRequestHandler(echoCard(baseUrl, path), new InMemoryTaskStore(), executor);
    if (token !== undefined && token.length > 0) app.use(path, bearerGuard(token));
    app.use(
      path,
      jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }),
    );
  }
  process.stdout.write(`listening on ${baseUrl}\n`);
});

function stop(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
