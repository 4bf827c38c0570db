/**
 * Module backends get the same tool API as the openai backend: `turn.tools` on the turn, calls
 * through the toolbox, `propose-action` with a JSON continuation that passes the module event
 * check and comes back on the resumed turn; a continuation that is not plain JSON fails the task.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { collect, fakeTurn } from './helpers/agent-turn.js';
import type { AgentBackend, AgentTurn } from '../src/agents/backend.js';
import { loadModuleBackend } from '../src/agents/module/index.js';
import type { ToolCallOutcome, TurnToolbox } from '../src/agents/tools.js';

const MODULE = `
export default {
  kind: 'notes',
  async *run(turn) {
    const tools = turn.tools;
    if (tools === undefined) { yield { type: 'failed', reason: 'no tools' }; return; }
    if (turn.approvedAction !== undefined) {
      const done = await tools.runApproved(turn.approvedAction, turn.signal);
      yield { type: 'completed', text: 'resumed at ' + turn.approvedAction.continuation.step + ': ' + done.kind };
      return;
    }
    const read = await tools.call('notes_read', { path: 'todo.md' }, turn.signal);
    if (read.kind !== 'result') { yield { type: 'failed', reason: read.kind }; return; }
    const write = await tools.call('notes_write', { path: 'todo.md', text: 'x' }, turn.signal);
    if (write.kind === 'park') {
      const continuation = turn.message.parts[0].text === 'bad' ? { at: new Date(0) } : { step: 'write', seen: read.text.length };
      yield { type: 'propose-action', action: write.action, continuation };
      return;
    }
    yield { type: 'completed', text: 'no park' };
  },
};
`;

class Toolbox implements TurnToolbox {
  readonly offers = [
    { name: 'notes_read', description: 'Reads', inputSchema: { type: 'object' }, level: 'L1' as const },
    { name: 'notes_write', description: 'Writes', inputSchema: { type: 'object' }, level: 'L4' as const },
  ];
  readonly calls: string[] = [];
  readonly approved: unknown[] = [];
  async call(name: string, args: unknown): Promise<ToolCallOutcome> {
    this.calls.push(name);
    if (name === 'notes_write') return { kind: 'park', action: { tool: name, args, level: 'L4' } };
    return { kind: 'result', text: 'framed notes', isError: false };
  }
  async runApproved(action: { actionId: string; tool: string; args: unknown }): Promise<ToolCallOutcome> {
    this.approved.push(action.args);
    return { kind: 'result', text: 'written', isError: false };
  }
}

describe('module backend: the tool API', () => {
  let dir: string;
  let backend: AgentBackend;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-module-tools-'));
    const path = join(dir, 'notes.mjs');
    await writeFile(path, MODULE);
    backend = await loadModuleBackend({ type: 'module', module: path, export: 'default' });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('calls tools through turn.tools, parks with a continuation, and resumes with it', async () => {
    const toolbox = new Toolbox();
    const turn: AgentTurn = { ...fakeTurn({ text: 'do it' }), tools: toolbox };
    const events = await collect(backend, turn);
    assert.deepEqual(toolbox.calls, ['notes_read', 'notes_write']);
    const last = events.at(-1);
    assert.equal(last?.type, 'propose-action');
    const proposal = last as { action: unknown; continuation: unknown };
    assert.deepEqual(proposal.action, { tool: 'notes_write', args: { path: 'todo.md', text: 'x' }, level: 'L4' });
    const continuation = JSON.parse(JSON.stringify(proposal.continuation)) as unknown;
    const resumed: AgentTurn = {
      ...fakeTurn({ text: 'do it', resumed: true }),
      tools: toolbox,
      approvedAction: {
        actionId: 'a1',
        tool: 'notes_write',
        args: { path: 'todo.md', text: 'x' },
        level: 'L4',
        continuation,
      },
    };
    assert.deepEqual(await collect(backend, resumed), [{ type: 'completed', text: 'resumed at write: result' }]);
    assert.deepEqual(toolbox.approved, [{ path: 'todo.md', text: 'x' }]);
  });

  it('fails the task when the continuation is not plain JSON', async () => {
    const events = await collect(backend, { ...fakeTurn({ text: 'bad' }), tools: new Toolbox() });
    assert.equal(events.at(-1)?.type, 'failed');
    assert.match((events.at(-1) as { reason: string }).reason, /invalid event \("continuation" is not plain JSON\)/);
  });
});
