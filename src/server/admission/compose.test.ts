import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { andThen, compose, REFUSED, type Step } from './compose.js';

const double: Step<number, number> = (n) => n * 2;
const later: Step<number, number> = (n) => Promise.resolve(n + 1);
const refuseOdd: Step<number, number> = (n) => (n % 2 === 1 ? REFUSED : n);

describe('compose', () => {
  it('runs synchronous steps at once: no promise, no microtask', () => {
    const chain = compose(double, double, refuseOdd);
    assert.equal(chain(3), 12);
  });

  it('the first refusal ends the chain; later steps never run', () => {
    let ran = false;
    const chain = compose(refuseOdd, (n: number) => {
      ran = true;
      return n;
    });
    assert.equal(chain(3), REFUSED);
    assert.equal(ran, false);
  });

  it('goes on after a step that answers with a promise', async () => {
    const chain = compose(double, later, double);
    const outcome = chain(2);
    assert.ok(outcome instanceof Promise);
    assert.equal(await outcome, 10);
    assert.equal(await compose(later, refuseOdd, double)(2), REFUSED);
  });

  it('hands back the last step’s own promise', async () => {
    const last = Promise.resolve(7);
    const outcome = compose(double, () => last)(1);
    assert.equal(outcome, last);
    assert.equal(await outcome, 7);
  });

  it('passes a rejection on', async () => {
    const chain = compose(later, () => Promise.reject(new Error('down')));
    await assert.rejects(Promise.resolve(chain(1)), /down/);
  });
});

describe('andThen', () => {
  it('applies next at once to a value, after settling to a promise', async () => {
    assert.equal(
      andThen(2, (n) => n + 1),
      3,
    );
    assert.equal(await andThen(Promise.resolve(2), (n) => n + 1), 3);
  });
});
