// Main thread. Token buckets per caller (contract section 2: 429 RATE_LIMITED with Retry-After): a user or
// maker session by its principal, anything unauthenticated by its IP. The admin is never limited. The map is
// bounded: past `maxKeys` the least recently seen caller is forgotten (and starts again with a full bucket).

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

  constructor(private readonly options: RateLimitOptions) {
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  get isEnabled(): boolean {
    return this.options.perSecond > 0;
  }

  /** 0 when the request may go ahead; otherwise the seconds to wait (for Retry-After). */
  take(key: string, nowMs: number): number {
    if (!this.isEnabled) return 0;
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
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.options.perSecond));
  }
}
