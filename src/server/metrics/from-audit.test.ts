import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AUDIT_EVENT_SPEC,
  AUDIT_EVENT_TYPES,
  type AuditEvent,
  type AuditEventOf,
  type AuditEventType,
} from '../../audit/index.js';
import { metricsOfRow, REFUSAL_CLASS, type RowMetrics } from './from-audit.js';

const time = '2026-01-01T00:00:00.000Z' as const;
const AGENTS: ReadonlySet<string> = new Set(['echo']);
const task = { client: 'a', agent: 'echo', taskId: 't-1', contextId: 'c-1' };

/** One row of every type (the mapped type makes a missing type a compile error). */
const SAMPLES: { [T in AuditEventType]: AuditEventOf<T> } = {
  'a2a.task.submitted': { type: 'a2a.task.submitted', time, outcome: 'ok', ...task, inputChars: 3 },
  'a2a.task.completed': { type: 'a2a.task.completed', time, outcome: 'ok', ...task, outputChars: 3 },
  'a2a.task.failed': { type: 'a2a.task.failed', time, outcome: 'error', ...task, reason: 'agent_timeout' },
  'a2a.task.canceled': { type: 'a2a.task.canceled', time, outcome: 'ok', ...task, reason: 'canceled_by_client' },
  'a2a.task.rejected': { type: 'a2a.task.rejected', time, outcome: 'denied', ...task, reason: 'agent_rejected' },
  'a2a.task.input_required': { type: 'a2a.task.input_required', time, outcome: 'ok', ...task, outputChars: 1 },
  'a2a.approval.requested': {
    type: 'a2a.approval.requested',
    time,
    outcome: 'ok',
    ...task,
    actionId: 'x',
    tool: 'fs.write',
    level: 'L3',
    user: 'person:p',
  },
  'a2a.approval.refused': { type: 'a2a.approval.refused', time, outcome: 'denied', ...task, reason: 'no_decider' },
  'a2a.approval.decided': {
    type: 'a2a.approval.decided',
    time,
    outcome: 'denied',
    user: 'person:p',
    actionId: 'x',
    taskId: 't-1',
    agent: 'echo',
    reason: 'denied',
  },
  'a2a.approval.decision_refused': {
    type: 'a2a.approval.decision_refused',
    time,
    outcome: 'denied',
    user: 'person:p',
    reason: 'expired',
  },
  'a2a.approval.consumed': { type: 'a2a.approval.consumed', time, outcome: 'ok', ...task, actionId: 'x' },
  'a2a.approval.reparked': {
    type: 'a2a.approval.reparked',
    time,
    outcome: 'denied',
    ...task,
    actionId: 'x',
    reason: 'not_decided',
  },
  'a2a.question.asked': { type: 'a2a.question.asked', time, outcome: 'ok', ...task, actionId: 'q', user: 'person:p' },
  'a2a.question.answered': {
    type: 'a2a.question.answered',
    time,
    outcome: 'ok',
    user: 'person:p',
    actionId: 'q',
    taskId: 't-1',
    agent: 'echo',
  },
  'a2a.question.consumed': { type: 'a2a.question.consumed', time, outcome: 'ok', ...task, actionId: 'q' },
  'a2a.server.auth_failed': {
    type: 'a2a.server.auth_failed',
    time,
    outcome: 'denied',
    reason: 'invalid_credentials',
    agent: 'echo',
  },
  'a2a.server.forbidden': { type: 'a2a.server.forbidden', time, outcome: 'denied', reason: 'relay_loop' },
  'a2a.server.rate_limited': {
    type: 'a2a.server.rate_limited',
    time,
    outcome: 'denied',
    reason: 'auth_failure_limit',
    agent: 'echo',
  },
  'a2a.task.suspicious_input': {
    type: 'a2a.task.suspicious_input',
    time,
    outcome: 'ok',
    client: 'a',
    agent: 'echo',
    counts: { marker: 1 },
  },
  'a2a.client.send': {
    type: 'a2a.client.send',
    time,
    outcome: 'denied',
    agent: 'weather',
    reason: 'card_pin_mismatch',
  },
  'a2a.client.get': { type: 'a2a.client.get', time, outcome: 'ok', agent: 'weather', taskId: 'r-1' },
  'a2a.tool.called': {
    type: 'a2a.tool.called',
    time,
    outcome: 'ok',
    agent: 'echo',
    taskId: 't-1',
    tool: 'fs.read',
    level: 'L1',
    durationMs: 4,
    argsBytes: 2,
    argsDigest: 'ab',
  },
  'a2a.tool.refused': {
    type: 'a2a.tool.refused',
    time,
    outcome: 'denied',
    agent: 'echo',
    taskId: 't-1',
    tool: 'fs.write',
    reason: 'budget_exceeded',
  },
  'a2a.tool.parked': {
    type: 'a2a.tool.parked',
    time,
    outcome: 'ok',
    agent: 'echo',
    taskId: 't-1',
    tool: 'fs.write',
    level: 'L3',
    argsBytes: 2,
    argsDigest: 'ab',
  },
  'a2a.push.delivered': {
    type: 'a2a.push.delivered',
    time,
    outcome: 'ok',
    agent: 'echo',
    taskId: 't-1',
    host: 'hooks.example',
  },
  'a2a.push.failed': {
    type: 'a2a.push.failed',
    time,
    outcome: 'error',
    agent: 'echo',
    taskId: 't-1',
    host: 'hooks.example',
    reason: 'http_status',
  },
  'a2a.push.refused': {
    type: 'a2a.push.refused',
    time,
    outcome: 'denied',
    agent: 'echo',
    taskId: 't-1',
    host: 'hooks.example',
    reason: 'address_blocked',
  },
  'config.reloaded': { type: 'config.reloaded', time, outcome: 'ok', sections: 'clients' },
  'config.reload_refused': { type: 'config.reload_refused', time, outcome: 'denied', reason: 'invalid_config' },
};

