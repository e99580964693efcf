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
// What counts is a standing delay, as in CoDel (Nichols and Jacobson, "Controlling Queue Delay"): the least
// delay seen over the last DELAY_WINDOW_MS. One long turn is a burst the thread works off in that turn (a
// fan-out to 1,000 makers brings their declines in one poll: 40-90 ms turns, each followed by on-time
// probes); refusing for it sent each refused caller away for its Retry-After second while the thread was
// idle again 10 ms later. A delay that persists through a window is a queue that does not drain: refused.
//
// The delay is read without a histogram: a probe timer due every PROBE_INTERVAL_MS records how late it ran.
// A request also sees a probe that is overdue right now (a long turn that has not let it run yet): when no
// probe has run for a whole window, the turn in progress is itself the standing delay, so a burst that
// holds the thread longer than that is shed within that turn rather than at the next tick.
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

/** The window a delay must persist through to be standing (CoDel's interval, for the same reason: a few turns). */
export const DELAY_WINDOW_MS = 100;
/** Probes that fit in one window, and one more: a ring of their times and delays. */
const PROBES_KEPT = Math.ceil(DELAY_WINDOW_MS / PROBE_INTERVAL_MS) + 1;

export class LoadShedder {
  readonly #maxInFlight: number;
  readonly #maxDelayMs: number;
  #inFlight = 0;
  /** When the probe last ran (performance.now() ms). */
  #probedAtMs = performance.now();
  /** The last PROBES_KEPT probes: when each ran and how late it was (ms), oldest overwritten first. */
  readonly #probeAtMs = new Float64Array(PROBES_KEPT).fill(-Infinity);
  readonly #probeDelayMs = new Float64Array(PROBES_KEPT);
  #nextProbeSlot = 0;
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

  /**
   * The standing delay of the main thread (ms): the least of the delays its probes saw over the last window.
   * No probe in the window: the turn in progress has lasted it all, and how overdue the probe is is the delay.
   */
  delayMs(nowMs: number): number {
    let standingMs = Infinity;
    const windowStartMs = nowMs - DELAY_WINDOW_MS;
    for (let slot = 0; slot < PROBES_KEPT; slot++) {
      if (this.#probeAtMs[slot]! >= windowStartMs) standingMs = Math.min(standingMs, this.#probeDelayMs[slot]!);
    }
    return standingMs === Infinity ? Math.max(0, nowMs - this.#probedAtMs - PROBE_INTERVAL_MS) : standingMs;
  }

  readonly #onProbe = (): void => {
    const nowMs = performance.now();
    this.#probeAtMs[this.#nextProbeSlot] = nowMs;
    this.#probeDelayMs[this.#nextProbeSlot] = Math.max(0, nowMs - this.#probedAtMs - PROBE_INTERVAL_MS);
    this.#nextProbeSlot = (this.#nextProbeSlot + 1) % PROBES_KEPT;
    this.#probedAtMs = nowMs;
  };
}
