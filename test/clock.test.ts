// The system clock's timers (src/lib/clock.ts): a timer's function never reads a "now" before the time it was
// due. Node fires a timeout on its monotonic clock, which can be up to a millisecond ahead of Date.now();
// without the wait-out in systemClock a few of these runs fire early (measured here: 0 to 10 in 200 timers
// per process), and a deadline read then was short of itself (a last look ending 1 ms before its expiry).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../src/lib/clock.js';

test('a system timer runs no earlier than its due time on the clock it was set by', async () => {
  const early: number[] = [];
  for (let round = 0; round < 300; round++) {
    // A random sub-millisecond phase against the millisecond boundaries of the two clocks.
    const spinUntil = performance.now() + Math.random();
    while (performance.now() < spinUntil);
    const delayMs = 1 + (round % 3);
    const dueMs = systemClock.nowMs() + delayMs;
    await new Promise<void>((done) =>
      systemClock.setTimer(() => {
        const nowMs = systemClock.nowMs();
        if (nowMs < dueMs) early.push(dueMs - nowMs);
        done();
      }, delayMs),
    );
  }
  assert.deepEqual(early, [], 'timers that ran before their due time, by how many ms');
});

test('a cleared system timer does not run', async () => {
  let ran = 0;
  for (let i = 0; i < 50; i++) systemClock.clearTimer(systemClock.setTimer(() => ran++, 1 + (i % 2)));
  await new Promise((done) => setTimeout(done, 20));
  assert.equal(ran, 0);
});
