/**
 * The gateway hands each turn its toolbox: a published agent with `allowTools` and an allow list
 * gets the hub's tools (the server wiring in src/server/tools.ts, the ladder from approvals/),
 * an agent without them gets none, every call is audited with the caller, and closing the
 * gateway closes the tool servers. Real parts: the gateway over HTTP, an MCP server of the
 * tests' own on loopback, the official MCP client.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AgentBackend, AgentTurn } from '../src/agents/backend.js';
import { MemoryAuditSink } from '../src/audit/index.js';
import { parseConfig } from '../src/config/load.js';
import { createGuardedClient } from '../src/net/index.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';
import { startToolServers, toolDecision } from '../src/server/tools.js';
import { ToolHub } from '../src/tools/index.js';
import { rpc, TOKEN_A, v10Message } from './helpers/gateway.js';
import { startToolTestServer, type ToolTestServer } from './helpers/mcp-tool-server.js';

/** A backend that calls the tool the caller names (`tool:args-json`) and replies with what came back. */
function toolCallingBackend(seen: (AgentTurn['tools'] | undefined)[]): AgentBackend {
  return {
    kind: 'test-tools',
    async *run(turn) {
      seen.push(turn.tools);
      const text = turn.message.parts[0]?.kind === 'text' ? turn.message.parts[0].text : '';
      const [name = '', json = '{}'] = text.split('|');
      if (turn.tools === undefined) {
        yield { type: 'completed', text: 'no tools' };
        return;
      }
      const outcome = await turn.tools.call(name, JSON.parse(json) as unknown, turn.signal);
      yield {
        type: 'completed',
        text: `${outcome.kind}: ${outcome.kind === 'result' ? outcome.text : outcome.kind === 'park' ? outcome.action.tool : outcome.reason}`,
      };
    },
  };
}

describe('the gateway wires each turn its toolbox', () => {
  let dir: string;
  let server: ToolTestServer;
  let gateway: Gateway;
  let url: string;
  let hub: ToolHub;
  const sink = new MemoryAuditSink();
  const seen: (AgentTurn['tools'] | undefined)[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-tools-gw-'));
    server = await startToolTestServer();
    const yaml = `
server: { host: 127.0.0.1, port: 0 }
tools:
  pins: ${join(dir, 'pins.json')}
  servers:
    - name: web
      http: { url: '${server.url}' }
      tools:
        echo: { level: L1 }
        leak: { level: L4 }
agents:
  - slug: helper
    name: Helper
    description: Uses tools.
    skills: [{ id: h, name: H, description: Helps }]
    backend: { type: echo }
    allowTools: true
    tools: { allow: [web.echo, web.leak] }
  - slug: plain
    name: Plain
    description: No tools.
    skills: [{ id: p, name: P, description: Plain }]
    backend: { type: echo }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [helper, plain] }
`;
    const config = parseConfig(yaml, { TOKEN_A });
    hub = new ToolHub(config.tools!, { guarded: createGuardedClient({}), ownsGuarded: true, env: {} });
    await hub.start();
    gateway = createGateway(config, {
      logger: silentLogger,
      auditSink: sink,
      backends: { helper: toolCallingBackend(seen), plain: toolCallingBackend(seen) },
      tools: hub,
    });
    url = await gateway.listen();
  });
  after(async () => {
    await gateway.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a tool-using agent calls a read-only tool through the gateway; the call is audited with the caller', async () => {
    const call = await rpc(
      `${url}/a2a/helper`,
      'SendMessage',
      { message: v10Message('web__echo|{"text":"via gateway"}') },
      { version: '1.0' },
    );
    assert.equal(call.status, 200);
    const reply = JSON.stringify(call.body);
    assert.match(reply, /result: SECURITY NOTICE/);
    assert.match(reply, /via gateway/);
    const row = sink.events.find((event) => event.type === 'a2a.tool.called');
    assert.ok(row !== undefined && row.type === 'a2a.tool.called');
    assert.equal(row.client, 'a');
    assert.equal(row.agent, 'helper');
    assert.equal(row.tool, 'web.echo');
    assert.ok(!JSON.stringify(sink.events).includes('via gateway'), 'no arguments or results in the audit trail');
  });

  it('approvals off: an acting tool is refused, not parked', async () => {
    const call = await rpc(
      `${url}/a2a/helper`,
      'SendMessage',
      { message: v10Message('web__leak|{}') },
      { version: '1.0' },
    );
    assert.match(JSON.stringify(call.body), /refused: web__leak needs autonomy level L4/);
  });

  it('an agent without allowTools gets no toolbox', async () => {
    seen.length = 0;
    const call = await rpc(
      `${url}/a2a/plain`,
      'SendMessage',
      { message: v10Message('web__echo|{}') },
      { version: '1.0' },
    );
    assert.match(JSON.stringify(call.body), /no tools/);
    assert.equal(seen[0], undefined);
  });
});

describe('the ladder as the gateway hands it to the toolbox', () => {
  const agents = [{ slug: 'helper', actions: { maxLevel: 'L4' as const } }, { slug: 'low' }];
  const withApprovals = toolDecision({ agents, approvals: { serviceMaxLevel: 'L2' } } as unknown as Parameters<
    typeof toolDecision
  >[0]);
  const without = toolDecision({ agents } as unknown as Parameters<typeof toolDecision>[0]);

  it('read-only runs; acting parks for a person, is refused for a service principal', () => {
    assert.equal(withApprovals('L1', 'client', 'helper'), 'run');
    assert.equal(withApprovals('L2', 'service', 'helper'), 'run');
    assert.equal(withApprovals('L3', 'client', 'helper'), 'park');
    assert.equal(withApprovals('L4', 'delegated', 'helper'), 'park');
    assert.equal(withApprovals('L3', 'service', 'helper'), 'refuse');
  });

  it('acting is refused above the agent action cap, and whenever approvals are off', () => {
    assert.equal(withApprovals('L3', 'client', 'low'), 'refuse');
    assert.equal(without('L4', 'client', 'helper'), 'refuse');
    assert.equal(without('L1', 'client', 'low'), 'run');
  });
});

describe('airlock serve starts the tool servers at boot', () => {
  const yaml = (optional: boolean): string => `
tools:
  servers:
    - { name: gone, optional: ${optional}, timeoutSeconds: 2, http: { url: 'http://127.0.0.1:1/mcp' }, tools: { echo: { level: L1 } } }
agents:
  - { slug: a, name: A, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
`;

  it('a required server that fails stops serve with one line naming it', async () => {
    await assert.rejects(startToolServers(parseConfig(yaml(false), {}), silentLogger, {}), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.match(error.message, /^tool server "gone": /);
      assert.ok(!error.message.includes('\n'));
      return true;
    });
  });

  it('an optional one is logged and serve goes on', async () => {
    const warnings: unknown[] = [];
    const hub = await startToolServers(
      parseConfig(yaml(true), {}),
      { ...silentLogger, warn: (fields) => warnings.push(fields) },
      {},
    );
    assert.ok(hub !== undefined);
    await hub.close();
    assert.match(JSON.stringify(warnings), /tool_server_unavailable/);
  });
});
