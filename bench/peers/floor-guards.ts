/**
 * The guarded floor (`FLOOR_GUARDS=1` on bench/peers/floor-http.ts): the floor plus every check
 * the every-guard row makes on a `message/send` that Airlock runs by default, each done by calling
 * the project's own guard (the same functions and limiters Airlock's admission steps call, with
 * the bench config's limits) straight from the floor's one handler: no admission chain, no
 * dialect dispatch, no task service, no store. Where the floor says what the work by hand costs,
 * this says what the work and the guards cost, so that the rest of Airlock's cost is its
 * structure and nothing else.
 *
 * Per request, in Airlock's order: the network gate (the peer address on loopback, the hop
 * chain), the lockout of the address, the token (a failure recorded against the address), the
 * request rate of the client, the Content-Type, the body read under its size cap and deadline,
 * its JSON depth, the JSON-RPC envelope and the v0.3 codec's decoding of the request, the message
 * limits (parts, characters), the metadata caps, the content rules, the suspicious-pattern count
 * of its text (the audit file is on), an in-flight slot of the client's (held until its audit
 * rows are written) and the audit rows' safety check.
 *
 * Left out, as in the row they are the off-by-default extras (priced apart in docs/PERFORMANCE-LOG.md):
 * the reply's secret scrubbing, `X-Forwarded-For` from a trusted proxy, the `X-API-Key` header
 * and the REST routes.
 *
 * @example
 * ```ts
 * const guards = createFloorGuards({ audited: true });
 * if (!guards.admitCaller(req, res, authorised(req))) return;
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { textOf } from '../../src/agents/backend.js';
import { inspectInboundContent } from '../../src/agents/inbound/index.js';
import { assertAuditSafe } from '../../src/audit/safety.js';
import { countSuspiciousPatterns } from '../../src/content/index.js';
import { HOP_HEADER, parseHopChain } from '../../src/protocol/headers.js';
import { parseJsonRpcCall } from '../../src/protocol/jsonrpc.js';
import type { Message } from '../../src/protocol/model.js';
import { v03 } from '../../src/protocol/v03/index.js';
import { isLoopbackPeer } from '../../src/server/gate/client-address.js';
import {
  AuthFailureLimiter,
  checkMessageLimits,
  checkMetadataLimits,
  exceedsJsonDepth,
  InFlightLimiter,
  RateLimiter,
  type Release,
} from '../../src/server/limits/index.js';
import { bodyRefused } from '../../src/server/admission/body.js';
import { readBody } from '../../src/server/body.js';
import { JSON_CONTENT_TYPE } from '../../src/server/respond/response.js';

/** The bench config's limits (bench/lib/inbound-config.ts) and the defaults it keeps. */
const LIMITS = {
  requestsPerMinute: 100_000_000,
  authFailuresPerMinute: 10,
  maxBodyBytes: 1024 * 1024,
  bodyTimeoutMs: 30_000,
  maxJsonDepth: 32,
  message: { maxParts: 16, maxInputChars: 8192 },
  metadata: { maxMetadataBytes: 4096, maxMetadataKeys: 128, maxMetadataDepth: 8 },
  inFlight: { global: 256, perKey: 64 },
} as const;
/** The bench client's key, as the limiters count it. */
const CLIENT_KEY = 'client:bench';

/** What a refusal answers: the HTTP status, the JSON-RPC code and a message. */
export type Refusal = { status: number; code: number; message: string };

export interface FloorGuards {
  /** The gate, the lockout, the token's verdict and the rate: a refusal, or undefined to go on. */
  admitCaller(req: IncomingMessage, authorised: boolean): Refusal | undefined;
  /** The Content-Type, before the body is read. */
  admitBodyType(req: IncomingMessage): Refusal | undefined;
  /** Reads the body under its cap and deadline (the project's `readBody`), then checks its JSON depth. */
  readBody(req: IncomingMessage, res: ServerResponse, done: (body: Buffer) => void, refuse: (r: Refusal) => void): void;
  /** The envelope and the codec's decoding of a `message/send`: its message, or a refusal. */
  decode(frame: unknown): { id: unknown; message: Message } | Refusal;
  /**
   * The message limits, metadata caps, content rules, the suspicious count (audited only, as in
   * Airlock: the count is kept only to be recorded) and a slot; the message's text.
   */
  admitTurn(message: Message): { release: Release; text: string } | Refusal;
  /** The audit rows' safety check (throws on an unsafe row). */
  checkRow(event: Record<string, unknown>): void;
}

