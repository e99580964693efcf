// Main thread. One maker stream (issue 22, docs/maker-protocol.md section 3.5): the sequence numbers of the
// server -> maker messages of one session, and the ring of the frames last written on it, so that a maker that
// lost its socket can have them replayed on a new one (resume.ts decides a resume; dispatch.ts writes the replay).
//
// Bounds: the ring holds at most `maxMessages` frames and none older than `replayMs` (both configured,
// PARLAYD_MM_REPLAY_MAX_MESSAGES and PARLAYD_MM_REPLAY_MS). It stores each frame's text without its seq
// (the serialized message less its leading `{`): for an rfq that text is one string shared by every
// maker's ring, so a ring costs a pointer and two numbers per frame, not a copy of the frame.
//
// Cost per frame: a string concatenation (the seq in front of the body) and three array writes; no JSON work.

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
  /** The seq the next frame gets; gapless from 1 (issue 22). */
  nextSeq = 1;
  // The ring, as parallel arrays grown up to maxMessages and then reused in place: entry i (0 = oldest held)
  // sits at (#head + i) % capacity and has seq #oldestSeq + i.
  readonly #bodies: (string | undefined)[] = [];
  readonly #atMs: number[] = [];
  readonly #deadlineMs: number[] = [];
  #head = 0;
  #count = 0;
  #oldestSeq = 1;

  constructor(
    /** The session (sha256 of its token) whose stream this is: what `resume` names. */
    readonly sessionKey: string,
    readonly address: string,
    private readonly limits: RingLimits,
  ) {}

  /** Seq of the oldest frame still held; nextSeq when none is. */
  get oldestHeldSeq(): number {
    return this.#oldestSeq;
  }

  /** Frames held. */
  get size(): number {
    return this.#count;
  }

  /** Numbers `body`, keeps it for replay and returns the frame to write. `deadlineMs`: see NEVER_REPLAY. */
  append(body: string, nowMs: number, deadlineMs: number): string {
    this.prune(nowMs);
    const seq = this.nextSeq++;
    const capacity = this.limits.maxMessages;
    if (this.#count === capacity) {
      // Full: the oldest frame makes room (its slot is the one written next).
      this.#head = (this.#head + 1) % capacity;
      this.#count--;
      this.#oldestSeq++;
    }
    const slot = (this.#head + this.#count) % capacity;
    if (slot === this.#bodies.length) {
      this.#bodies.push(body);
      this.#atMs.push(nowMs);
      this.#deadlineMs.push(deadlineMs);
    } else {
      this.#bodies[slot] = body;
      this.#atMs[slot] = nowMs;
      this.#deadlineMs[slot] = deadlineMs;
    }
    this.#count++;
    return stamp(seq, body);
  }

  /** Drops frames older than replayMs (amortized O(1) per append). */
  prune(nowMs: number): void {
    const capacity = this.limits.maxMessages;
    const oldestKeptMs = nowMs - this.limits.replayMs;
    while (this.#count > 0 && this.#atMs[this.#head]! < oldestKeptMs) {
      this.#bodies[this.#head] = undefined; // the string may be freed
      this.#head = (this.#head + 1) % capacity;
      this.#count--;
      this.#oldestSeq++;
    }
    if (this.#count === 0) this.#oldestSeq = this.nextSeq;
  }

  /**
   * The bodies held after `lastSeq`, oldest first, less those not worth replaying at `nowMs` (NEVER_REPLAY,
   * and rfqs whose quote deadline has passed). The caller has checked that the stream holds lastSeq + 1.
   */
  heldAfter(lastSeq: number, nowMs: number): string[] {
    const out: string[] = [];
    const capacity = this.limits.maxMessages;
    for (let i = Math.max(0, lastSeq + 1 - this.#oldestSeq); i < this.#count; i++) {
      const slot = (this.#head + i) % capacity;
      const deadlineMs = this.#deadlineMs[slot]!;
      if (deadlineMs === NEVER_REPLAY || (deadlineMs !== ALWAYS_REPLAY && deadlineMs <= nowMs)) continue;
      out.push(this.#bodies[slot]!);
    }
    return out;
  }
}
