// Load generator, any thread. A latency recorder over hdr-histogram-js: values are recorded in
// microseconds (integers, 1 µs .. 60 s, 3 significant digits) and read back in milliseconds. HDR keeps
// every value's bucket rather than a sample, so p99.9 and max are exact to 0.1 % however many are recorded.
import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  meanMs: number;
}

const LOWEST_US = 1;
const HIGHEST_US = 60_000_000;

export class LatencyHistogram {
  readonly #histogram = hdr.build({
    lowestDiscernibleValue: LOWEST_US,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    // The pure-JS backend: the WebAssembly one needs an async init and buys nothing at these rates.
    useWebAssembly: false,
  });

  /** Records one latency given in milliseconds (clamped into the trackable range). */
  recordMs(latencyMs: number): void {
    const us = Math.round(latencyMs * 1000);
    this.#histogram.recordValue(Math.min(HIGHEST_US, Math.max(LOWEST_US, us)));
  }

  get count(): number {
    return this.#histogram.totalCount;
  }

  summary(): LatencySummary {
    const h = this.#histogram;
    const ms = (us: number) => round3(us / 1000);
    return {
      count: h.totalCount,
      p50Ms: ms(h.getValueAtPercentile(50)),
      p90Ms: ms(h.getValueAtPercentile(90)),
      p99Ms: ms(h.getValueAtPercentile(99)),
      p999Ms: ms(h.getValueAtPercentile(99.9)),
      maxMs: ms(h.maxValue),
      meanMs: ms(h.mean),
    };
  }
}

export const round3 = (x: number) => Math.round(x * 1000) / 1000;
export const round1 = (x: number) => Math.round(x * 10) / 10;
