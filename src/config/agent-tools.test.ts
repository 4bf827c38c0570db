/**
 * An agent as the config loader gives it is an inbound tool policy as it is: the check that
 * `src/agents/inbound/tools.ts` (which may not import config/) fits the config's `AgentConfig`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { toolsForInboundTurn, type AvailableTool } from '../agents/inbound/tools.js';
import type { AgentConfig } from './schema.js';

const AVAILABLE: readonly AvailableTool[] = [
  { name: 'search' },
  { name: 'calendar.read' },
  { name: 'notes:write', outboundA2A: false },
  { name: 'a2a_send', outboundA2A: true },
  { name: 'a2a_get_task', outboundA2A: true },
];

describe('toolsForInboundTurn with a configured agent', () => {
  it('accepts an agent from config as it is', () => {
    const agent: AgentConfig = {
      slug: 'helpdesk',
      name: 'Helpdesk',
      description: 'Answers questions.',
      version: '1.0.0',
      skills: [{ id: 'faq', name: 'FAQ', description: 'Questions', tags: [] }],
      backend: { type: 'echo' },
      anonymousLoopback: false,
      allowTools: true,
      tools: { allow: ['search'] },
    };
    assert.deepEqual(toolsForInboundTurn(agent, AVAILABLE), ['search']);
  });
});
