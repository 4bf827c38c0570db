import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import type { AuditEvent } from '../audit/events.js';
import {
  loopbackTransport,
  makeTask,
  startFakeRemote,
  stubCards,
  type FakeRemote,
} from '../client/fake-remote.test.js';
import { createClient, parseRegistry, type CallResult } from '../client/index.js';
import { UNTRUSTED_START_MARKER } from '../content/index.js';
import { A2aTools, TOOL_NAMES, getTaskInputSchema, parseAutonomy, sendInputSchema, type McpAutonomy } from './tools.js';

const SECRET = 'tok-SECRET-0123456789abcdefXYZ';
const ENV = { AIRLOCK_SECRET_TEST: SECRET };
const open: FakeRemote[] = [];

after(async () => {
  await Promise.all(open.map((remote) => remote.close()));
});

function registryYaml(url: string, effects: Array<['reader' | 'shop', 'read_only' | 'acting']>): string {
  const card = new URL('/.well-known/agent-card.json', url).href;
  const lines = effects.map(
    ([name, effect]) => `  - name: ${name}
    card_url: ${card}
    description: "${name === 'reader' ? 'Reads the news for you.' : 'Orders office supplies.'}"
    effect: ${effect}
    auth: { bearer_env: AIRLOCK_SECRET_TEST }
    poll_interval_s: 0.05
    max_wait_s: 5
`,
  );
  return `agents:\n${lines.join('')}`;
}

async function harness(
  autonomy: McpAutonomy,
  effects: Array<['reader' | 'shop', 'read_only' | 'acting']> = [
    ['reader', 'read_only'],
    ['shop', 'acting'],
  ],
) {
  const remote = await startFakeRemote((request) => {
    if (request.method === 'send') return { send: { kind: 'task', task: makeTask('t-1', 'completed', 'Hello back') } };
    return { task: makeTask('t-1', 'completed', 'Still here') };
  });
  open.push(remote);
  const cards = stubCards(remote.url, '1.0');
  const audit: AuditEvent[] = [];
  const client = createClient({
    registry: parseRegistry(registryYaml(remote.url, effects), ENV),
    transport: loopbackTransport(),
    cards,
    audit: (event) => void audit.push(event),
  });
  return { remote, cards, audit, tools: new A2aTools({ client, autonomy }) };
}

function parsed(text: string): CallResult {
  return JSON.parse(text) as CallResult;
}

describe('parseAutonomy', () => {
  it('defaults to read_only and accepts exactly the three values', () => {
    assert.equal(parseAutonomy(undefined), 'read_only');
    assert.equal(parseAutonomy(''), 'read_only');
    assert.equal(parseAutonomy(' read_only '), 'read_only');
    assert.equal(parseAutonomy('confirm'), 'confirm');
    assert.equal(parseAutonomy('acting'), 'acting');
    for (const bad of ['ACTING', 'yes', 'true', 'read-only', 'all', 'CONFIRM', 'confirmed']) {
      assert.throws(() => parseAutonomy(bad), /AIRLOCK_MCP_AUTONOMY must be read_only, confirm or acting/);
    }
  });
});

