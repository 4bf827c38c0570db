/**
 * Tools over stdio with the official `@modelcontextprotocol/server-filesystem` on a temporary
 * sandbox folder: reading is L1 and runs at once, writing is L4 and parks for the person, the
 * approved write runs exactly once, a service principal cannot write, a tool outside the
 * agent's list is refused; and a stdio server that crashes mid-call is refused with a reason,
 * then reconnected for the next call.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { TurnToolbox } from '../src/agents/tools.js';
import { createReplyScrubber } from '../src/agents/inbound/index.js';
import { assertAuditSafe, type AuditEvent } from '../src/audit/index.js';
import { createGuardedClient, type GuardedClient } from '../src/net/index.js';
import { ToolHub, createToolboxBuilders, type ToolDecision, type ToolsConfig } from '../src/tools/index.js';

const require = createRequire(import.meta.url);
const FILESYSTEM_BIN = join(
  dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist',
  'index.js',
);
const CRASHY = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'tools', 'crashy-server.ts');
const LADDER: ToolDecision = (level, kind) =>
  level === 'L1' || level === 'L2' ? 'run' : kind === 'service' ? 'refuse' : 'park';
const signal = (): AbortSignal => new AbortController().signal;

let dir: string;
let sandbox: string;
let guarded: GuardedClient;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-tools-fs-'));
  sandbox = await realpath(await mkdtemp(join(dir, 'sandbox-')));
  await writeFile(join(sandbox, 'notes.txt'), 'the sandbox note\n');
  guarded = createGuardedClient({});
});
after(async () => {
  await guarded.close();
  await rm(dir, { recursive: true, force: true });
});

function builder(hub: ToolHub, config: ToolsConfig, allow: string[], audit: AuditEvent[]) {
  const builders = createToolboxBuilders([{ slug: 'files-agent', allowTools: true, tools: { allow } }], {
    hub,
    tools: config,
    decide: LADDER,
    scrubber: createReplyScrubber([]),
    audit: (event) => {
      assertAuditSafe(event);
      audit.push(event);
    },
  });
  return (
    kind: 'client' | 'service' = 'client',
    approved?: { actionId: string; tool: string; args: unknown },
  ): TurnToolbox =>
    builders.get('files-agent')!({
      ctx: { agentSlug: 'files-agent', caller: { clientId: 'app', kind } },
      taskId: 'task-fs',
      contextId: 'ctx-fs',
      ...(approved !== undefined && { approved }),
    })!;
}

describe('the official filesystem server over stdio', () => {
  let hub: ToolHub;
  let config: ToolsConfig;
  const audit: AuditEvent[] = [];
  let toolbox: (
    kind?: 'client' | 'service',
    approved?: { actionId: string; tool: string; args: unknown },
  ) => TurnToolbox;

  before(async () => {
    config = {
      servers: [
        {
          name: 'files',
          stdio: { command: process.execPath, args: [FILESYSTEM_BIN, sandbox], passEnv: [] },
          optional: false,
          timeoutSeconds: 20,
          tools: {
            read_text_file: { level: 'L1' },
            list_directory: { level: 'L1' },
            write_file: { level: 'L4', description: 'Write a file in the sandbox.' },
          },
        },
      ],
      maxCallsPerTurn: 16,
      maxResultChars: 16_000,
      pins: join(dir, 'tool-pins.json'),
    };
    hub = new ToolHub(config, { guarded, env: process.env });
    await hub.start();
    toolbox = builder(hub, config, ['files.read_text_file', 'files.write_file'], audit);
  });
  after(() => hub.close());

  it('pins the listed tools on first use', async () => {
    const view = hub.describe()[0]!;
    assert.ok(view.connected);
    assert.ok(view.tools.some((tool) => tool.name === 'read_text_file' && tool.state === 'pinned'));
    const file = JSON.parse(await readFile(config.pins, 'utf8')) as { servers: Record<string, { source: string }> };
    assert.equal(file.servers.files?.source, 'tofu');
  });

  it('offers only the allowed, levelled tools', () => {
    assert.deepEqual(
      toolbox().offers.map((offer) => [offer.name, offer.level]),
      [
        ['files__read_text_file', 'L1'],
        ['files__write_file', 'L4'],
      ],
    );
  });

  it('reads at once (L1), framed as untrusted', async () => {
    const outcome = await toolbox().call('files__read_text_file', { path: join(sandbox, 'notes.txt') }, signal());
    assert.equal(outcome.kind, 'result');
    assert.match(outcome.kind === 'result' ? outcome.text : '', /the sandbox note/);
    assert.match(outcome.kind === 'result' ? outcome.text : '', /<<<EXTERNAL_UNTRUSTED_CONTENT>>>/);
  });

  it('a levelled tool outside the agent list is refused', async () => {
    const outcome = await toolbox().call('files__list_directory', { path: sandbox }, signal());
    assert.equal(outcome.kind, 'refused');
  });

  it('a write (L4) parks; the approved write runs once; a service principal is refused', async () => {
    const target = join(sandbox, 'out.txt');
    const parked = await toolbox().call('files__write_file', { path: target, content: 'approved' }, signal());
    assert.equal(parked.kind, 'park');
    await assert.rejects(readFile(target), 'nothing was written before the approval');

    const service = await toolbox('service').call('files__write_file', { path: target, content: 'sneaky' }, signal());
    assert.equal(service.kind, 'refused');

    const action = { actionId: 'act-fs-1', tool: 'files__write_file', args: { path: target, content: 'approved' } };
    const ran = await toolbox('client', action).runApproved(action, signal());
    assert.equal(ran.kind, 'result', JSON.stringify(ran));
    assert.equal(await readFile(target, 'utf8'), 'approved');
    await writeFile(target, 'changed since');
    const again = await toolbox('client', action).runApproved(action, signal());
    assert.equal(again.kind, 'refused');
    assert.equal(await readFile(target, 'utf8'), 'changed since', 'the second run did not write');
    assert.ok(audit.every((row) => !JSON.stringify(row).includes('approved')));
  });
});

describe('a stdio tool server that crashes mid-call', () => {
  it('refuses the call with a reason, and reconnects for the next one', async () => {
    const config: ToolsConfig = {
      servers: [
        {
          name: 'crashy',
          stdio: { command: process.execPath, args: ['--import', 'tsx', CRASHY], passEnv: [] },
          optional: false,
          timeoutSeconds: 10,
          tools: { echo: { level: 'L1' }, crash: { level: 'L1' } },
        },
      ],
      maxCallsPerTurn: 16,
      maxResultChars: 16_000,
      pins: join(dir, 'crashy-pins.json'),
    };
    const hub = new ToolHub(config, { guarded, env: process.env });
    await hub.start();
    const audit: AuditEvent[] = [];
    try {
      const toolbox = builder(hub, config, ['crashy.crash', 'crashy.echo'], audit)();
      const started = Date.now();
      const crashed = await toolbox.call('crashy__crash', {}, signal());
      assert.equal(crashed.kind, 'refused');
      assert.match(crashed.kind === 'refused' ? crashed.reason : '', /tool server "crashy" failed the call/);
      assert.ok(Date.now() - started < 8000, 'refused when the program died, not at the timeout');
      const row = audit.at(-1);
      assert.equal(row?.type === 'a2a.tool.refused' && row.reason, 'server_unavailable');
      const next = await toolbox.call('crashy__echo', { text: 'back again' }, signal());
      assert.equal(next.kind, 'result', JSON.stringify(next));
    } finally {
      await hub.close();
    }
  });
});
