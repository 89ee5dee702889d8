// The watcher's debounce on a fake clock: a burst is one run, a steady stream still runs by
// maxWaitMs, runs never overlap, and a change during a run makes exactly one more.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Debouncer, type Timers } from '../../../src/kubernetes/debounce.js';

/** A fake clock: timers fire only when `advance` passes their time. */
function fakeTimers(): Timers & { advance(ms: number): void } {
  let now = 0;
  let next = 0;
  const pending = new Map<number, { at: number; run: () => void }>();
  return {
    now: () => now,
    setTimeout: (run, ms) => {
      next += 1;
      pending.set(next, { at: now + ms, run });
      return next;
    },
    clearTimeout: (handle) => void pending.delete(handle as number),
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const due = [...pending.entries()]
          .filter(([, t]) => t.at <= until)
          .sort((a, b) => a[1].at - b[1].at)[0];
        if (due === undefined) break;
        pending.delete(due[0]);
        now = due[1].at;
        due[1].run();
      }
      now = until;
    },
  };
}

test('a burst of changes is one run, after the quiet period', async () => {
  const timers = fakeTimers();
  let runs = 0;
  const debouncer = new Debouncer(async () => void (runs += 1), { quietMs: 100, maxWaitMs: 1000 }, timers);
  for (let i = 0; i < 50; i += 1) {
    debouncer.changed();
    timers.advance(10);
  }
  assert.equal(runs, 0, 'no run while changes keep coming within the quiet period');
  timers.advance(100);
  await debouncer.idle();
  assert.equal(runs, 1);
  timers.advance(1000);
  assert.equal(runs, 1, 'nothing more without a change');
});

test('a steady stream still runs once maxWaitMs passed since the burst began', async () => {
  const timers = fakeTimers();
  const at: number[] = [];
  const debouncer = new Debouncer(
    async () => void at.push(timers.now()),
    { quietMs: 100, maxWaitMs: 300 },
    timers,
  );
  for (let i = 0; i < 40; i += 1) {
    debouncer.changed();
    timers.advance(50);
    await debouncer.idle();
  }
  assert.ok(at.length >= 5, `ran ${at.length} times over 2 s of changes every 50 ms`);
  assert.equal(at[0], 300);
});

test('runs never overlap; a change during a run makes exactly one more run after it', async () => {
  const timers = fakeTimers();
  let running = 0;
  let most = 0;
  let runs = 0;
  let release: () => void = () => undefined;
  const debouncer = new Debouncer(
    async () => {
      running += 1;
      runs += 1;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => (release = resolve));
      running -= 1;
    },
    { quietMs: 10, maxWaitMs: 100 },
    timers,
  );
  debouncer.changed();
  timers.advance(10);
  assert.equal(runs, 1);
  for (let i = 0; i < 5; i += 1) debouncer.changed();
  timers.advance(50);
  assert.equal(runs, 1, 'no second run while the first goes on');
  release();
  await new Promise((resolve) => setImmediate(resolve));
  timers.advance(10);
  assert.equal(runs, 2, 'one more run for the changes made meanwhile');
  release();
  await debouncer.idle();
  assert.equal(most, 1);
});

test('a failing run does not stop later runs; close stops them', async () => {
  const timers = fakeTimers();
  let runs = 0;
  const debouncer = new Debouncer(
    async () => {
      runs += 1;
      throw new Error('boom');
    },
    { quietMs: 10, maxWaitMs: 100 },
    timers,
  );
  debouncer.changed();
  timers.advance(10);
  await debouncer.idle();
  debouncer.changed();
  timers.advance(10);
  await debouncer.idle();
  assert.equal(runs, 2);
  debouncer.changed();
  debouncer.close();
  timers.advance(100);
  assert.equal(runs, 2);
});
