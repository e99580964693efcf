// Pure. Turns two readings of the registry (sample.ts) into one dashboard frame: rates are differences of
// counters over the interval, percentiles come from the interval's histogram buckets (as Prometheus's
// histogram_quantile does: linear within a bucket), gauges are read as they are. A frame is self-contained
// JSON, so a page that missed some still draws the next one.
import type { Sample, SampledMetric, SeriesValue } from './sample.js';

/** Makers listed in a frame, most connected and busiest first: a page is not a full maker report. */
export const MAX_MAKERS_IN_FRAME = 50;
export const RFQ_STATUSES = ['completed', 'failed', 'timeout', 'cancelled'] as const;

export interface MakerRow {
  maker: string;
  name: string | null;
  connections: number;
  quotesPerS: number;
  quotes: number;
  fills: number;
  /** fills / quotes since the service started; null before the first quote. */
  hitRate: number | null;
  lastLookAccepted: number;
  lastLookRejected: number;
}

export interface Frame {
  atMs: number;
  intervalMs: number;
  /** The processes whose figures the frame adds up: 1 for one process, a cluster's front processes else. */
  processes: number;
  /** Per second over the interval: accepted RFQs, and ended ones by terminal status. */
  rfqPerS: { created: number } & Record<(typeof RFQ_STATUSES)[number], number>;
  rfqTotals: { created: number; ended: number };
  /** Create to durable terminal result, ms, over the interval; null when none ended in it. */
  latencyMs: { p50: number | null; p99: number | null };
  /** Mean quotes an RFQ ended with over the interval; null when none ended. */
  quotesPerRfq: number | null;
  activeRfqs: number | null;
  makersConnected: number | null;
  makers: MakerRow[];
  shardQueueDepths: number[];
  verifyPool: { utilization: number | null; queue: number | null };
  marketsDue: number | null;
  /** A contest's pot is a number: rules.ts bounds it to 2^53 − 1 micros at creation, so it is exact. */
  contests: Array<{ contestId: string; title: string; entries: number; potMicros: number }>;
  /**
   * The money gauges (makers' locked collateral, open interest, the last ledger check); null while the service
   * does not register them. Decimal strings of micros, exact at any size (a number is exact only to 2^53
   * micros, ~9 billion USDC): joined from their two gauges.
   */
  money: {
    lockedCollateralMicros: string | null;
    openInterestMicros: string | null;
    ledgerCheckOk: boolean | null;
    ledgerCheckAtMs: number | null;
  };
}

type Series = readonly SeriesValue[] | undefined;
const seriesOf = (sample: Sample, name: SampledMetric): Series => sample.metrics.get(name);

/** Sum of the lines of `series` whose labels match `where` (all lines when empty); null when not registered. */
export function sumOf(series: Series, where: Record<string, string> = {}, lineName?: string): number | null {
  if (series === undefined) return null;
  let sum = 0;
  for (const line of series) {
    if (lineName !== undefined && line.name !== lineName) continue;
    if (Object.entries(where).every(([k, v]) => String(line.labels[k]) === v)) sum += line.value;
  }
  return sum;
}

/** A counter's increase over the interval; a counter that went down (a restart) counts from zero. */
function increase(prev: Series, curr: Series, where: Record<string, string> = {}, lineName?: string): number {
  const now = sumOf(curr, where, lineName) ?? 0;
  const before = sumOf(prev, where, lineName) ?? 0;
  return now >= before ? now - before : now;
}

/** Upper bound (`le`) and cumulative count of each bucket of a histogram, ascending. */
export function bucketsOf(series: Series, histogramName: string): Array<{ le: number; count: number }> {
  if (series === undefined) return [];
  return series
    .filter((line) => line.name === `${histogramName}_bucket`)
    .map((line) => ({ le: line.labels['le'] === '+Inf' ? Infinity : Number(line.labels['le']), count: line.value }))
    .sort((a, b) => a.le - b.le);
}

/**
 * The q-quantile of the observations between two readings of a histogram's buckets (both cumulative, same
 * bounds), interpolated linearly inside its bucket; in the +Inf bucket, the highest finite bound. null when
 * nothing was observed in between.
 */
