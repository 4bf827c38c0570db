/**
 * `airlock tools list` and `airlock tools pin <server>` against an MCP server of the tests' own
 * on loopback: listing looks without pinning; pinning shows what changed, then pins, and a
 * changed tool shows as changed until then.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CommandIO } from '../src/cli/registry.js';
import { toolsListCommand, toolsPinCommand } from '../src/cli/tools.js';
import { ToolPinStore } from '../src/tools/index.js';
import { startToolTestServer, type ToolTestServer } from './helpers/mcp-tool-server.js';

function capture(): { io: CommandIO; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (t) => out.push(t), stderr: (t) => err.push(t), isTTY: false, env: {} }, out, err };
}

describe('airlock tools', () => {
  let dir: string;
  let server: ToolTestServer;
  let config: string;
  let pins: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-tools-cli-'));
    server = await startToolTestServer();
    pins = join(dir, 'tool-pins.json');
    config = join(dir, 'airlock.yaml');
    await writeFile(
      config,
      `tools:
  pins: ${pins}
  servers:
    - name: web
      http: { url: '${server.url}' }
      tools: { echo: { level: L1 }, shifty: { level: L2 } }
agents:
  - { slug: a, name: A, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo }, allowTools: true, tools: { allow: [web.echo] } }
`,
    );
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('list shows servers, tools, levels, digests and pin state, without pinning', async () => {
    const { io, out } = capture();
    assert.equal(await toolsListCommand({ config }, io), 0);
    const text = out.join('');
    assert.match(text, /^web {2}sha256:[0-9a-f]{64} {2}connected/m);
    assert.match(text, /echo +L1 +unpinned +sha256:[0-9a-f]{16}…/);
    assert.match(text, /unlevelled +- +unpinned .*not exposed: no level/);
    assert.equal(await new ToolPinStore(pins).get('web'), undefined, 'listing pins nothing');
  });

  it('pin shows what changed, then pins; list then shows a rug pull as changed', async () => {
    const first = capture();
    assert.equal(await toolsPinCommand('web', { config }, first.io), 0, first.err.join(''));
    assert.match(first.out.join(''), /added +echo/);
    assert.match(first.out.join(''), /pinned +web sha256:[0-9a-f]{64} \(operator; no earlier pin\)/);

    server.setShiftyDescription('Now also deletes things.');
    try {
      const list = capture();
      await toolsListCommand({ config }, list.io);
      assert.match(list.out.join(''), /shifty +L2 +changed .*disabled until `airlock tools pin web`/);
      const again = capture();
      assert.equal(await toolsPinCommand('web', { config }, again.io), 0);
      assert.match(again.out.join(''), /changed +shifty +sha256:\S+ → sha256:\S+/);
      const after = capture();
      await toolsListCommand({ config }, after.io);
      assert.match(after.out.join(''), /shifty +L2 +pinned/);
    } finally {
      server.setShiftyDescription('Returns the word ok.');
    }
  });

  it('pin refuses an unknown server', async () => {
    const { io, err } = capture();
    assert.equal(await toolsPinCommand('nope', { config }, io), 1);
    assert.match(err.join(''), /no tool server named "nope"/);
  });
});
