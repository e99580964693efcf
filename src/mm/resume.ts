// Main thread. Every maker stream (stream.ts) the gateway holds, attached to a live connection or detached
// (its socket closed less than replayMs ago), found by connection id (makerId: where the RFQ shards send) and
// by session (what `resume` names); and the decision on a `resume`. Owned by the gateway; plain
// decisions, no socket I/O.
//
// A resume moves the old stream's held frames onto the new connection's stream (renumbered there, so each
// socket's stream stays gapless from 1) and retires the old stream. Frames the shards address later to the
// old connection (results of RFQs it had quoted) follow it: its makerId becomes an alias of the new stream.
//
// Bounds: detached streams <= maxDetached (the oldest is dropped first) and each is dropped replayMs after its
// socket closed; aliases per stream <= MAX_ALIASES (an alias older than that many reconnects has nothing
// left to deliver: its RFQs ended long ago).
import type { Connection, MakerId, StreamSlot } from './connection.js';
import { ByteArena, bytesAt, type ArenaBytes } from './byte-arena.js';
import { MakerStream, SHARED_ARENA_BYTES, type RingLimits } from './stream.js';

const MAX_ALIASES = 16;

export interface StreamLimits extends RingLimits {
  maxDetached: number;
}

export type ResumeFailureReason = 'UNKNOWN_SESSION' | 'SEQ_TOO_OLD' | 'SEQ_AHEAD';

/** `deadlinesMs[i]`: the replay deadline `bodies[i]` was held under (stream.ts heldAfter). */
export type ResumeDecision =
  { ok: true; bodies: string[]; deadlinesMs: number[] } | { ok: false; reason: ResumeFailureReason; oldestSeq: number | null };

export class MakerStreams {
  readonly #byMakerId = new Map<MakerId, StreamSlot>();
  readonly #bySession = new Map<string, StreamSlot>();
  /** Detached slots, oldest detach first (Map order). */
  readonly #detached = new Set<StreamSlot>();

  /** The text of frames every stream gets (rfqs), put once (stream.ts appendShared). */
  readonly #shared = new ByteArena(SHARED_ARENA_BYTES);

  constructor(private readonly limits: StreamLimits) {}

  /**
   * Puts a body every stream will get once; each stream's appendShared keeps only the place, and each socket
   * writes these same bytes behind its own seq (socket-writer.ts).
   */
  share(body: string): ArenaBytes {
    const place = { chunk: 0, offset: 0, length: 0 };
    return bytesAt(this.#shared.put(body, place), place);
  }

  /** A newly authenticated connection's stream, from seq 1. */
  open(conn: Connection, makerId: MakerId, sessionKey: string, address: string): StreamSlot {
    const slot: StreamSlot = {
      stream: new MakerStream(sessionKey, address, this.limits, this.#shared),
      conn,
      detachedAtMs: 0,
      makerIds: [makerId],
    };
    this.#byMakerId.set(makerId, slot);
    this.#bySession.set(sessionKey, slot);
    return slot;
  }

  /** The stream frames for `makerId` go to (its own, or the one that resumed it), if still held. */
  of(makerId: MakerId): StreamSlot | undefined {
    return this.#byMakerId.get(makerId);
  }

  /** The live connection of a session's stream, if one is attached (a half-open socket the maker gave up). */
  attachedConnOf(sessionKey: string): Connection | null {
    return this.#bySession.get(sessionKey)?.conn ?? null;
  }

  /** The connection closed: its stream is kept for replayMs so it can be resumed. */
  detach(slot: StreamSlot, nowMs: number): void {
    slot.conn = null;
    slot.detachedAtMs = nowMs;
    this.#detached.add(slot);
    if (this.#detached.size > this.limits.maxDetached) this.#drop(this.#detached.values().next().value!);
  }

  /** Drops detached streams past replayMs (called from the heartbeat's tick, heartbeat.ts). */
  sweep(nowMs: number): void {
    for (const slot of this.#detached) {
      if (slot.detachedAtMs + this.limits.replayMs >= nowMs) break; // oldest first: the rest are younger
      this.#drop(slot);
    }
  }

  /** Detached streams held (a gauge for tests and metrics). */
  get detachedCount(): number {
    return this.#detached.size;
  }

  /**
   * A `resume` on `into`'s connection naming `sessionKey` (the hash of the token it sent; the stream must be
   * of `into`'s address, else UNKNOWN_SESSION) and `lastSeq`. On success the old stream's frames worth replaying are returned, oldest first, and
   * the old stream is retired into `into`. A stream still attached must have been closed by the caller first.
   */
  resume(into: StreamSlot, sessionKey: string, lastSeq: number, nowMs: number): ResumeDecision {
    const old = this.#bySession.get(sessionKey);
    if (old === undefined || old === into || old.conn !== null || old.stream.address !== into.stream.address) {
      return { ok: false, reason: 'UNKNOWN_SESSION', oldestSeq: null };
    }
    if (old.detachedAtMs + this.limits.replayMs < nowMs) {
      this.#drop(old);
      return { ok: false, reason: 'UNKNOWN_SESSION', oldestSeq: null };
    }
    const stream = old.stream;
    stream.prune(nowMs);
    if (lastSeq >= stream.nextSeq) return { ok: false, reason: 'SEQ_AHEAD', oldestSeq: stream.oldestHeldSeq };
    if (lastSeq + 1 < stream.oldestHeldSeq) return { ok: false, reason: 'SEQ_TOO_OLD', oldestSeq: stream.oldestHeldSeq };
    const deadlinesMs: number[] = [];
    const bodies = stream.heldAfter(lastSeq, nowMs, deadlinesMs);
    this.#detached.delete(old);
    this.#bySession.delete(sessionKey);
    for (const makerId of old.makerIds) {
      this.#byMakerId.set(makerId, into);
      into.makerIds.push(makerId);
    }
    while (into.makerIds.length > MAX_ALIASES + 1) this.#byMakerId.delete(into.makerIds.splice(1, 1)[0]!);
    return { ok: true, bodies, deadlinesMs };
  }

  #drop(slot: StreamSlot): void {
    this.#detached.delete(slot);
    if (this.#bySession.get(slot.stream.sessionKey) === slot) this.#bySession.delete(slot.stream.sessionKey);
    for (const makerId of slot.makerIds) if (this.#byMakerId.get(makerId) === slot) this.#byMakerId.delete(makerId);
  }
}
