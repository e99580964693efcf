// Main thread. One maker stream (docs/maker-protocol.md section 3.5): the sequence numbers of the
// server -> maker messages of one session, and the ring of the frames last written on it, so that a maker that
// lost its socket can have them replayed on a new one (resume.ts decides a resume; dispatch.ts writes the replay).
//
// Bounds: the ring holds at most `maxMessages` frames and none older than `replayMs` (both configured,
// PARLAYD_MM_REPLAY_MAX_MESSAGES and PARLAYD_MM_REPLAY_MS), and its own frames' text in at most
// OWN_BYTES_PER_MESSAGE x maxMessages bytes (past that the oldest frames go first). It stores each frame's
// text without its seq (the serialized message less its leading `{`), as UTF-8 outside V8's heap
// (byte-arena.ts): a frame held for seconds would otherwise be copied by every young-generation collection
// of the main thread. An rfq's text is put once in the streams' shared arena (SHARED_ARENA_BYTES, the newest
// rfqs of every maker) and each ring keeps only its place; an rfq whose text has left it is long past its
// quote deadline, and such rfqs are never replayed anyway.
//
// The bytes held are also what the socket writes (socket-writer.ts): a frame is its `{"seq":N,` prefix
// spliced in front of them, so an rfq's text is encoded once however many makers get it.
//
// Cost per frame: one UTF-8 copy of a frame of its own (none for an rfq) and six typed-array writes; no JSON
// work, no string built. A replay decodes the bytes back to text.

import { ByteArena, bytesAt, type ArenaBytes, type ArenaPlace } from './byte-arena.js';

/** Bytes of its own frames' text a stream may hold per frame it may hold: quote_ack, rfq_result ~150. */
export const OWN_BYTES_PER_MESSAGE = 256;
/** Bytes of rfq text the shared arena holds: ~16,000 rfqs, seconds of the highest rates. */
export const SHARED_ARENA_BYTES = 8 * 1024 * 1024;
const FIRST_CAPACITY = 64;

/** `deadlineMs` of a frame never worth replaying (heartbeat, AUTH_EXPIRED, resumed, resume_failed). */
export const NEVER_REPLAY = -1;
/** `deadlineMs` of a frame always replayed while held. */
export const ALWAYS_REPLAY = 0;

export interface RingLimits {
  replayMs: number;
  maxMessages: number;
}

/** The text a stamped frame carries after its `{"seq":N,` prefix: the serialized message less its `{`. */
export function bodyOf(serialized: string): string {
  return serialized.slice(1);
}

/** The frame as written: the seq first, then the message's own fields. */
export function stamp(seq: number, body: string): string {
  return '{"seq":' + seq + ',' + body;
}

export class MakerStream {
  /** The seq the next frame gets; gapless from 1. */
  nextSeq = 1;
  // The ring, as parallel typed arrays grown (doubling) up to maxMessages: entry i (0 = oldest held) sits at
  // (#head + i) % #capacity and has seq #oldestSeq + i. A frame's text is at (#chunk, #offset, #length) in
  // its own arena, or in the shared one when #isShared.
  #atMs = new Float64Array(0);
  #deadlineMs = new Float64Array(0);
  #chunk = new Int32Array(0);
  #offset = new Int32Array(0);
  #length = new Int32Array(0);
  #isShared = new Uint8Array(0);
  #capacity = 0;
  #head = 0;
  #count = 0;
  #oldestSeq = 1;
  readonly #own: ByteArena;
  readonly #place: ArenaPlace = { chunk: 0, offset: 0, length: 0 };

  constructor(
    /** The session (sha256 of its token) whose stream this is: what `resume` names. */
    readonly sessionKey: string,
    readonly address: string,
    private readonly limits: RingLimits,
    /** Where rfq texts broadcast to every stream are put once (MakerStreams.share). */
    private readonly shared: ByteArena,
  ) {
    const capBytes = limits.maxMessages * OWN_BYTES_PER_MESSAGE;
    // Chunks of a 16th of the cap (1-16 KiB): the cap is kept to within a 16th, and a stream that holds
    // little costs little.
    this.#own = new ByteArena(capBytes, Math.min(16 * 1024, Math.max(1024, capBytes / 16)));
  }

  /** Seq of the oldest frame still held; nextSeq when none is. */
  get oldestHeldSeq(): number {
    return this.#oldestSeq;
  }

  /** Frames held. */
  get size(): number {
    return this.#count;
  }

