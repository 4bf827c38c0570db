/**
 * The reference: an echo agent on the official SDK (@a2a-js/sdk 1.3, express 5), serving
 * v0.3 JSON-RPC through `legacyCompat`. It does what Airlock's echo agent does for
 * `message/send`: a task with one artifact holding the caller's text, then COMPLETED. Like
 * Airlock it checks a bearer token on every call (SHA-256 + constant-time compare), so both
 * agents pay for authentication.
 *
 * Run by bench/inbound.ts; prints `listening on http://127.0.0.1:PORT` as its first line.
 * JSON-RPC endpoint: POST /a2a/jsonrpc.
 * Env: PORT (default 0 = any free port), BENCH_TOKEN (required bearer token; unset = no auth).
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { A2A_PROTOCOL_VERSION, TaskState, type AgentCard, type Part } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const HOST = '127.0.0.1';
const RPC_PATH = '/a2a/jsonrpc';

function echoCard(baseUrl: string): AgentCard {
  return {
    name: 'sdk-echo',
    description: 'Echo agent on @a2a-js/sdk (benchmark peer)',
    version: '1.0.0',
    // legacyCompat answers v0.3 calls only when the card declares a v0.3 interface.
    supportedInterfaces: duplicateInterfacesForLegacy(
      [
        {
          url: `${baseUrl}${RPC_PATH}`,
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

function textPart(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function textOf(parts: readonly Part[]): string {
  let text = '';
  for (const part of parts) if (part.content?.$case === 'text') text += part.content.value;
  return text;
}

/** Task first (the SDK requires it), then the echoed text as an artifact, then COMPLETED. */
class EchoExecutor implements AgentExecutor {
  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = context;
    const timestamp = new Date().toISOString();
    bus.publish(
      AgentEvent.task(
        context.task ?? {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp },
          artifacts: [],
          history: [userMessage],
          metadata: undefined,
        },
      ),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        append: false,
        lastChunk: true,
        metadata: undefined,
        artifact: {
          artifactId: randomUUID(),
          name: 'reply',
          description: '',
          parts: [textPart(textOf(userMessage.parts))],
          metadata: undefined,
          extensions: [],
        },
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp },
        metadata: undefined,
      }),
    );
  };

  /** The handler waits for a terminal event after a cancel, so publish one. */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
  };
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
  const requestHandler = new DefaultRequestHandler(echoCard(baseUrl), new InMemoryTaskStore(), new EchoExecutor());
  if (token !== undefined && token.length > 0) app.use(RPC_PATH, bearerGuard(token));
  app.use(
    RPC_PATH,
    jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }),
  );
  process.stdout.write(`listening on ${baseUrl}\n`);
});

function stop(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