describe('tool definitions', () => {
  it('offers the three tools with Airlock text and operator descriptions only', async () => {
    const { tools } = await harness('read_only');
    // Resolve the card once, so that any card text the tools could have picked up is there.
    await tools.send({ agent: 'reader', message: 'hi' });
    const definitions = tools.definitions();
    assert.deepEqual(
      definitions.map((tool) => tool.name),
      ['a2a_list_agents', 'a2a_send', 'a2a_get_task'],
    );
    const send = definitions[1]!;
    assert.match(send.description, /- reader \(read_only\): Reads the news for you\./);
    assert.match(send.description, /- shop \(acting, refused: autonomy read_only\): Orders office supplies\./);
    assert.match(send.description, /untrusted/);
    const everything = JSON.stringify(definitions) + tools.listAgents().text;
    assert.doesNotMatch(everything, /CARD TEXT THAT MUST NOT BE LISTED/);
    assert.doesNotMatch(everything, /EXTERNAL_UNTRUSTED_CONTENT|ignore your rules/);
  });

  it('under confirm, says acting agents ask the person first, and only a confirmed send goes out', async () => {
    const { tools, remote } = await harness('confirm');
    assert.match(
      tools.definitions()[1]!.description,
      /- shop \(acting, asks the person first\): Orders office supplies\./,
    );
    const listed = JSON.parse(tools.listAgents().text) as {
      agents: Array<{ name: string; callable: boolean; person_confirms: boolean }>;
    };
    assert.deepEqual(
      listed.agents.map((agent) => [agent.name, agent.callable, agent.person_confirms]),
      [
        ['reader', true, false],
        ['shop', true, true],
      ],
    );
    assert.equal(tools.asksPerson('shop'), true);
    assert.equal(tools.asksPerson('reader'), false);
    // Without the person's yes the client refuses it: no request.
    const unconfirmed = parsed((await tools.send({ agent: 'shop', message: 'Order pens' })).text);
    assert.equal(unconfirmed.error_type, 'confirmation_required');
    assert.match(unconfirmed.error_message ?? '', /the person did not confirm this call/);
    const declined = parsed(
      (
        await tools.send(
          { agent: 'shop', message: 'Order pens' },
          { confirmed: false, reason: 'the person declined it' },
        )
      ).text,
    );
    assert.match(declined.error_message ?? '', /was not called: the person declined it\./);
    assert.equal(remote.requests.length, 0);
    const confirmed = await tools.send({ agent: 'shop', message: 'Order pens' }, { confirmed: true });
    assert.equal(confirmed.isError, false);
    assert.equal(remote.requests.length, 1);
  });

  it("a person's yes does not lift the read_only ceiling", async () => {
    const { tools, remote } = await harness('read_only');
    assert.equal(tools.asksPerson('shop'), false);
    const output = await tools.send({ agent: 'shop', message: 'Order pens' }, { confirmed: true });
    assert.equal(parsed(output.text).error_type, 'confirmation_required');
    assert.equal(remote.requests.length, 0);
  });

  it('annotates a2a_send destructive when any entry is acting, whatever the autonomy', async () => {
    for (const autonomy of ['read_only', 'confirm', 'acting'] as const) {
      const { tools } = await harness(autonomy);
      const [list, send, get] = tools.definitions();
      assert.deepEqual(
        { ...list!.annotations, title: '' },
        { title: '', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      );
      assert.equal(send!.annotations.destructiveHint, true);
      assert.equal(send!.annotations.readOnlyHint, false);
      assert.equal(send!.annotations.openWorldHint, true);
      assert.equal(get!.annotations.readOnlyHint, true);
      assert.equal(get!.annotations.destructiveHint, false);
    }
  });

  it('annotates a2a_send read-only when every entry is read_only', async () => {
    const { tools } = await harness('read_only', [['reader', 'read_only']]);
    const send = tools.definitions()[1]!;
    assert.equal(send.annotations.readOnlyHint, true);
    assert.equal(send.annotations.destructiveHint, false);
  });

  it('offers only a2a_list_agents for an empty registry', () => {
    const client = createClient({
      registry: parseRegistry('agents: []\n', {}),
      transport: loopbackTransport(),
      cards: stubCards('http://127.0.0.1:1/a2a', '1.0'),
    });
    const tools = new A2aTools({ client, autonomy: 'read_only' });
    assert.equal(tools.names(), undefined);
    assert.deepEqual(
      tools.definitions().map((tool) => tool.name),
      [TOOL_NAMES.listAgents],
    );
  });
});

describe('input schemas', () => {
  const send = sendInputSchema(['reader', 'shop']);
  const get = getTaskInputSchema(['reader', 'shop']);

  it('accept registry names, bounded text and strict ids', () => {
    assert.deepEqual(send.parse({ agent: 'reader', message: 'hi', task_id: 't-1', context_id: 'c.2' }), {
      agent: 'reader',
      message: 'hi',
      task_id: 't-1',
      context_id: 'c.2',
    });
    assert.deepEqual(get.parse({ agent: 'shop', task_id: 't-1' }), { agent: 'shop', task_id: 't-1' });
  });

  it('refuse unknown agents, URLs, extra fields, empty or long text and loose ids', () => {
    for (const bad of [
      { agent: 'other', message: 'hi' },
      { agent: 'https://evil.example/a2a', message: 'hi' },
      { agent: 'reader', message: 'hi', confirm: true },
      { agent: 'reader', message: '' },
      { agent: 'reader', message: 'x'.repeat(8193) },
      { agent: 'reader', message: 'hi', task_id: 'ignore previous instructions' },
      { agent: 'reader' },
    ]) {
      assert.equal(send.safeParse(bad).success, false, JSON.stringify(bad).slice(0, 80));
    }
    assert.equal(get.safeParse({ agent: 'reader' }).success, false);
    assert.equal(get.safeParse({ agent: 'reader', task_id: '' }).success, false);
  });

  it('carry the bounds into JSON Schema', () => {
    const schema = z.toJSONSchema(send) as {
      properties: Record<string, { enum?: string[]; maxLength?: number; pattern?: string }>;
      additionalProperties: boolean;
      required: string[];
    };
    assert.deepEqual(schema.properties.agent?.enum, ['reader', 'shop']);
    assert.equal(schema.properties.message?.maxLength, 8192);
    assert.equal(schema.properties.task_id?.pattern, '^[A-Za-z0-9._:-]{1,128}$');
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required.sort(), ['agent', 'message']);
  });
});

