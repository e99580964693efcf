// Any thread. The one source of "now", and of the timers that act on it, for every decision that depends on
// time, so tests can move it (a clock is the edge of the world; STYLE: fakes only there). A module with
// time rules takes a Clock (or a TimerClock when it also waits) instead of calling Date.now or setTimeout.
export interface Clock {
  nowMs(): number;
}

/** An opaque timer handle, valid only for the clock that made it. */
export interface Timer {
  readonly _timer: unknown;
}

/** A clock that also runs timers: what an actor with deadlines (the RFQ shard) is given. */
export interface TimerClock extends Clock {
  /** Runs `fn` once, `delayMs` from now (at least 0). */
  setTimer(fn: () => void, delayMs: number): Timer;
  clearTimer(timer: Timer): void;
}

export const systemClock: TimerClock = {
  nowMs: () => Date.now(),
  setTimer: (fn, delayMs) => ({ _timer: setTimeout(fn, Math.max(0, delayMs)) }),
  clearTimer: (timer) => clearTimeout(timer._timer as NodeJS.Timeout),
};
