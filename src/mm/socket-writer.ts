// Main thread. Writing frames to maker sockets (for the gateway, gateway.ts, which owns the sockets): the
// send-buffer limit, and the batching of broadcasts. Frames arrive numbered (stream.ts) and must reach the
// wire in that order; a socket past the limit is marked slow and handed to `closeSlow`, never written to
// again, so its buffer cannot grow.
import type { Connection } from './connection.js';

// uWS's own limit sits above ours, as a backstop only: ours closes with a reason first. The margin covers
// the largest message that can be queued after the soft check passed.
export const HARD_BACKPRESSURE_MARGIN_BYTES = 64 * 1024;
/** Frames written under one cork before the send buffer is checked again; 64 x ~250 B sits well in the margin. */
const MAX_FRAMES_PER_CORK = 64;

export class SocketWriter {
  /** Connections with broadcast frames queued for the end of the current task (queue). */
  #pendingConns: Connection[] = [];
  #isFlushQueued = false;

  constructor(
    private readonly softLimitBytes: number,
    /** Called once, in a microtask, for a socket found past the limit: a write never calls back mid-call. */
    private readonly closeSlow: (conn: Connection) => void,
  ) {}

  /**
   * A broadcast frame. Each maker's frame differs (its own seq), so a broadcast cannot be one uWS publish,
   * which batched the writes of a whole event-loop turn per socket. Written one by one, ten makers cost ten
   * write system calls per RFQ: 7 % of the main thread at 2,000 RFQ/s, against 0.6 % for the publish
   * (measured, docs/performance.md). Queued instead, and written once the current task (a batch of shard
   * events) is done: one corked write per socket for every RFQ of the batch.
   */
  queue(conn: Connection, frame: string): void {
    if (this.isSlow(conn)) return;
    if (conn.pending.length === 0) this.#pendingConns.push(conn);
    conn.pending.push(frame);
    if (this.#isFlushQueued) return;
    this.#isFlushQueued = true;
    queueMicrotask(() => this.#flushPending());
  }

  /** Writes the socket's queued broadcast frames, corked: one write. Called before any other write to it. */
  flush(conn: Connection): void {
    if (conn.pending.length === 0) return;
    const frames = conn.pending;
    conn.pending = [];
    const ws = conn.ws;
    if (conn.isClosed || ws === null) return;
    ws.cork(() => {
      for (const frame of frames) ws.send(frame, false);
    });
    this.isSlow(conn);
  }

  /** Forgets what was queued for a socket too slow to read it (its stream still holds it for a resume). */
  drop(conn: Connection): void {
    conn.pending = [];
  }

  /** Writes one frame after what was queued before it; false when the socket is gone or too far behind. */
  write(conn: Connection, frame: string): boolean {
    if (this.isSlow(conn)) return false;
    this.flush(conn);
    if (conn.isClosed || conn.ws === null) return false;
    conn.ws.send(frame, false);
    return !this.isSlow(conn);
  }

  /**
   * Frames already serialized (by an RFQ shard), corked so that a batch is one write. The send-buffer limit
   * is checked every MAX_FRAMES_PER_CORK frames, so at most that many frames pass the soft limit before the
   * maker is closed as slow: within HARD_BACKPRESSURE_MARGIN_BYTES.
   */
  writeAll(conn: Connection, frames: readonly string[]): boolean {
    this.flush(conn);
    for (let start = 0; start < frames.length; start += MAX_FRAMES_PER_CORK) {
      if (this.isSlow(conn)) return false;
      const ws = conn.ws!;
      const end = Math.min(frames.length, start + MAX_FRAMES_PER_CORK);
      ws.cork(() => {
        for (let i = start; i < end; i++) ws.send(frames[i]!, false);
      });
    }
    return !this.isSlow(conn);
  }

  /**
   * True when nothing more may be written to the socket: it is gone, or its send buffer passed the limit
   * (then it is marked slow and closed with SLOW_CONSUMER instead of letting memory grow; uWS's hard limit,
   * a close without a reason, is never reached).
   */
  isSlow(conn: Connection): boolean {
    if (conn.isClosed || conn.isSlow || conn.ws === null) return true;
    if (conn.ws.getBufferedAmount() <= this.softLimitBytes) return false;
    conn.isSlow = true;
    queueMicrotask(() => this.closeSlow(conn));
    return true;
  }

  #flushPending(): void {
    this.#isFlushQueued = false;
    const conns = this.#pendingConns;
    this.#pendingConns = [];
    for (const conn of conns) this.flush(conn);
  }
}
