// The micro benches' one table shape: a tinybench run as rows of ops/s and latency percentiles (µs).
import type { Bench } from 'tinybench';

export interface Row {
  stage: string;
  opsPerS: number;
  p50Us: number;
  p99Us: number;
  samples: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** One row per task of a finished run, in the order the tasks were added. */
export function benchRows(bench: Bench): Row[] {
  return bench.tasks.map((task) => {
    const r = task.result!;
    return {
      stage: task.name,
      opsPerS: Math.round(r.throughput.mean),
      p50Us: round2((r.latency.p50 ?? NaN) * 1000),
      p99Us: round2((r.latency.p99 ?? NaN) * 1000),
      samples: r.latency.samples.length,
    };
  });
}
