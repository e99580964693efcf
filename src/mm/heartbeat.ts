// Main thread, for the maker gateway (gateway.ts). The JSON heartbeat (interface.md "Limits"): one interval for
// every maker, not a timer per socket; each tick sends `heartbeat` to every authenticated connection and
// closes one that left MAX_UNANSWERED_HEARTBEATS unanswered (a pong, read by dispatch.ts, resets its count).
// The same tick drops the held streams past their replay window (resume.ts).
import type { Clock } from '../clock.js';
import type { Connection, MakerId } from './connection.js';
import { MAX_UNANSWERED_HEARTBEATS } from './protocol.js';
import type { MakerStreams } from './resume.js';
import type { MakerSender } from './sender.js';

export interface HeartbeatDeps {
  intervalMs: number;
  clock: Clock;
  /** The gateway's authenticated connections (read only). */
  authenticated: ReadonlyMap<MakerId, Connection>;
  streams: Pick<MakerStreams, 'sweep'>;
  sender: Pick<MakerSender, 'send' | 'fail'>;
}

export class Heartbeat {
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: HeartbeatDeps) {}

  start(): void {
    this.#timer = setInterval(() => this.tick(), this.deps.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
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
