import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertAuditSafe } from '../../audit/index.js';
import { reloadAuditRow, sectionsOf } from './audit-row.js';

const now = new Date('2026-01-01T00:00:00.000Z');

describe('reload audit rows', () => {
  it('names the changed sections of an applied reload, each once, and nothing below them', () => {
    const row = reloadAuditRow(
      { outcome: 'applied', changed: ['limits.maxParts', 'clients[b]', 'clients[c].token'] },
      now,
    );
    assert.deepEqual(row, {
      type: 'config.reloaded',
      time: '2026-01-01T00:00:00.000Z',
      outcome: 'ok',
      sections: 'clients,limits',
    });
    assertAuditSafe(row);
    assert.doesNotMatch(JSON.stringify(row), /\[|token|maxParts/);
  });

  it('an applied reload that changed nothing names no section', () => {
    const row = reloadAuditRow({ outcome: 'applied', changed: [] }, now);
    assert.deepEqual(row, { type: 'config.reloaded', time: '2026-01-01T00:00:00.000Z', outcome: 'ok' });
    assertAuditSafe(row);
  });

  it('a refused reload has its reason code and, for a restart, the sections that need one; never the message', () => {
    const restart = reloadAuditRow(
      {
        outcome: 'refused',
        reason: 'needs_restart',
        message: 'these keys need a restart: server.port',
        restart: ['server.port', 'agents[echo].backend'],
      },
      now,
    );
    assert.deepEqual(restart, {
      type: 'config.reload_refused',
      time: '2026-01-01T00:00:00.000Z',
      outcome: 'denied',
      reason: 'needs_restart',
      sections: 'agents,server',
    });
    assertAuditSafe(restart);
    const invalid = reloadAuditRow(
      { outcome: 'refused', reason: 'invalid_config', message: 'config: clients[0].token (from SECRET_X): too short' },
      now,
    );
    assertAuditSafe(invalid);
    assert.doesNotMatch(JSON.stringify(invalid), /SECRET_X|token|message/);
  });

  it('drops a key whose section is not a plain name', () => {
    assert.equal(sectionsOf(['Evil Section.x', '[0]', '']), undefined);
    assert.equal(sectionsOf(['auth.jwt.issuer', 'Evil.x']), 'auth');
  });
});
