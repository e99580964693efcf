// Main thread. Writing frames to maker sockets (for the gateway, gateway.ts, which owns the sockets): the
// send-buffer limit, and one flush per event-loop turn. Frames arrive numbered (stream.ts) and must reach the
// wire in that order; a socket past the limit is marked slow and handed to `closeSlow`, never written to
// again, so its buffer cannot grow.
//
// Every frame for a socket is queued, and every socket written in a loop turn is flushed once, corked, after
// the turn's I/O (setImmediate: the check phase, right after the poll that brought the shard events and the
// makers' frames). A numbered frame is queued as its seq and a reference to its body's UTF-8 bytes in a maker
// stream's arena (stream.ts): an rfq's bytes are made once per RFQ, however many makers get it, and at the
// flush each socket's `{"seq":N,` is spliced in front of them in a scratch buffer that uWS copies into the
// socket's cork buffer. No string is built per socket and uWS encodes none. Bounds: a socket's queue holds
// at most MAX_QUEUED_FRAMES frames (then it is flushed at once); the scratch buffer is the largest frame.
import type { ArenaBytes } from './byte-arena.js';
import type { Connection, QueuedFrame } from './connection.js';

// uWS's own limit sits above ours, as a backstop only: ours closes with a reason first. The margin covers
// the largest message that can be queued after the soft check passed.
export const HARD_BACKPRESSURE_MARGIN_BYTES = 64 * 1024;
/** Frames written under one cork before the send buffer is checked again; 64 x ~250 B sits well in the margin. */
const MAX_FRAMES_PER_CORK = 64;
/** Frames queued for one socket in one turn past which it is flushed at once: a bound on the queue's memory. */
export const MAX_QUEUED_FRAMES = 1024;

/** pendingSeqs entry of a frame queued as text (it carries its seq, if any, already). */
const AS_TEXT = 0;

const NO_FRAMES: readonly QueuedFrame[] = [];
const NO_SEQS: readonly number[] = [];

const SEQ_PREFIX = '{"seq":';
const COMMA = 0x2c;
const DIGIT_0 = 0x30;
/** A seq's digits: at most 16 (Number.MAX_SAFE_INTEGER), plus the comma. */
const MAX_STAMP_BYTES = SEQ_PREFIX.length + 17;
const FIRST_SCRATCH_BYTES = 16 * 1024;
/** Frame lengths whose view of the scratch buffer is kept (a view per write is garbage per socket per RFQ). */
const MAX_CACHED_VIEW_BYTES = 4096;

export class SocketWriter {
  /** Connections with frames queued for the end of the current loop turn. */
  #pendingConns: Connection[] = [];
  #isFlushQueued = false;
  /** `{"seq":` then the digits and body of the frame being written; uWS copies it before send returns. */
  #scratch = Buffer.allocUnsafeSlow(FIRST_SCRATCH_BYTES);
  /** #views[n]: the scratch buffer's first n bytes. */
  #views: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(MAX_CACHED_VIEW_BYTES + 1);
  readonly #flushPendingBound = () => this.#flushPending();
  // What #writeCorked writes: set by flush just before the cork (no closure per socket per turn).
  #corkWs: Connection['ws'] = null;
  #corkFrames: readonly QueuedFrame[] = NO_FRAMES;
  #corkSeqs: readonly number[] = NO_SEQS;
  #corkStart = 0;
  #corkEnd = 0;
  readonly #writeCorkedBound = () => this.#writeCorked();

  constructor(
    private readonly softLimitBytes: number,
    /** Called once, in a microtask, for a socket found past the limit: a write never calls back mid-call. */
    private readonly closeSlow: (conn: Connection) => void,
    /** Runs the turn's flush once the turn's I/O is done: setImmediate (a test on a manual clock: at once). */
    private readonly endOfTurn: (flush: () => void) => void = setImmediate,
  ) {
    this.#scratch.write(SEQ_PREFIX, 0, 'latin1');
  }

  /**
   * A numbered frame: `body` (a stream's bytes for `seq`, stream.ts) behind `{"seq":<seq>,`, written at the
   * end of the turn. Broadcasts are queued the same body for every socket: each maker's frame differs only by
   * its seq, so a broadcast cannot be one uWS publish, but it is one encoding.
   */
  queueStamped(conn: Connection, seq: number, body: ArenaBytes): void {
    if (conn.isClosed || conn.isSlow || conn.ws === null) return;
    this.#enqueue(conn, seq, body);
  }

  /** A frame as text, written at the end of the turn after what was queued before it. */
  queue(conn: Connection, frame: string): void {
    if (conn.isClosed || conn.isSlow || conn.ws === null) return;
    this.#enqueue(conn, AS_TEXT, frame);
  }