/** What each sample must give. */
const EXPECTED: { [T in AuditEventType]: RowMetrics } = {
  'a2a.task.submitted': {
    counts: [{ series: 'taskTransitions', labels: ['echo', 'submitted'] }],
    task: { id: 't-1', agent: 'echo' },
  },
  'a2a.task.completed': {
    counts: [{ series: 'taskTransitions', labels: ['echo', 'completed'] }],
    task: { id: 't-1', agent: 'echo', ends: 'completed' },
  },
  'a2a.task.failed': {
    counts: [
      { series: 'taskTransitions', labels: ['echo', 'failed'] },
      { series: 'taskFailures', labels: ['echo', 'agent_timeout'] },
    ],
    task: { id: 't-1', agent: 'echo', ends: 'failed' },
  },
  'a2a.task.canceled': {
    counts: [{ series: 'taskTransitions', labels: ['echo', 'canceled'] }],
    task: { id: 't-1', agent: 'echo', ends: 'canceled' },
  },
  'a2a.task.rejected': {
    counts: [{ series: 'taskTransitions', labels: ['echo', 'rejected'] }],
    task: { id: 't-1', agent: 'echo', ends: 'rejected' },
  },
  'a2a.task.input_required': { counts: [{ series: 'taskTransitions', labels: ['echo', 'input-required'] }] },
  'a2a.approval.requested': { counts: [{ series: 'approvalsRequested', labels: ['echo', 'action'] }] },
  'a2a.approval.refused': { counts: [{ series: 'approvalsRefused', labels: ['no_decider'] }] },
  'a2a.approval.decided': { counts: [{ series: 'approvalsDecided', labels: ['echo', 'denied'] }] },
  'a2a.approval.decision_refused': { counts: [{ series: 'approvalsRefused', labels: ['expired'] }] },
  'a2a.approval.consumed': { counts: [] },
  'a2a.approval.reparked': { counts: [] },
  'a2a.question.asked': { counts: [{ series: 'approvalsRequested', labels: ['echo', 'question'] }] },
  'a2a.question.answered': { counts: [{ series: 'approvalsDecided', labels: ['echo', 'answered'] }] },
  'a2a.question.consumed': { counts: [] },
  'a2a.server.auth_failed': { counts: [{ series: 'refusals', labels: ['echo', 'auth', 'invalid_credentials'] }] },
  'a2a.server.forbidden': { counts: [{ series: 'refusals', labels: ['none', 'loop', 'relay_loop'] }] },
  'a2a.server.rate_limited': { counts: [{ series: 'refusals', labels: ['echo', 'lockout', 'auth_failure_limit'] }] },
  'a2a.task.suspicious_input': { counts: [{ series: 'suspiciousInputs', labels: ['echo'] }] },
  'a2a.client.send': {
    counts: [{ series: 'outboundCalls', labels: ['weather', 'send', 'denied', 'card_pin_mismatch'] }],
  },
  'a2a.client.get': { counts: [{ series: 'outboundCalls', labels: ['weather', 'get', 'ok', 'none'] }] },
  'a2a.tool.called': { counts: [{ series: 'toolCalls', labels: ['echo', 'ok', 'none'] }] },
  'a2a.tool.refused': { counts: [{ series: 'toolCalls', labels: ['echo', 'refused', 'budget_exceeded'] }] },
  'a2a.tool.parked': { counts: [{ series: 'toolCalls', labels: ['echo', 'parked', 'none'] }] },
  'a2a.push.delivered': { counts: [{ series: 'pushDeliveries', labels: ['echo', 'delivered', 'none'] }] },
  'a2a.push.failed': { counts: [{ series: 'pushDeliveries', labels: ['echo', 'failed', 'http_status'] }] },
  'a2a.push.refused': { counts: [{ series: 'pushDeliveries', labels: ['echo', 'refused', 'address_blocked'] }] },
  'config.reloaded': { counts: [] },
  'config.reload_refused': { counts: [] },
};

