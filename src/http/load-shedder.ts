// Main thread. Load shedding of the routes that start work (an RFQ create) (contract section 2: 503
// OVERLOADED with Retry-After, nothing was accepted; docs/reliability.md, "Overload"). Two gates, asked by the
// HTTP layer at two points of a request:
//
// - event-loop delay (refusalAtDoor, right after routing: no auth lookup, no body read, no signature
//   recovery): the main thread is behind by more than `maxDelayMs`.
// - in flight (tryTakePlace, when the handler starts: after the bearer and the whole body): `maxInFlight`
//   such requests are running and not yet answered (held by wait_ms included). A hard bound on the memory and
//   shard work that admitted requests can hold, whatever the load. Taken only once the body is in:
//   a place taken before let any account hold every place with bodies it never finished sending.
//
// Why the delay gate: every stage of a request (reading it, the shard's answer, the wait timer, writing the
// reply) waits its turn on this thread, so its delay is the queue in front of every request in flight: measured at 6,000 RFQ/s offered, requests waited seconds
//   in this thread's turns with nothing left in the sockets' buffers or in the shard. Refusing costs a few µs
//   here, serving costs hundreds; refusing while the thread is behind lets it catch up.
//
// The delay is read without a histogram: a probe timer due every PROBE_INTERVAL_MS records how late it ran,
// and a request also sees a probe that is overdue right now (a long turn that has not let it run yet), so a
// burst read in one turn is shed within that turn rather than at the next tick.
import assert from 'node:assert/strict';

/** Why a request was refused (the label of parlayd_http_shed_total). */
export type ShedReason = 'in_flight' | 'event_loop_delay';

export interface LoadShedderOptions {
  /** Requests of shed routes admitted and not yet answered, at most (PARLAYD_MAX_IN_FLIGHT_CREATES). */
  maxInFlight: number;
  /** Main-thread delay (ms) past which they are refused; 0 turns the delay gate off (PARLAYD_MAX_EVENT_LOOP_DELAY_MS). */
  maxDelayMs: number;
}

/**
 * How often the probe runs. Short enough that a delay is seen within a few ms of starting, long enough to cost
 * nothing (100 timer turns a second, ~1 µs each). A probe's own lateness includes timer granularity (~1 ms).
 */
export const PROBE_INTERVAL_MS = 10;

export class LoadShedder {
  readonly #maxInFlight: number;
  readonly #maxDelayMs: number;
  #inFlight = 0;
  /** When the probe last ran (performance.now() ms), and how late it was then. */
  #probedAtMs = performance.now();
  #lastDelayMs = 0;
  #probe: NodeJS.Timeout | null = null;

  constructor(options: LoadShedderOptions) {
    this.#maxInFlight = options.maxInFlight;
    this.#maxDelayMs = options.maxDelayMs;
  }

  /** Starts the delay probe (unref'd: it never keeps the process up). A no-op when the delay gate is off. */
  start(): void {
    if (this.#maxDelayMs === 0 || this.#probe !== null) return;
    this.#probedAtMs = performance.now();
    this.#probe = setInterval(this.#onProbe, PROBE_INTERVAL_MS);
    this.#probe.unref();
  }

  stop(): void {
    if (this.#probe !== null) clearInterval(this.#probe);
    this.#probe = null;
  }

  /** Whether a request is refused at the door (the thread is behind), before anything is done for it. */
  refusalAtDoor(): ShedReason | null {
    if (this.#maxDelayMs > 0 && this.delayMs(performance.now()) > this.#maxDelayMs) return 'event_loop_delay';
    return null;
  }

  /**
   * Takes a place for a request whose handler is about to start, or says why not (the request then gets 503
   * and its handler does not run). Every place taken must be `release()`d exactly once, when it is answered
   * or given up.
   */
  tryTakePlace(): ShedReason | null {
    if (this.#inFlight >= this.#maxInFlight) return 'in_flight';
    this.#inFlight++;
    return null;
  }

  /** Gives a place back (a bound function: handed to the request that holds the place). */
  readonly release = (): void => {
    this.#inFlight--;
    assert.ok(this.#inFlight >= 0, 'load shedder released more places than it gave');
  };

  get inFlight(): number {
    return this.#inFlight;
  }

  /** How far behind the main thread is (ms): the probe's last lateness, or how overdue it is now if more. */
  delayMs(nowMs: number): number {
    return Math.max(this.#lastDelayMs, nowMs - this.#probedAtMs - PROBE_INTERVAL_MS);
  }

  readonly #onProbe = (): void => {
    const nowMs = performance.now();
    this.#lastDelayMs = Math.max(0, nowMs - this.#probedAtMs - PROBE_INTERVAL_MS);
    this.#probedAtMs = nowMs;
  };
}
