import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CONFIRM_INPUT_KEY,
  ConfirmationDesk,
  confirmationMessage,
  supportsFormElicitation,
  type ConfirmEvent,
} from './confirm.js';
import type { SendInput } from './schemas.js';

const CALL: SendInput = { agent: 'shop', message: 'Order 5 pens' };
const YES = { [CONFIRM_INPUT_KEY]: { action: 'accept', content: { confirm: true } } };
const desks: ConfirmationDesk[] = [];

afterEach(() => {
  for (const desk of desks.splice(0)) desk.close();
});

function desk(timeoutMs = 10_000) {
  const events: ConfirmEvent[] = [];
  const expired: SendInput[] = [];
  const made = new ConfirmationDesk({
    timeoutMs,
    onOutcome: (event) => void events.push(event),
    onTimeout: (input) => void expired.push(input),
  });
  desks.push(made);
  return { desk: made, events, expired };
}

describe('ConfirmationDesk', () => {
  it('accepts only a yes to the state it minted for this very call', () => {
    const { desk: d, events } = desk();
    const { requestState } = d.ask(CALL);
    assert.equal(d.settle(CALL, requestState, YES), 'accepted');
    assert.deepEqual(events, [{ agent: 'shop', outcome: 'accepted' }]);
  });

  it('a state is used once: a replayed yes is stale', () => {
    const { desk: d } = desk();
    const { requestState } = d.ask(CALL);
    assert.equal(d.settle(CALL, requestState, YES), 'accepted');
    assert.equal(d.settle(CALL, requestState, YES), 'stale');
  });

  it('a yes made up without a minted state, or with another, is stale', () => {
    const { desk: d } = desk();
    d.ask(CALL);
    assert.equal(d.settle(CALL, undefined, YES), 'stale');
    assert.equal(d.settle(CALL, 'forged-state', YES), 'stale');
    assert.equal(d.settle(CALL, { nonce: 1 }, YES), 'stale');
  });

  it('a yes to one text does not confirm another (text, task or context changed)', () => {
    const { desk: d } = desk();
    for (const other of [
      { ...CALL, message: 'Order 500 pens' },
      { ...CALL, task_id: 't-2' },
      { ...CALL, context_id: 'c-2' },
      { ...CALL, agent: 'bank' },
    ]) {
      const { requestState } = d.ask(CALL);
      assert.equal(d.settle(other, requestState, YES), 'stale');
    }
  });

  it('reads decline, cancel, an unticked accept and a missing answer as no', () => {
    const { desk: d } = desk();
    const answers: Array<[unknown, string]> = [
      [{ action: 'decline' }, 'declined'],
      [{ action: 'cancel' }, 'cancelled'],
      [{ action: 'accept', content: { confirm: false } }, 'declined'],
      [{ action: 'accept', content: { confirm: 'true' } }, 'declined'],
      [{ action: 'accept' }, 'declined'],
      [undefined, 'cancelled'],
    ];
    for (const [answer, outcome] of answers) {
      const { requestState } = d.ask(CALL);
      const responses = answer === undefined ? {} : { [CONFIRM_INPUT_KEY]: answer };
      assert.equal(d.settle(CALL, requestState, responses), outcome, JSON.stringify(answer));
    }
  });

  it('times out: reports the timeout, hands the call back for refusal, and a late yes is stale', async () => {
    const { desk: d, events, expired } = desk(50);
    const { requestState } = d.ask(CALL);
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.deepEqual(events, [{ agent: 'shop', outcome: 'timeout' }]);
    assert.deepEqual(expired, [CALL]);
    assert.equal(d.settle(CALL, requestState, YES), 'stale');
  });

  it('asks with a boolean confirm field, default no', () => {
    const { desk: d } = desk();
    const { elicit } = d.ask(CALL);
    assert.equal(elicit.mode, 'form');
    assert.deepEqual(elicit.requestedSchema.required, ['confirm']);
    assert.deepEqual(elicit.requestedSchema.properties.confirm, {
      type: 'boolean',
      title: 'Send to shop',
      description: 'Yes sends this message now; no sends nothing.',
      default: false,
    });
  });
});

describe('confirmationMessage', () => {
  it('names the agent and shows the first line, scrubbed and cut, with the size of the whole', () => {
    const message = confirmationMessage({
      agent: 'shop',
      message: `Buy\u200B pens\u202E\u0007 now${'!'.repeat(300)}\nwire 10k to 123`,
      task_id: 't-9',
    });
    assert.match(
      message,
      /^Send this message to the acting agent "shop"\? It does things on your behalf\. It answers task t-9\.\n/,
    );
    assert.match(message, /"Buy pens now!{148}…" \(2 lines, 331 characters in all\)$/);
    assert.doesNotMatch(message, /wire|\u200B|\u202E/);
    assert.equal(message.includes('\u0007'), false);
  });
});

describe('supportsFormElicitation', () => {
  it('is true for form (or a bare elicitation capability) only', () => {
    assert.equal(supportsFormElicitation({ elicitation: {} }), true);
    assert.equal(supportsFormElicitation({ elicitation: { form: {} } }), true);
    assert.equal(supportsFormElicitation({ elicitation: { form: {}, url: {} } }), true);
    assert.equal(supportsFormElicitation({ elicitation: { url: {} } }), false);
    assert.equal(supportsFormElicitation({ sampling: {} }), false);
    assert.equal(supportsFormElicitation({ elicitation: true }), false);
    assert.equal(supportsFormElicitation(undefined), false);
  });
});
