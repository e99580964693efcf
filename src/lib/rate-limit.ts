// Main thread. Token buckets per caller (contract section 2: 429 RATE_LIMITED with Retry-After): a user or
// maker session by its principal, anything unauthenticated (including a request whose bearer is refused,
// server.ts) by its IP. The admin is never limited. The map is bounded: past `maxKeys` the least recently
// seen caller is forgotten (and starts again with a full bucket).
//
// Lockouts: an IP whose bucket is found empty by a refused bearer is locked out until the bucket holds a
// token again, and every bearer it sends meanwhile is refused before it is looked at. Without that a
// guesser past its limit would still be told a right guess (2xx) from a wrong one (429).

/** The bucket key of an anonymous caller (HTTP without a session, a maker socket's upgrade): its network. */
export const anonymousKey = (callerNetworkText: string) => `ip:${callerNetworkText}`;

interface Bucket {
  tokens: number;
  updatedAtMs: number;
}

export interface RateLimitOptions {
  /** Sustained requests per second per caller; 0 turns limiting off. */
  perSecond: number;
  /** Requests a caller may make at once after being idle. */
  burst: number;
  maxKeys?: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxKeys: number;
  /** Locked-out keys -> when the lockout ends (ms); at most maxKeys, oldest dropped first. */
  private readonly lockedUntilMs = new Map<string, number>();
  /** The latest end of any lockout: past it every entry is stale and the map is cleared at once. */
  private lastLockoutEndMs = 0;

  constructor(private readonly options: RateLimitOptions) {
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  get isEnabled(): boolean {
    return this.options.perSecond > 0;
  }

  /**
   * The RateLimit-* header values of `key`'s bucket at `nowMs`, without spending: the bucket size,
   * whole requests left, and seconds until it is full again. Refills the bucket as take would.
   */
  headerValues(key: string, nowMs: number): { limit: number; remaining: number; resetS: number } {
    const bucket = this.refill(key, nowMs);
    const resetS = Math.ceil((this.options.burst - bucket.tokens) / this.options.perSecond);
    return { limit: this.options.burst, remaining: Math.floor(bucket.tokens), resetS };
  }

  /**
   * 0 when the request may go ahead; otherwise the seconds to wait (for Retry-After). `tokens`: what it costs
   * (a request that carries many units of work, e.g. price reports, pays per unit); a cost above the bucket's
   * size takes a full bucket, so it is slow, never impossible.
   */
  take(key: string, nowMs: number, tokens = 1): number {
    if (!this.isEnabled) return 0;
    const bucket = this.refill(key, nowMs);
    const cost = Math.min(tokens, this.options.burst);
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return 0;
    }
    return this.secondsToToken(bucket, cost);
  }

  /** As take, for a request whose bearer was refused; an empty bucket also locks `key` out (see lockoutOf). */
  takeRefused(key: string, nowMs: number): number {
    const retryAfterS = this.take(key, nowMs);
    if (retryAfterS === 0) return 0;
    const bucket = this.buckets.get(key)!;
    const untilMs = nowMs + ((1 - bucket.tokens) / this.options.perSecond) * 1000;
    this.lockedUntilMs.delete(key); // re-insert below: Map order is then oldest lockout first
    if (this.lockedUntilMs.size >= this.maxKeys) this.lockedUntilMs.delete(this.lockedUntilMs.keys().next().value!);
    this.lockedUntilMs.set(key, untilMs);
    this.lastLockoutEndMs = Math.max(this.lastLockoutEndMs, untilMs);
    return retryAfterS;
  }

  /**
   * Whether any key may be locked out. The caller checks this before computing a key, so while no one is
   * locked out (the normal case) a request pays for this getter only.
   */
  hasLockouts(nowMs: number): boolean {
    if (this.lockedUntilMs.size === 0) return false;
    if (nowMs < this.lastLockoutEndMs) return true;
    this.lockedUntilMs.clear();
    return false;
  }

  /** 0 when `key` is not locked out; otherwise the seconds until it is no longer (for Retry-After). */
  lockoutOf(key: string, nowMs: number): number {
    const untilMs = this.lockedUntilMs.get(key);
    if (untilMs === undefined) return 0;
    if (untilMs <= nowMs) {
      this.lockedUntilMs.delete(key);
      return 0;
    }
    return Math.max(1, Math.ceil((untilMs - nowMs) / 1000));
  }

  /** The bucket of `key`, refilled up to `nowMs` and moved to the most recently seen end of the map. */
  private refill(key: string, nowMs: number): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: this.options.burst, updatedAtMs: nowMs };
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    } else {
      this.buckets.delete(key); // re-insert below: Map order is then least recently seen first
      const refill = ((nowMs - bucket.updatedAtMs) / 1000) * this.options.perSecond;
      bucket.tokens = Math.min(this.options.burst, bucket.tokens + refill);
      bucket.updatedAtMs = nowMs;
    }
    this.buckets.set(key, bucket);
    return bucket;
  }

  private secondsToToken(bucket: Bucket, cost = 1): number {
    return Math.max(1, Math.ceil((cost - bucket.tokens) / this.options.perSecond));
  }
}
