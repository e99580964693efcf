// Main thread, for the maker gateway's dispatch (dispatch.ts). The inbound frame rate of one maker socket: a
// token bucket per connection, so one socket cannot make the main thread parse and validate
// frames without bound. The defaults are far above what a quoting bot sends (one quote per RFQ at the
// service's 2,000 RFQs/s target is 2,000 frames/s): only a flood meets them, and it is closed 1008
// RATE_LIMITED rather than slowed (a maker's frames are not queued here, so there is nothing to slow).
//
// Cost per frame: a subtraction, a multiply-add, a comparison and two field writes on the connection; no
// allocation.

/** The bucket's state, kept on the connection (connection.ts). */
export interface FrameBucket {
  frameTokens: number;
  frameTokensAtMs: number;
}

export interface FrameRate {
  /** Tokens added per ms (PARLAYD_MM_FRAMES_PER_S / 1000). */
  perMs: number;
  /** The bucket's size (PARLAYD_MM_FRAME_BURST): frames a socket may send at once after a pause. */
  burst: number;
}

/** A full bucket at `nowMs`: a socket starts with its whole burst. */
export function fillBucket(bucket: FrameBucket, rate: FrameRate, nowMs: number): void {
  bucket.frameTokens = rate.burst;
  bucket.frameTokensAtMs = nowMs;
}

/** Takes one frame's token; false when the socket is over its rate (the bucket is left as it is then). */
export function takeFrameToken(bucket: FrameBucket, rate: FrameRate, nowMs: number): boolean {
  const tokens = Math.min(rate.burst, bucket.frameTokens + (nowMs - bucket.frameTokensAtMs) * rate.perMs);
  bucket.frameTokensAtMs = nowMs;
  if (tokens < 1) {
    bucket.frameTokens = tokens;
    return false;
  }
  bucket.frameTokens = tokens - 1;
  return true;
}
