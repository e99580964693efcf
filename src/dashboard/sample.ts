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
