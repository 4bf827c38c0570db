import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CARD_EVENTS, cardEventLabels, tapLogger } from './card-events.js';

describe('card events', () => {
  it('counts the card trust events by entry; any other record is not counted', () => {
    for (const event of CARD_EVENTS) assert.deepEqual(cardEventLabels({ event, entry: 'weather' }), ['weather', event]);
    assert.equal(cardEventLabels({ event: 'listening', entry: 'weather' }), undefined);
    assert.equal(cardEventLabels({ event: 'card_pin_mismatch_from_caller', entry: 'weather' }), undefined);
    assert.equal(cardEventLabels({}), undefined);
  });

  it('an entry that is not a registry name is `unknown`', () => {
    assert.deepEqual(cardEventLabels({ event: 'card_pin_drift', entry: 'Not A Name {"x"}' }), [
      'unknown',
      'card_pin_drift',
    ]);
    assert.deepEqual(cardEventLabels({ event: 'card_pin_drift' }), ['unknown', 'card_pin_drift']);
  });

  it('tapLogger shows each record to the tap, then writes it; a tap that throws changes nothing', () => {
    const written: string[] = [];
    const seen: unknown[] = [];
    const base = {
      info: (r: Record<string, unknown>) => written.push(`info ${String(r.event)}`),
      warn: (r: Record<string, unknown>) => written.push(`warn ${String(r.event)}`),
      error: (r: Record<string, unknown>) => written.push(`error ${String(r.event)}`),
    };
    const logger = tapLogger(base, (record) => {
      seen.push(record.event);
      if (record.event === 'boom') throw new Error('tap failed');
    });
    logger.warn({ event: 'card_pin_mismatch', entry: 'weather' });
    logger.info({ event: 'boom' });
    logger.error({ event: 'x' });
    assert.deepEqual(seen, ['card_pin_mismatch', 'boom', 'x']);
    assert.deepEqual(written, ['warn card_pin_mismatch', 'info boom', 'error x']);
  });
});