export function quantileBetween(
  prev: ReadonlyArray<{ le: number; count: number }>,
  curr: ReadonlyArray<{ le: number; count: number }>,
  q: number,
): number | null {
  const before = new Map(prev.map((b) => [b.le, b.count]));
  const deltas = curr.map((b) => ({ le: b.le, count: Math.max(0, b.count - (before.get(b.le) ?? 0)) }));
  const total = deltas.at(-1)?.count ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let lowerLe = 0;
  let lowerCount = 0;
  for (const bucket of deltas) {
    if (bucket.count >= rank) {
      if (bucket.le === Infinity) return lowerLe;
      const inBucket = bucket.count - lowerCount;
      return inBucket === 0 ? bucket.le : lowerLe + ((bucket.le - lowerLe) * (rank - lowerCount)) / inBucket;
    }
    lowerLe = bucket.le;
    lowerCount = bucket.count;
  }
  return lowerLe;
}

export function deriveFrame(prev: Sample, curr: Sample, processes = 1): Frame {
  const intervalMs = Math.max(1, curr.atMs - prev.atMs);
  const perS = (n: number) => (n * 1000) / intervalMs;
  const both = (name: SampledMetric) => [seriesOf(prev, name), seriesOf(curr, name)] as const;
  const [terminalBefore, terminalNow] = both('parlayd_rfq_terminal_total');
  const rfqPerS = { created: perS(increase(...both('parlayd_rfq_created_total'))) } as Frame['rfqPerS'];
  for (const status of RFQ_STATUSES) rfqPerS[status] = perS(increase(terminalBefore, terminalNow, { status }));
  const e2e = 'parlayd_rfq_end_to_end_seconds';
  const [e2eBefore, e2eNow] = both(e2e);
  const toMs = (s: number | null) => (s === null ? null : Math.round(s * 1000 * 10) / 10);
  const quotesName = 'parlayd_rfq_quotes_per_rfq';
  const [quotesBefore, quotesNow] = both(quotesName);
  const endedInInterval = increase(quotesBefore, quotesNow, {}, `${quotesName}_count`);
  const gauge = (name: SampledMetric) => sumOf(seriesOf(curr, name));
  // The check's gauges read 0 until a check has run (ledger/check-runner.ts): absent, not "failed at 0".
  const ledgerCheckAtMs = gauge('parlayd_ledger_check_at_ms');
  const hasChecked = ledgerCheckAtMs !== null && ledgerCheckAtMs > 0;
  const ledgerCheckOk = hasChecked ? gauge('parlayd_ledger_check_ok') : null;
  return {
    atMs: curr.atMs,
    intervalMs,
    processes,
    rfqPerS,
    rfqTotals: { created: sumOf(seriesOf(curr, 'parlayd_rfq_created_total')) ?? 0, ended: sumOf(terminalNow) ?? 0 },
    latencyMs: {
      p50: toMs(quantileBetween(bucketsOf(e2eBefore, e2e), bucketsOf(e2eNow, e2e), 0.5)),
      p99: toMs(quantileBetween(bucketsOf(e2eBefore, e2e), bucketsOf(e2eNow, e2e), 0.99)),
    },
    quotesPerRfq: endedInInterval === 0 ? null : increase(quotesBefore, quotesNow, {}, `${quotesName}_sum`) / endedInInterval,
    activeRfqs: gauge('parlayd_rfq_active'),
    makersConnected: gauge('parlayd_mm_makers_connected'),
    makers: makerRows(prev, curr, intervalMs),
    shardQueueDepths: byNumberLabel(seriesOf(curr, 'parlayd_rfq_shard_calls_outstanding'), 'shard'),
    verifyPool: { utilization: gauge('parlayd_verify_pool_utilization'), queue: gauge('parlayd_verify_pool_queue') },
    marketsDue: gauge('parlayd_markets_due'),
    contests: contestRows(curr),
    money: {
      lockedCollateralMicros: moneyOf(curr, 'parlayd_maker_locked_usdc', 'parlayd_maker_locked_fraction_micros'),
      openInterestMicros: hasChecked ? moneyOf(curr, 'parlayd_open_interest_usdc', 'parlayd_open_interest_fraction_micros') : null,
      ledgerCheckOk: ledgerCheckOk === null ? null : ledgerCheckOk === 1,
      ledgerCheckAtMs: hasChecked ? ledgerCheckAtMs : null,
    },
  };
}

