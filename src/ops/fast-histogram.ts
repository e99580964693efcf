// Any thread that serves a registry (the main thread). A Prometheus histogram for the hot paths. prom-client's
// own observe validates and hashes the label object on every call (~1 µs, 2-3 % of a GET's CPU in the
// profile, docs/performance.md); here a caller holds a `Series` per label set and an observe is a bucket
// search and three additions. The registry reads the series at scrape time through `get()`, in the same
// shape prom-client's Histogram gives it, so `/metrics` prints the same lines.
import type { Registry } from 'prom-client';

export interface Series {
  observe(seconds: number): void;
}

interface SeriesData extends Series {
  labels: Record<string, string>;
  /** counts[i] = observations in (bounds[i-1], bounds[i]]; the last slot is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/** Bound on label sets of one histogram: label values can come from clients (methods on unmatched paths). */
const MAX_SERIES = 1024;

export class FastHistogram<L extends string = never> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #series = new Map<string, SeriesData>();
  readonly #overflow: SeriesData;
  #unlabelled: Series | null = null;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    this.#overflow = this.#newSeries(Object.fromEntries(labelNames.map((n) => [n, 'other'])));
    registry.registerMetric(this as never);
  }

  /** The series of one label set; hold it and observe on it. Past MAX_SERIES label sets, one shared series. */
  series(labels: Record<L, string>): Series {
    const key = this.labelNames.map((n) => labels[n]).join('\u0000');
    let series = this.#series.get(key);
    if (series === undefined) {
      if (this.#series.size >= MAX_SERIES) return this.#overflow;
      series = this.#newSeries({ ...labels });
      this.#series.set(key, series);
    }
    return series;
  }

  /** Observes on the series of a histogram without labels. */
  observe(seconds: number): void {
    (this.#unlabelled ??= this.series({} as Record<L, string>)).observe(seconds);
  }

  /** prom-client's Registry calls this at scrape time; `le` first, then the series' labels, as its Histogram. */
  get() {
    type Value = { labels: Record<string, string | number>; sharedLabels: Record<string, string>; value: number; metricName: string };
    const values: Value[] = [];
    const all = [...this.#series.values()];
    if (this.#overflow.count > 0) all.push(this.#overflow);
    const bucketName = `${this.name}_bucket`;
    for (const series of all) {
      const sharedLabels = series.labels;
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += series.counts[i]!;
        values.push({ labels: { le }, sharedLabels, value: cumulative, metricName: bucketName });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels, value: series.count, metricName: bucketName });
      values.push({ labels: {}, sharedLabels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  #newSeries(labels: Record<string, string>): SeriesData {
    const bounds = this.bounds;
    const data: SeriesData = {
      labels,
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      count: 0,
      observe(seconds: number) {
        let i = 0;
        while (i < bounds.length && seconds > bounds[i]!) i++;
        data.counts[i]! += 1;
        data.sum += seconds;
        data.count += 1;
      },
    };
    return data;
  }
}
