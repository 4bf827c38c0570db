/**
 * What the inbound benches send and how they configure Airlock: the `message/send` body, the
 * request headers and the gateway's config, shared by bench/inbound.ts and bench/pair.ts so that
 * a paired run measures exactly the bench's every-guard row.
 */
import { join } from 'node:path';
import { ECHO_AGENT_AND_CLIENT } from './common.js';

/** The v0.3 `message/send` every server is sent, with the text of `--text` ('hello' by default). */
export function messageSend(text: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: {
      message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text }] },
    },
  });
}

/**
 * The bench config. Every request passes the gate, auth, the rate limit and the per-client task
 * cap (both set high enough never to refuse), body and depth limits, message limits, content rules, suspicious-pattern counting
 * and the in-flight caps in both variants; `guarded` adds what is off by default: the audit file
 * (two rows per task, group-committed), reply scrubbing, X-Forwarded-For parsing for a trusted proxy,
 * the X-API-Key header and the REST routes.
 */
export function airlockConfig(guarded: boolean, workDir: string, store: string[] = []): string {
  return [
    ...store,
    'server:',
    '  host: 127.0.0.1',
    '  port: 0',
    ...(guarded ? ['  trustedProxies: [127.0.0.1]', '  apiKeyHeader: true', '  rest: true'] : []),
    'limits:',
    '  requestsPerMinute: 100000000',
    // Above the 50 connections of one client: a task holds its slot until its audit row is
    // written (group commit, one event-loop turn), so the default 16 would refuse requests.
    '  maxConcurrentTasksPerPrincipal: 64',
    ...(guarded
      ? [
          'content:',
          "  scrubSecrets: ['bench-secret-never-to-leave-0123456789']",
          'audit:',
          `  file: '${join(workDir, 'audit.jsonl')}'`,
        ]
      : []),
    ...ECHO_AGENT_AND_CLIENT,
    '',
  ].join('\n');
}

/** The bearer token and JSON content type every request carries. */
export function requestHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

/**
 * The every-guard row's headers: the token, and an `X-Forwarded-For` that the trusted-proxy
 * parsing reads on every request (the config trusts 127.0.0.1).
 */
export function guardedHeaders(token: string): Record<string, string> {
  return { ...requestHeaders(token), 'x-forwarded-for': '127.0.0.1' };
}