describe('metricsOfRow', () => {
  for (const type of AUDIT_EVENT_TYPES) {
    it(`${type}: the increments it implies`, () => {
      assert.deepEqual(metricsOfRow(SAMPLES[type], AGENTS), EXPECTED[type]);
    });
  }

  it('every refusal reason of the spec has a class (a new reason without one fails here)', () => {
    const refusalTypes = ['a2a.server.auth_failed', 'a2a.server.forbidden', 'a2a.server.rate_limited'] as const;
    const reasons: string[] = refusalTypes.flatMap((type) => [...AUDIT_EVENT_SPEC[type].reasons]);
    reasons.push(...AUDIT_EVENT_SPEC['a2a.task.rejected'].reasons.filter((reason) => reason !== 'agent_rejected'));
    for (const reason of reasons) {
      assert.ok(reason in REFUSAL_CLASS, `no refusal class for ${reason}`);
      const row = {
        type: 'a2a.task.rejected',
        time,
        outcome: 'denied',
        client: 'a',
        agent: 'echo',
        reason,
      } as AuditEvent;
      const counts = metricsOfRow(row, AGENTS).counts;
      if (AUDIT_EVENT_SPEC['a2a.task.rejected'].reasons.includes(reason as never)) {
        assert.deepEqual(counts[0]?.labels, ['echo', REFUSAL_CLASS[reason as keyof typeof REFUSAL_CLASS], reason]);
      }
    }
  });

  it('an agent not in the config becomes `unknown`, in every series that names one', () => {
    for (const type of AUDIT_EVENT_TYPES) {
      const row = { ...SAMPLES[type], agent: 'Evil agent {"x"}' } as AuditEvent;
      const meaning = metricsOfRow(row, AGENTS);
      for (const { labels } of meaning.counts) {
        assert.ok(!labels.some((label) => label.includes('Evil')), `${type}: ${labels.join(',')}`);
      }
      if (meaning.task !== undefined) assert.equal(meaning.task.agent, 'unknown');
    }
  });

  it('an outbound name the registry did not know is `unknown` (the caller chose it)', () => {
    const row: AuditEvent = {
      type: 'a2a.client.send',
      time,
      outcome: 'denied',
      agent: 'made-up-by-caller',
      reason: 'agent_not_configured',
    };
    assert.deepEqual(metricsOfRow(row, AGENTS).counts[0]?.labels, [
      'unknown',
      'send',
      'denied',
      'agent_not_configured',
    ]);
  });

  it('a task failed because its approval expired is also an `expired` decision', () => {
    const row: AuditEvent = { ...SAMPLES['a2a.task.failed'], reason: 'action_expired' };
    assert.deepEqual(metricsOfRow(row, AGENTS).counts, [
      { series: 'taskTransitions', labels: ['echo', 'failed'] },
      { series: 'taskFailures', labels: ['echo', 'action_expired'] },
      { series: 'approvalsDecided', labels: ['echo', 'expired'] },
    ]);
  });

  it('a rejection before any task (a store quota) is a refusal of class quota', () => {
    const row: AuditEvent = {
      type: 'a2a.task.rejected',
      time,
      outcome: 'denied',
      client: 'a',
      agent: 'echo',
      reason: 'task_quota',
    };
    assert.deepEqual(metricsOfRow(row, AGENTS), {
      counts: [{ series: 'refusals', labels: ['echo', 'quota', 'task_quota'] }],
    });
  });
});