  /** The seq of the frame appended last (0 before the first). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /**
   * Numbers `body` (its seq: lastSeq) and keeps it for replay; returns where its bytes are, for the socket
   * writer. `deadlineMs`: see NEVER_REPLAY.
   */
  appendOwn(body: string, nowMs: number, deadlineMs: number): ArenaBytes {
    const firstChunk = this.#own.firstChunk;
    const written = bytesAt(this.#own.put(body, this.#place), this.#place);
    // The arena dropped its oldest chunk to stay under its cap: the frames written there go too.
    if (this.#own.firstChunk !== firstChunk) this.#dropFramesOutsideOwnArena();
    this.#push(nowMs, deadlineMs, 0);
    return written;
  }

  /** As appendOwn, returning the frame as text (a resume's replay, dispatch.ts: rare). */
  append(body: string, nowMs: number, deadlineMs: number): string {
    this.appendOwn(body, nowMs, deadlineMs);
    return stamp(this.lastSeq, body);
  }

  /** Numbers a body already put in the shared arena at `place` (the same rfq to every stream); returns its seq. */
  appendShared(place: ArenaPlace, nowMs: number, deadlineMs: number): number {
    this.#place.chunk = place.chunk;
    this.#place.offset = place.offset;
    this.#place.length = place.length;
    return this.#push(nowMs, deadlineMs, 1);
  }

  /** Drops frames older than replayMs (amortized O(1) per append). */
  prune(nowMs: number): void {
    const oldestKeptMs = nowMs - this.limits.replayMs;
    while (this.#count > 0 && this.#atMs[this.#head]! < oldestKeptMs) this.#dropOldest();
    if (this.#count === 0) this.#oldestSeq = this.nextSeq;
  }

  /**
   * The bodies held after `lastSeq`, oldest first, less those not worth replaying at `nowMs` (NEVER_REPLAY,
   * and rfqs whose quote deadline has passed). The caller has checked that the stream holds lastSeq + 1.
   * `deadlinesMs`, when given, gets each returned body's replay deadline, in the same order: a replayed frame
   * is held again under its own (a later resume must not replay an rfq past its quote deadline).
   */
  heldAfter(lastSeq: number, nowMs: number, deadlinesMs?: number[]): string[] {
    const out: string[] = [];
    for (let i = Math.max(0, lastSeq + 1 - this.#oldestSeq); i < this.#count; i++) {
      const slot = (this.#head + i) % this.#capacity;
      const deadlineMs = this.#deadlineMs[slot]!;
      if (deadlineMs === NEVER_REPLAY || (deadlineMs !== ALWAYS_REPLAY && deadlineMs <= nowMs)) continue;
      const arena = this.#isShared[slot] === 1 ? this.shared : this.#own;
      const body = arena.read(this.#chunk[slot]!, this.#offset[slot]!, this.#length[slot]!);
      if (body === null) continue; // an rfq gone from the shared arena, long past its deadline
      out.push(body);
      deadlinesMs?.push(deadlineMs);
    }
    return out;
  }

  /** Holds the frame at this.#place; returns its seq. */
  #push(nowMs: number, deadlineMs: number, isShared: 0 | 1): number {
    this.prune(nowMs);
    const seq = this.nextSeq++;
    if (this.#count === this.limits.maxMessages) this.#dropOldest(); // full: the oldest makes room
    if (this.#count === this.#capacity) this.#grow();
    const slot = (this.#head + this.#count) % this.#capacity;
    this.#atMs[slot] = nowMs;
    this.#deadlineMs[slot] = deadlineMs;
    this.#chunk[slot] = this.#place.chunk;
    this.#offset[slot] = this.#place.offset;
    this.#length[slot] = this.#place.length;
    this.#isShared[slot] = isShared;
    this.#count++;
    return seq;
  }

  #dropOldest(): void {
    const wasOwn = this.#isShared[this.#head] === 0;
    this.#head = (this.#head + 1) % this.#capacity;
    this.#count--;
    this.#oldestSeq++;
    // Own text before the oldest own frame still held is never read again.
    if (wasOwn) this.#own.dropBefore(this.#count === 0 ? this.#own.nextChunk - 1 : this.#oldestOwnChunk());
  }

  /** The chunk of the oldest own frame held (the arena's newest chunk when there is none). */
  #oldestOwnChunk(): number {
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#head + i) % this.#capacity;
      if (this.#isShared[slot] === 0) return this.#chunk[slot]!;
    }
    return this.#own.nextChunk - 1;
  }

  /**
   * After a put: the own frames whose text the arena dropped to stay under its cap are no longer held, nor
   * (the ring being a contiguous range of seqs) any frame before them. Own chunks grow with seq, so those
   * frames are the first own ones.
   */
  #dropFramesOutsideOwnArena(): void {
    const firstHeld = this.#own.firstChunk;
    let through = -1;
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#head + i) % this.#capacity;
      if (this.#isShared[slot] === 1) continue;
      if (this.#chunk[slot]! >= firstHeld) break;
      through = i;
    }
    for (let i = 0; i <= through; i++) this.#dropOldest();
  }

  /** Doubles the typed arrays (up to maxMessages), the held frames moved to the front in seq order. */
  #grow(): void {
    const capacity = Math.min(this.limits.maxMessages, Math.max(FIRST_CAPACITY, this.#capacity * 2));
    const order = <T extends Float64Array | Int32Array | Uint8Array>(from: T, to: T): T => {
      for (let i = 0; i < this.#count; i++) to[i] = from[(this.#head + i) % this.#capacity]!;
      return to;
    };
    this.#atMs = order(this.#atMs, new Float64Array(capacity));
    this.#deadlineMs = order(this.#deadlineMs, new Float64Array(capacity));
    this.#chunk = order(this.#chunk, new Int32Array(capacity));
    this.#offset = order(this.#offset, new Int32Array(capacity));
    this.#length = order(this.#length, new Int32Array(capacity));
    this.#isShared = order(this.#isShared, new Uint8Array(capacity));
    this.#capacity = capacity;
    this.#head = 0;
  }
}
