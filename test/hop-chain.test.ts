/**
 * Loops, not peers (issue 19): two Airlock gateways, A and B, each relaying to the other through
 * an `a2a` backend. A call from A to an agent B publishes is served (a peer); a call that B relays
 * back to A is refused at A's gate as a relay loop (508, audited `relay_loop`), and the caller of
 * the first gateway sees its task fail saying so. The hop chain each request carried is checked
 * on the wire: the gateways it passed, oldest first.
 */
import { loadRegistryFile } from '../src/client/registry.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUpstreamBackend } from '../src/agents/upstream/index.js';
import { MemoryAuditSink } from '../src/audit/index.js';
import { createUpstreamConnector, type UpstreamConnectorRuntime } from '../src/client/upstream.js';
import { HOP_HEADER } from '../src/protocol/headers.js';
import { rpc, startGateway, TOKEN_B, v10Message, type TestGateway } from './helpers/gateway.js';

const A_ID = 'gw-a-instance';
const B_ID = 'gw-b-instance';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function entry(name: string, port: number, slug: string, secret: string): string {
  return `  - name: ${name}
    card_url: http://127.0.0.1:${port}/a2a/${slug}/.well-known/agent-card.json
    description: ${slug} on 127.0.0.1:${port}
    effect: read_only
    auth: { bearer_env: ${secret} }
`;
}

function gatewayYaml(port: number, id: string, agents: string[], relays: string[]): string {
  const agent = (slug: string, relay: boolean): string => `  - slug: ${slug}
    name: ${slug}
    description: ${relay ? 'Relays to the other gateway.' : 'Echoes.'}
    skills: [{ id: ${slug}, name: ${slug}, description: test }]
    backend: { type: echo }
`;
  return `server: { host: 127.0.0.1, port: ${port}, instanceId: ${id} }
agents:
${agents.map((slug) => agent(slug, false)).join('')}${relays.map((slug) => agent(slug, true)).join('')}clients:
  - { id: caller, token: "\${TOKEN_A}", agents: [${[...agents, ...relays].join(', ')}] }
  - { id: peer, token: "\${TOKEN_B}", agents: [${[...agents, ...relays].join(', ')}] }
`;
}

describe('hop chains: two Airlock gateways talk, a relay loop is refused (issue 19)', () => {
  let dir: string;
  let a: TestGateway;
  let b: TestGateway;
  let aConnector: UpstreamConnectorRuntime;
  let bConnector: UpstreamConnectorRuntime;
  const aAudit = new MemoryAuditSink();
  const seenByA: (string | undefined)[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-hops-'));
    const [aPort, bPort] = [await freePort(), await freePort()];
    // A relays `to-b` to B's echo and `loop` to B's `back`; B relays `back` to A's `to-b`.
    await writeFile(
      join(dir, 'a-registry.yaml'),
      `agents:\n${entry('b-echo', bPort, 'echo', 'AIRLOCK_SECRET_B')}${entry('b-back', bPort, 'back', 'AIRLOCK_SECRET_B')}`,
    );
    await writeFile(join(dir, 'b-registry.yaml'), `agents:\n${entry('a-to-b', aPort, 'to-b', 'AIRLOCK_SECRET_A')}`);
    aConnector = createUpstreamConnector({
      registryPath: join(dir, 'a-registry.yaml'),
      registry: loadRegistryFile(join(dir, 'a-registry.yaml'), { AIRLOCK_SECRET_B: TOKEN_B }),
      pinsPath: join(dir, 'a-pins.json'),
      env: { AIRLOCK_SECRET_B: TOKEN_B },
      instanceId: A_ID,
    });
    bConnector = createUpstreamConnector({
      registryPath: join(dir, 'b-registry.yaml'),
      registry: loadRegistryFile(join(dir, 'b-registry.yaml'), { AIRLOCK_SECRET_A: TOKEN_B }),
      pinsPath: join(dir, 'b-pins.json'),
      env: { AIRLOCK_SECRET_A: TOKEN_B },
      instanceId: B_ID,
    });
    const quiet = { log: () => undefined };
    a = await startGateway(gatewayYaml(aPort, A_ID, ['echo'], ['to-b', 'loop']), {
      auditSink: aAudit,
      backends: {
        'to-b': createUpstreamBackend({ type: 'a2a', agent: 'b-echo' }, { agent: 'to-b', ...quiet }, aConnector),
        loop: createUpstreamBackend({ type: 'a2a', agent: 'b-back' }, { agent: 'loop', ...quiet }, aConnector),
      },
    });
    b = await startGateway(gatewayYaml(bPort, B_ID, ['echo'], ['back']), {
      backends: {
        back: createUpstreamBackend({ type: 'a2a', agent: 'a-to-b' }, { agent: 'back', ...quiet }, bConnector),
      },
    });
    // What reaches A's gate (the chain of each request), for the assertions below.
    a.gateway.server.prependListener('request', (req) => seenByA.push(req.headers[HOP_HEADER] as string | undefined));
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await aConnector?.close();
    await bConnector?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a peer’s agent is served: A relays to B’s echo and the caller gets B’s answer', { timeout: 30_000 }, async () => {
    const sent = await rpc(
      `${a.url}/a2a/to-b`,
      'SendMessage',
      { message: v10Message('hello peer') },
      { version: '1.0' },
    );
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const task = sent.body.result?.task;
    assert.equal(task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(sent.body));
    assert.match(JSON.stringify(task.artifacts), /hello peer/);
  });

  it(
    'B relaying back to A is refused at A as a loop; the first caller’s task fails saying so',
    { timeout: 30_000 },
    async () => {
      seenByA.length = 0;
      const sent = await rpc(
        `${a.url}/a2a/loop`,
        'SendMessage',
        { message: v10Message('round and round') },
        { version: '1.0' },
      );
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const task = sent.body.result?.task;
      assert.equal(task?.status?.state, 'TASK_STATE_FAILED', JSON.stringify(sent.body));
      assert.match(JSON.stringify(task.status), /loop/i);
      const reasons = aAudit.events.map((event) => (event as { reason?: string }).reason);
      assert.ok(reasons.includes('relay_loop'), JSON.stringify(reasons));
      // The caller's request carried no chain; B's relay back carried A then B.
      assert.ok(seenByA.includes(undefined));
      assert.ok(seenByA.includes(`${A_ID}, ${B_ID}`), JSON.stringify(seenByA));
    },
  );
});
