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

export interface TimerOptions {
  /**
   * False for a periodic chore that a close stops anyway (the maker heartbeat): the timer alone does not keep
   * the process alive (Node's unref), so a process that forgot the close still exits. True unless given.
   */
  keepsProcessAlive?: boolean;
}

/** A clock that also runs timers: what an actor with deadlines (the RFQ shard, the maker gateway) is given. */
export interface TimerClock extends Clock {
  /** Runs `fn` once, `delayMs` from now (at least 0). */
  setTimer(fn: () => void, delayMs: number, options?: TimerOptions): Timer;
  clearTimer(timer: Timer): void;
}

/** A system timer: the pending timeout, its function, and the Date.now() it must not run before. */
interface SystemTimer extends Timer {
  _timer: NodeJS.Timeout;
  readonly fn: () => void;
  readonly dueMs: number;
}

/**
 * Node runs a timeout on its monotonic clock, which can reach the delay up to a millisecond before Date.now()
 * does: a deadline's function would then read a "now" just short of its deadline (a last look ending 1 ms
 * before the expiry it was meant to reach). A timer that fires early waits out the rest, so its function
 * always reads nowMs() >= its due time, as on a manual clock. No closure: the handle is the timeout's argument.
 */
function fireSystemTimer(timer: SystemTimer): void {
  const earlyMs = timer.dueMs - Date.now();
  if (earlyMs <= 0) return timer.fn();
  const again = setTimeout(fireSystemTimer, earlyMs, timer);
  if (!timer._timer.hasRef()) again.unref();
  timer._timer = again;
}

export const systemClock: TimerClock = {
  nowMs: () => Date.now(),
  setTimer: (fn, delayMs, options) => {
    const waitMs = Math.max(0, delayMs);
    const timer: SystemTimer = { _timer: undefined as unknown as NodeJS.Timeout, fn, dueMs: Date.now() + waitMs };
    timer._timer = setTimeout(fireSystemTimer, waitMs, timer);
    if (options?.keepsProcessAlive === false) timer._timer.unref();
    return timer;
  },
  clearTimer: (timer) => clearTimeout((timer as SystemTimer)._timer),
};

/**
 * `clock` when it runs timers; otherwise its time with the system's timers. For a service given a clock that
 * only tells the time (tests that move "now" for the oracle): its parts that wait still wait in real time,
 * while every "now" they read stays the given clock's, the one the sessions and the markets read too.
 */
export function withTimers(clock: Clock): TimerClock {
  if ('setTimer' in clock && 'clearTimer' in clock) return clock as TimerClock;
  return { nowMs: () => clock.nowMs(), setTimer: systemClock.setTimer, clearTimer: systemClock.clearTimer };
}