  /** As queue; false when the socket is gone or too far behind. */
  write(conn: Connection, frame: string): boolean {
    this.queue(conn, frame);
    return !this.isSlow(conn);
  }

  /** As queueStamped; false when the socket is gone or too far behind. */
  writeStamped(conn: Connection, seq: number, body: ArenaBytes): boolean {
    this.queueStamped(conn, seq, body);
    return !this.isSlow(conn);
  }

  /**
   * Writes the socket's queued frames now, corked (one write system call per cork buffer). The send-buffer
   * limit is checked every MAX_FRAMES_PER_CORK frames, so at most that many frames pass the soft limit before
   * the maker is closed as slow: within HARD_BACKPRESSURE_MARGIN_BYTES. Called before a close.
   */
  flush(conn: Connection): void {
    if (conn.pending.length === 0) return;
    const frames = conn.pending;
    const seqs = conn.pendingSeqs;
    // Taken first: a close uWS runs inside send (its hard limit) may queue to other sockets, never this one.
    conn.pending = [];
    conn.pendingSeqs = [];
    // The flags only: the send buffer is read after each cork (a native call per socket per turn, not two).
    if (conn.isClosed || conn.isSlow || conn.ws === null) return;
    for (let start = 0; start < frames.length; start += MAX_FRAMES_PER_CORK) {
      this.#corkWs = conn.ws;
      this.#corkFrames = frames;
      this.#corkSeqs = seqs;
      this.#corkStart = start;
      this.#corkEnd = Math.min(frames.length, start + MAX_FRAMES_PER_CORK);
      conn.ws.cork(this.#writeCorkedBound);
      if (this.isSlow(conn)) return;
    }
  }

  /** Forgets what was queued for a socket too slow to read it (its stream still holds it for a resume). */
  drop(conn: Connection): void {
    conn.pending = [];
    conn.pendingSeqs = [];
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

  #enqueue(conn: Connection, seq: number, frame: QueuedFrame): void {
    if (conn.pending.length === 0) this.#pendingConns.push(conn);
    conn.pending.push(frame);
    conn.pendingSeqs.push(seq);
    // Flushed now rather than holding more. It stays in #pendingConns, and is put there again by its next
    // frame: an empty queue flushes as nothing, and a socket is listed at most once per MAX_QUEUED_FRAMES.
    if (conn.pending.length >= MAX_QUEUED_FRAMES) this.flush(conn);
    if (this.#isFlushQueued) return;
    this.#isFlushQueued = true;
    this.endOfTurn(this.#flushPendingBound);
  }

  #writeCorked(): void {
    // Locals: a flush reached from inside a send (a close handler) sets the fields for its own cork.
    const ws = this.#corkWs!;
    const frames = this.#corkFrames;
    const seqs = this.#corkSeqs;
    const end = this.#corkEnd;
    this.#corkWs = null;
    this.#corkFrames = NO_FRAMES; // not kept alive past the write
    this.#corkSeqs = NO_SEQS;
    for (let i = this.#corkStart; i < end; i++) {
      const frame = frames[i]!;
      if (typeof frame === 'string') ws.send(frame, false);
      else ws.send(this.#stamp(seqs[i]!, frame), false);
    }
  }

  /** The frame `{"seq":<seq>,` + body in the scratch buffer, as a view of it. */
  #stamp(seq: number, body: ArenaBytes): Uint8Array {
    if (MAX_STAMP_BYTES + body.length > this.#scratch.length) this.#growScratch(MAX_STAMP_BYTES + body.length);
    const scratch = this.#scratch;
    let digits = 1;
    for (let rest = seq; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    let at = SEQ_PREFIX.length + digits;
    for (let rest = seq, i = at - 1; i >= SEQ_PREFIX.length; i--, rest = Math.floor(rest / 10)) scratch[i] = DIGIT_0 + (rest % 10);
    scratch[at++] = COMMA;
    scratch.set(body.bytes, at); // a memmove: no argument checks, unlike Buffer#copy
    const frameBytes = at + body.length;
    if (frameBytes > MAX_CACHED_VIEW_BYTES) return new Uint8Array(scratch.buffer, scratch.byteOffset, frameBytes);
    return (this.#views[frameBytes] ??= new Uint8Array(scratch.buffer, scratch.byteOffset, frameBytes));
  }

  #growScratch(minBytes: number): void {
    this.#scratch = Buffer.allocUnsafeSlow(Math.max(minBytes, 2 * this.#scratch.length));
    this.#scratch.write(SEQ_PREFIX, 0, 'latin1');
    this.#views = new Array<Uint8Array | undefined>(MAX_CACHED_VIEW_BYTES + 1);
  }

  #flushPending(): void {
    this.#isFlushQueued = false;
    const conns = this.#pendingConns;
    this.#pendingConns = [];
    for (const conn of conns) this.flush(conn);
  }
}
