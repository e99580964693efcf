// The load shedder's two gates (src/http/load-shedder.ts) on this thread's real event loop: the in-flight
// bound, and the delay probe: a turn that blocks the thread for a whole window, and turns that keep it
// behind through one, are refused; one long turn between on-time probes (a burst) is not
// (docs/reliability.md, "Overload").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DELAY_WINDOW_MS, LoadShedder, PROBE_INTERVAL_MS } from '../../src/http/load-shedder.js';
import { waitFor } from '../helpers/wait.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function blockThread(ms: number): void {
  const untilMs = performance.now() + ms;
  while (performance.now() < untilMs) {
    // a turn that does not yield, as a burst of requests read at once does
  }
}

test('past maxInFlight a request is refused in_flight until a place is released', () => {
  const shedder = new LoadShedder({ maxInFlight: 2, maxDelayMs: 0 });
  assert.equal(shedder.tryTakePlace(), null);
  assert.equal(shedder.tryTakePlace(), null);
  assert.equal(shedder.tryTakePlace(), 'in_flight');
  assert.equal(shedder.inFlight, 2);
  shedder.release();
  assert.equal(shedder.tryTakePlace(), null);
  shedder.release();
  shedder.release();
  assert.equal(shedder.inFlight, 0);
  assert.throws(() => shedder.release(), /released more places than it gave/);
});

test('a thread blocked past maxDelayMs refuses event_loop_delay within the same turn, and admits again once it catches up', async () => {
  const shedder = new LoadShedder({ maxInFlight: 100, maxDelayMs: 30 });
  shedder.start();
  try {
    await sleep(3 * PROBE_INTERVAL_MS);
    assert.equal(shedder.refusalAtDoor(), null);
    blockThread(120);
    // The probe has not run during the block: it is overdue now, and that is seen without waiting for it.
    assert.ok(shedder.delayMs(performance.now()) >= 90, `delay ${shedder.delayMs(performance.now())} ms`);
    assert.equal(shedder.refusalAtDoor(), 'event_loop_delay');
    // Once the probe has run on time again, requests are admitted (polled: a busy test machine may delay it).
    let reason = shedder.refusalAtDoor();
    await waitFor(() => reason === null || (reason = shedder.refusalAtDoor()) === null, {
      timeoutMs: 2000,
      intervalMs: PROBE_INTERVAL_MS,
      get what() {
        return `a request admitted again (last refusal: ${reason})`;
      },
    });
  } finally {
    shedder.stop();
  }
});

test('one turn past maxDelayMs but shorter than the window, between on-time probes, is a burst: admitted', async () => {
  const shedder = new LoadShedder({ maxInFlight: 100, maxDelayMs: 30 });
  shedder.start();
  try {
    await sleep(3 * PROBE_INTERVAL_MS);
    blockThread(DELAY_WINDOW_MS * 0.6);
    assert.equal(shedder.refusalAtDoor(), null, `standing delay ${shedder.delayMs(performance.now())} ms`);
  } finally {
    shedder.stop();
  }
});

test('turns that keep the thread past maxDelayMs through a whole window are a standing delay: refused', async () => {
  const shedder = new LoadShedder({ maxInFlight: 100, maxDelayMs: 30 });
  shedder.start();
  try {
    await sleep(3 * PROBE_INTERVAL_MS);
    // Long turns with the briefest yield between them: each probe runs, late, between two of them.
    const untilMs = performance.now() + 3 * DELAY_WINDOW_MS;
    while (performance.now() < untilMs) {
      blockThread(45);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    assert.ok(shedder.delayMs(performance.now()) > 30, `standing delay ${shedder.delayMs(performance.now())} ms`);
    assert.equal(shedder.refusalAtDoor(), 'event_loop_delay');
  } finally {
    shedder.stop();
  }
});

test('with maxDelayMs 0 a blocked thread sheds nothing', () => {
  const shedder = new LoadShedder({ maxInFlight: 100, maxDelayMs: 0 });
  shedder.start();
  try {
    blockThread(60);
    assert.equal(shedder.refusalAtDoor(), null);
  } finally {
    shedder.stop();
  }
});