/**
 * The guards, built once (the limiters hold their state across requests, as Airlock's do).
 *
 * @example
 * ```ts
 * const guards = createFloorGuards({ audited: true });
 * ```
 */
export function createFloorGuards(options: { audited: boolean }): FloorGuards {
  const { audited } = options;
  const lockout = new AuthFailureLimiter({ limit: LIMITS.authFailuresPerMinute });
  const rates = new RateLimiter({ limit: LIMITS.requestsPerMinute });
  const inFlight = new InFlightLimiter(LIMITS.inFlight);
  return {
    admitCaller(req, authorised) {
      const remote = req.socket.remoteAddress;
      if (!isLoopbackPeer(remote)) return { status: 403, code: -32600, message: 'loopback only' };
      if (parseHopChain(req.headers[HOP_HEADER]) === undefined) {
        return { status: 400, code: -32600, message: 'bad hop chain' };
      }
      const now = performance.now();
      if (lockout.isLocked(remote ?? '', now) > 0) return { status: 429, code: -32600, message: 'locked out' };
      if (!authorised) {
        lockout.recordFailure(remote ?? '', now);
        return { status: 401, code: -32001, message: 'unauthorised' };
      }
      if (rates.take(CLIENT_KEY, now) !== true) return { status: 429, code: -32600, message: 'rate limited' };
      return undefined;
    },
    admitBodyType(req) {
      const type = req.headers['content-type'];
      return type === undefined || !JSON_CONTENT_TYPE.test(type)
        ? { status: 200, code: -32005, message: 'Content-Type must be application/json' }
        : undefined;
    },
    readBody(req, res, done, refuse) {
      void readBody(req, LIMITS.maxBodyBytes, LIMITS.bodyTimeoutMs).then((result) => {
        if (!result.ok) {
          // Refused as Airlock's body step refuses it: the connection closed after the answer.
          return void bodyRefused(
            req,
            res,
            result.reason,
            LIMITS.maxBodyBytes,
            LIMITS.bodyTimeoutMs,
            (status, message) => refuse({ status, code: -32600, message }),
          );
        }
        if (exceedsJsonDepth(result.body, LIMITS.maxJsonDepth)) {
          return refuse({ status: 400, code: -32600, message: 'JSON nested too deeply' });
        }
        done(result.body);
      });
    },
    decode(frame) {
      try {
        const call = parseJsonRpcCall(frame);
        const request = v03.decodeRequest(call.method, call.params);
        if (request.method !== 'send' || call.id === undefined) {
          return { status: 200, code: -32601, message: 'message/send only' };
        }
        return { id: call.id, message: request.params.message };
      } catch {
        return { status: 200, code: -32602, message: 'invalid params' };
      }
    },
    admitTurn(message) {
      const limitError = checkMessageLimits(message, LIMITS.message) ?? checkMetadataLimits(message, LIMITS.metadata);
      if (limitError !== undefined) return { status: 200, code: -32602, message: limitError.message };
      if (inspectInboundContent(message) !== undefined)
        return { status: 200, code: -32005, message: 'unsupported content' };
      const text = textOf(message);
      // Counted to be audited, and only then (as Airlock's turn-content step does); a suspicious
      // text would add a row (none in the bench's text).
      if (audited) countSuspiciousPatterns(text);
      const release = inFlight.tryAcquire(CLIENT_KEY);
      return release === null ? { status: 503, code: -32600, message: 'too many tasks in flight' } : { release, text };
    },
    checkRow(event) {
      assertAuditSafe(event);
    },
  };
}
