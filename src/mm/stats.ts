// Main thread. What each maker did, as the service saw it (GET /v1/mm/stats): per address, one
// bucket of counts and a latency histogram per minute, for the last RETAINED_MINUTES minutes. The desk
// (desk.ts) counts; the route reads a sum of buckets since `since_ms`.
//
// Bounds: per maker RETAINED_MINUTES buckets of LATENCY_BINS + 7 numbers (~16 KiB), made only for minutes
// with activity; makers <= the registry's MAX_MAKERS. Latency percentiles are read from the histogram: each
// is the upper edge of its bin (bins grow by 25 %, so a figure is at most 25 % above the exact one).

export const RETAINED_MINUTES = 60;
const MINUTE_MS = 60_000;
const LATENCY_BINS = 64;
/** Upper edge of bin 0, ms; bin i ends at FIRST_EDGE_MS * GROWTH^i (63 bins reach ~1.3 million times it). */
const FIRST_EDGE_MS = 0.05;
const GROWTH = 1.25;
const LOG_GROWTH = Math.log(GROWTH);

class Bucket {
  rfqsReceived = 0;
  quotes = 0;
  declines = 0;
  fills = 0;
  lastLookOffered = 0;
  lastLookRejected = 0;
  filledWagerMicros = 0n;
  readonly latencyBins = new Uint32Array(LATENCY_BINS);
  constructor(readonly minute: number) {}
}

export type Counter = 'rfqsReceived' | 'quotes' | 'declines' | 'fills' | 'lastLookOffered' | 'lastLookRejected';

export interface MakerStatsView {
  since_ms: number;
  rfqs_received: number;
  quotes: number;
  declines: number;
  fills: number;
  /** fills / quotes; 0 without quotes. */
  hit_rate: number;
  last_look_offered: number;
  last_look_rejected: number;
  filled_wager_micros: string;
  quote_latency_ms: { p50: number | null; p90: number | null; p99: number | null };
}

export class MakerStats {
  /** Address -> its buckets, indexed by minute % RETAINED_MINUTES (a stale one is reused). */
  readonly #buckets = new Map<string, (Bucket | undefined)[]>();

  count(address: string, counter: Counter, nowMs: number): void {
    this.#bucket(address, nowMs)[counter]++;
  }

  fill(address: string, filledWagerMicros: bigint, nowMs: number): void {
    const bucket = this.#bucket(address, nowMs);
    bucket.fills++;
    bucket.filledWagerMicros += filledWagerMicros;
  }

  /** A quote read `latencyMs` after its rfq was written to the socket. */
  quoteLatency(address: string, latencyMs: number, nowMs: number): void {
    const bucket = this.#bucket(address, nowMs);
    bucket.quotes++;
    bucket.latencyBins[binOf(latencyMs)]!++;
  }

  /** A maker removed from the registry: its counts go (registered again, it starts afresh). */
  forget(address: string): void {
    this.#buckets.delete(address);
  }

  /** The sums since `sinceMs` (clamped to the retained hour), at `nowMs`. */
  view(address: string, sinceMs: number, nowMs: number): MakerStatsView {
    const oldestMinute = Math.floor(nowMs / MINUTE_MS) - RETAINED_MINUTES + 1;
    const fromMinute = Math.max(oldestMinute, Math.floor(sinceMs / MINUTE_MS));
    const sum = new Bucket(0);
    for (const bucket of this.#buckets.get(address) ?? []) {
      if (bucket === undefined || bucket.minute < fromMinute || bucket.minute < oldestMinute) continue;
      sum.rfqsReceived += bucket.rfqsReceived;
      sum.quotes += bucket.quotes;
      sum.declines += bucket.declines;
      sum.fills += bucket.fills;
      sum.lastLookOffered += bucket.lastLookOffered;
      sum.lastLookRejected += bucket.lastLookRejected;
      sum.filledWagerMicros += bucket.filledWagerMicros;
      for (let i = 0; i < LATENCY_BINS; i++) sum.latencyBins[i]! += bucket.latencyBins[i]!;
    }
    return {
      since_ms: Math.max(sinceMs, fromMinute * MINUTE_MS),
      rfqs_received: sum.rfqsReceived,
      quotes: sum.quotes,
      declines: sum.declines,
      fills: sum.fills,
      hit_rate: sum.quotes === 0 ? 0 : sum.fills / sum.quotes,
      last_look_offered: sum.lastLookOffered,
      last_look_rejected: sum.lastLookRejected,
      filled_wager_micros: sum.filledWagerMicros.toString(),
      quote_latency_ms: {
        p50: percentile(sum.latencyBins, 0.5),
        p90: percentile(sum.latencyBins, 0.9),
        p99: percentile(sum.latencyBins, 0.99),
      },
    };
  }

  #bucket(address: string, nowMs: number): Bucket {
    const minute = Math.floor(nowMs / MINUTE_MS);
    let buckets = this.#buckets.get(address);
    if (buckets === undefined) this.#buckets.set(address, (buckets = new Array<Bucket | undefined>(RETAINED_MINUTES)));
    const slot = minute % RETAINED_MINUTES;
    let bucket = buckets[slot];
    if (bucket === undefined || bucket.minute !== minute) buckets[slot] = bucket = new Bucket(minute);
    return bucket;
  }
}

/** Pure. The bin of a latency: bin 0 up to FIRST_EDGE_MS, then one bin per 25 % growth, the last unbounded. */
export function binOf(latencyMs: number): number {
  if (!(latencyMs > FIRST_EDGE_MS)) return 0;
  return Math.min(LATENCY_BINS - 1, Math.ceil(Math.log(latencyMs / FIRST_EDGE_MS) / LOG_GROWTH));
}

/** Pure. The upper edge (ms, 3 decimals) of the bin holding the q-quantile; null without observations. */
export function percentile(bins: Uint32Array, q: number): number | null {
  let total = 0;
  for (const n of bins) total += n;
  if (total === 0) return null;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < bins.length; i++) {
    seen += bins[i]!;
    if (seen >= rank) return Math.round(FIRST_EDGE_MS * GROWTH ** i * 1000) / 1000;
  }
  return null;
}
