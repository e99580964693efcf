// Main thread, for the maker gateway (gateway.ts). The JSON heartbeat (interface.md "Limits"): one interval for
// every maker, not a timer per socket; each tick sends `heartbeat` to every authenticated connection and
// closes one that left MAX_UNANSWERED_HEARTBEATS unanswered (a pong, read by dispatch.ts, resets its count).
// The same tick drops the held streams past their replay window (resume.ts). The interval is a timer on the
// gateway's clock, set again as each tick starts (as setInterval does), so a test's clock runs it too.
import type { Timer, TimerClock, TimerOptions } from '../lib/clock.js';
import type { Connection, MakerId } from './connection.js';
import { MAX_UNANSWERED_HEARTBEATS } from '../contract/maker-protocol.js';
import type { MakerStreams } from './resume.js';
import type { MakerSender } from './sender.js';

export interface HeartbeatDeps {
  intervalMs: number;
  /** The heartbeat's `ts`, and the timer of each tick. */
  clock: TimerClock;
  /** The gateway's authenticated connections (read only). */
  authenticated: ReadonlyMap<MakerId, Connection>;
  streams: Pick<MakerStreams, 'sweep'>;
  sender: Pick<MakerSender, 'send' | 'fail'>;
}

// The gateway's close stops the heartbeat; a process that never closes it must still be able to exit.
const IN_BACKGROUND: TimerOptions = { keepsProcessAlive: false };

export class Heartbeat {
  /** The next tick's timer; null when stopped. */
  #timer: Timer | null = null;
  /** One closure for every tick: the timer is set again on each, and nothing more is allocated for it. */
  readonly #onTimer = (): void => {
    this.#timer = this.deps.clock.setTimer(this.#onTimer, this.deps.intervalMs, IN_BACKGROUND);
    this.tick();
  };

  constructor(private readonly deps: HeartbeatDeps) {}

  start(): void {
    this.#timer = this.deps.clock.setTimer(this.#onTimer, this.deps.intervalMs, IN_BACKGROUND);
  }

  stop(): void {
    if (this.#timer !== null) this.deps.clock.clearTimer(this.#timer);
    this.#timer = null;
  }

  tick(): void {
    const message = { type: 'heartbeat', ts: this.deps.clock.nowMs() } as const;
    this.deps.streams.sweep(message.ts);
    // A copy: a close takes the connection out of the map being walked.
    for (const conn of [...this.deps.authenticated.values()]) {
      if (conn.unansweredHeartbeats >= MAX_UNANSWERED_HEARTBEATS) {
        this.deps.sender.fail(conn, 'HEARTBEAT_TIMEOUT');
        continue;
      }
      conn.unansweredHeartbeats++;
      this.deps.sender.send(conn, message);
    }
  }
}