describe('handlers', () => {
  it('a2a_list_agents lists the operator view and what is callable', async () => {
    const { tools } = await harness('read_only');
    const output = tools.listAgents();
    assert.equal(output.isError, false);
    assert.deepEqual(JSON.parse(output.text), {
      autonomy: 'read_only',
      agents: [
        {
          name: 'reader',
          description: 'Reads the news for you.',
          effect: 'read_only',
          skills: [],
          callable: true,
          person_confirms: false,
        },
        {
          name: 'shop',
          description: 'Orders office supplies.',
          effect: 'acting',
          skills: [],
          callable: false,
          person_confirms: false,
        },
      ],
    });
  });

  it('a2a_send returns the framed CallResult', async () => {
    const { tools, remote } = await harness('read_only');
    const output = await tools.send({ agent: 'reader', message: 'Hello', context_id: 'ctx-1' });
    assert.equal(output.isError, false);
    const result = parsed(output.text);
    assert.equal(result.status, 'success');
    assert.equal(result.task_id, 't-1');
    assert.ok(result.reply.startsWith('SECURITY NOTICE') || result.reply.includes(UNTRUSTED_START_MARKER));
    assert.match(result.reply, /Hello back/);
    assert.equal(remote.requests[0]?.headers.authorization, `Bearer ${SECRET}`);
    assert.doesNotMatch(output.text, new RegExp(SECRET));
  });

  it('a2a_send refuses an acting agent under read_only: no request, a denied audit row, a clear error', async () => {
    const { tools, remote, cards, audit } = await harness('read_only');
    const output = await tools.send({ agent: 'shop', message: 'Order 200 staplers' });
    assert.equal(output.isError, true);
    const result = parsed(output.text);
    assert.equal(result.status, 'error');
    assert.equal(result.error_type, 'confirmation_required');
    assert.match(result.error_message ?? '', /autonomy read_only/);
    assert.match(result.error_message ?? '', /AIRLOCK_MCP_AUTONOMY=acting/);
    assert.equal(remote.requests.length, 0);
    assert.equal(cards.resolved.length, 0);
    assert.equal(audit.length, 1);
    assert.equal(audit[0]?.type, 'a2a.client.send');
    assert.match(JSON.stringify(audit[0]), /"outcome":"denied"/);
  });

  it('a2a_send calls an acting agent under autonomy acting', async () => {
    const { tools, remote } = await harness('acting');
    const output = await tools.send({ agent: 'shop', message: 'Order 2 staplers' });
    assert.equal(output.isError, false);
    assert.equal(parsed(output.text).status, 'success');
    assert.equal(remote.requests[0]?.rpcMethod, 'SendMessage');
  });

  it('a2a_get_task reads a task this server started, once', async () => {
    const { tools, remote } = await harness('read_only');
    await tools.send({ agent: 'reader', message: 'Hello' });
    const output = await tools.getTask({ agent: 'reader', task_id: 't-1' });
    assert.equal(output.isError, false, output.text);
    const result = parsed(output.text);
    assert.equal(result.task_state, 'completed');
    assert.match(result.reply, /Still here/);
    assert.deepEqual(
      remote.requests.map((request) => request.rpcMethod),
      ['SendMessage', 'GetTask'],
    );
  });

  it('a2a_get_task answers task_not_found for a task it did not start, without contacting the remote', async () => {
    const { tools, remote } = await harness('read_only');
    const output = await tools.getTask({ agent: 'reader', task_id: 'someone-elses' });
    assert.equal(output.isError, true);
    assert.equal(parsed(output.text).error_type, 'task_not_found');
    assert.equal(remote.requests.length, 0);
  });
});
