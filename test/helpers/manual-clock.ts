// A clock a test moves by hand (src/lib/clock.ts TimerClock): time stands still until advance(), which runs every
// timer that falls due, in due order, each at its own due time. The edge of the world, so a fake is allowed.
import type { Timer, TimerClock } from '../../src/lib/clock.js';

interface Pending {
  dueMs: number;
  seq: number;
  fn: () => void;
}

export class ManualClock implements TimerClock {
  #nowMs: number;
  #seq = 0;
  readonly #timers = new Map<Timer, Pending>();

  constructor(startMs: number) {
    this.#nowMs = startMs;
  }

  nowMs(): number {
    return this.#nowMs;
  }

  setTimer(fn: () => void, delayMs: number): Timer {
    const timer: Timer = { _timer: this.#seq };
    this.#timers.set(timer, { dueMs: this.#nowMs + Math.max(0, delayMs), seq: this.#seq++, fn });
    return timer;
  }

  clearTimer(timer: Timer): void {
    this.#timers.delete(timer);
  }

  /** Moves time forward by `ms`, running each timer due by then (timers set meanwhile included). */
  advance(ms: number): void {
    const targetMs = this.#nowMs + ms;
    for (;;) {
      let next: [Timer, Pending] | null = null;
      for (const entry of this.#timers) {
        const [, p] = entry;
        if (p.dueMs <= targetMs && (next === null || p.dueMs < next[1].dueMs || (p.dueMs === next[1].dueMs && p.seq < next[1].seq)))
          next = entry;
      }
      if (next === null) break;
      this.#timers.delete(next[0]);
      this.#nowMs = next[1].dueMs;
      next[1].fn();
    }
    this.#nowMs = targetMs;
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }
}
