// Main thread. One reading of the figures the dashboard shows, taken from the service's prom-client registry:
// the very series /metrics renders (one source, no second set of counters). Only the metrics named
// here are collected, not the whole registry (the process and GC series cost more than all of these).
import type { Registry } from 'prom-client';

/** A series as prom-client reports it: the labels and value of one line of /metrics. */
export interface SeriesValue {
  /** The line's name: a histogram's `_bucket`, `_sum` and `_count` lines share one metric. */
  name: string;
  labels: Readonly<Partial<Record<string, string | number>>>;
  value: number;
}

/** The metrics read, by name; a metric not registered (yet) is absent, which the frame shows as "—". */
export type Sample = { atMs: number; metrics: ReadonlyMap<string, readonly SeriesValue[]> };

export const SAMPLED_METRICS = [
  'parlayd_rfq_created_total',
  'parlayd_rfq_terminal_total',
  'parlayd_rfq_end_to_end_seconds',
  'parlayd_rfq_quotes_per_rfq',
  'parlayd_rfq_active',
  'parlayd_rfq_shard_calls_outstanding',
  'parlayd_verify_pool_utilization',
  'parlayd_verify_pool_queue',
  'parlayd_mm_makers_connected',
  'parlayd_mm_maker_connections',
  'parlayd_mm_quotes_total',
  'parlayd_mm_fills_total',
  'parlayd_mm_last_look_total',
  'parlayd_markets_due',
  'parlayd_contest_entries',
  'parlayd_contest_pot_micros',
  // Money figures registered by the ledger's owners; shown when present. Each in two exact parts
  // (ledger/check-runner.ts MoneyGauge), the whole USDC first: its collect() reads both.
  'parlayd_maker_locked_usdc',
  'parlayd_maker_locked_fraction_micros',
  'parlayd_open_interest_usdc',
  'parlayd_open_interest_fraction_micros',
  'parlayd_ledger_check_ok',
  'parlayd_ledger_check_at_ms',
] as const;

export type SampledMetric = (typeof SAMPLED_METRICS)[number];

/** Reads every sampled metric that is registered; their collect() hooks run as for a scrape. */
export async function takeSample(registry: Registry, atMs: number): Promise<Sample> {
  const metrics = new Map<string, SeriesValue[]>();
  for (const name of SAMPLED_METRICS) {
    const metric = registry.getSingleMetric(name);
    if (metric === undefined) continue;
    const read = await metric.get();
    metrics.set(
      name,
      read.values.map((v) => ({
        name: 'metricName' in v && typeof v.metricName === 'string' ? v.metricName : name,
        labels: v.labels,
        value: v.value,
      })),
    );
  }
  return { atMs, metrics };
}

/** Each process's reading at one tick, by the process's name (one process: one reading, named ''). */
export type ProcessSamples = ReadonlyMap<string, Sample>;

/** Where the feed's readings come from: this process's registry, or every front process of a cluster. */
export interface SampleSource {
  take(atMs: number): Promise<ProcessSamples>;
  close(): void;
}

/** A source of readings made from this process's registry. */
export type SamplesOf = (registry: Registry) => SampleSource;

/** The source of one process: its own registry. */
export function localSamples(registry: Registry): SampleSource {
  return { take: async (atMs) => new Map([['', await takeSample(registry, atMs)]]), close: () => undefined };
}

/**
 * How the lines of several processes with the same name and labels become one: counted things (counters,
 * histogram buckets, RFQs active, makers connected, calls outstanding, money) add up; the verify pools'
 * utilization is their mean; the ledger check is the worst any process reports, as of the latest.
 */
const COMBINED_OTHERWISE: Partial<Record<SampledMetric, (values: number[]) => number>> = {
  parlayd_verify_pool_utilization: (values) => values.reduce((a, b) => a + b, 0) / values.length,
  parlayd_ledger_check_ok: (values) => Math.min(...values),
  parlayd_ledger_check_at_ms: (values) => Math.max(...values),
};

/** The readings of several processes as one, at `atMs` (a cluster's figures: dashboard/feed.ts). */
export function mergeSamples(samples: readonly Sample[], atMs: number): Sample {
  if (samples.length === 1) return { atMs, metrics: samples[0]!.metrics };
  const metrics = new Map<string, SeriesValue[]>();
  for (const name of SAMPLED_METRICS) {
    const lines = new Map<string, { line: SeriesValue; values: number[] }>();
    for (const sample of samples) {
      for (const line of sample.metrics.get(name) ?? []) {
        const key = `${line.name}${JSON.stringify(Object.entries(line.labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
        const entry = lines.get(key);
        if (entry === undefined) lines.set(key, { line, values: [line.value] });
        else entry.values.push(line.value);
      }
    }
    if (lines.size === 0 && !samples.some((sample) => sample.metrics.has(name))) continue;
    const combine = COMBINED_OTHERWISE[name] ?? ((values: number[]) => values.reduce((a, b) => a + b, 0));
    metrics.set(
      name,
      [...lines.values()].map(({ line, values }) => ({ ...line, value: combine(values) })),
    );
  }
  return { atMs, metrics };
}