/**
 * A money figure from its two gauges (whole USDC, micros under one USDC: ledger/check-runner.ts MoneyGauge) as
 * a decimal string of micros, joined in BigInt so that no double rounds it; null when either is missing or
 * not a whole number (NaN: past what the gauges hold exactly).
 */
export function moneyOf(sample: Sample, usdcName: SampledMetric, fractionName: SampledMetric): string | null {
  const usdc = seriesOf(sample, usdcName)?.[0]?.value;
  const fraction = seriesOf(sample, fractionName)?.[0]?.value;
  if (usdc === undefined || fraction === undefined || !Number.isSafeInteger(usdc) || !Number.isSafeInteger(fraction)) return null;
  return (BigInt(usdc) * 1_000_000n + BigInt(fraction)).toString();
}

/** Values of a gauge labelled by a small index (`shard`), as an array by that index. */
function byNumberLabel(series: Series, label: string): number[] {
  const values: number[] = [];
  for (const line of series ?? []) values[Number(line.labels[label])] = line.value;
  return Array.from(values, (v) => v ?? 0);
}

/** Sum of each series' lines by the value of `label` (and the other labels in `where`): one pass. */
function byLabel(series: Series, label: string, where: Record<string, string> = {}): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of series ?? []) {
    if (!Object.entries(where).every(([k, v]) => String(line.labels[k]) === v)) continue;
    const key = String(line.labels[label]);
    sums.set(key, (sums.get(key) ?? 0) + line.value);
  }
  return sums;
}

/** One pass over each maker series (indexed by address), so a frame costs linear time in the makers. */
function makerRows(prev: Sample, curr: Sample, intervalMs: number): MakerRow[] {
  const connectedLines = seriesOf(curr, 'parlayd_mm_maker_connections') ?? [];
  const names = new Map(connectedLines.map((line) => [String(line.labels['maker']), String(line.labels['name'])]));
  const connections = byLabel(connectedLines, 'maker');
  const quotes = byLabel(seriesOf(curr, 'parlayd_mm_quotes_total'), 'maker');
  const quotesBefore = byLabel(seriesOf(prev, 'parlayd_mm_quotes_total'), 'maker');
  const fills = byLabel(seriesOf(curr, 'parlayd_mm_fills_total'), 'maker');
  const accepted = byLabel(seriesOf(curr, 'parlayd_mm_last_look_total'), 'maker', { answer: 'accepted' });
  const rejected = byLabel(seriesOf(curr, 'parlayd_mm_last_look_total'), 'maker', { answer: 'rejected' });
  const rows: MakerRow[] = [];
  for (const maker of new Set([...connections.keys(), ...quotes.keys()])) {
    const quoteCount = quotes.get(maker) ?? 0;
    const before = quotesBefore.get(maker) ?? 0;
    const fillCount = fills.get(maker) ?? 0;
    rows.push({
      maker,
      name: names.get(maker) ?? null,
      connections: connections.get(maker) ?? 0,
      quotesPerS: ((quoteCount >= before ? quoteCount - before : quoteCount) * 1000) / intervalMs,
      quotes: quoteCount,
      fills: fillCount,
      hitRate: quoteCount === 0 ? null : fillCount / quoteCount,
      lastLookAccepted: accepted.get(maker) ?? 0,
      lastLookRejected: rejected.get(maker) ?? 0,
    });
  }
  rows.sort((a, b) => b.connections - a.connections || b.quotes - a.quotes || (a.maker < b.maker ? -1 : 1));
  return rows.slice(0, MAX_MAKERS_IN_FRAME);
}

/** At most MAX_CONTESTS_SHOWN (gauges.ts) lines each. */
function contestRows(curr: Sample): Frame['contests'] {
  const entries = byLabel(seriesOf(curr, 'parlayd_contest_entries'), 'contest');
  return (seriesOf(curr, 'parlayd_contest_pot_micros') ?? []).map((line) => {
    const contestId = String(line.labels['contest']);
    return { contestId, title: String(line.labels['title']), entries: entries.get(contestId) ?? 0, potMicros: line.value };
  });
}
