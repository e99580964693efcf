// Load generator, main thread. Closed loop, for maximum-throughput figures only (ceiling, get, shards):
// `concurrency` callers each send their next request as soon as the previous one answered, for a fixed
// time, and the figure is completed requests per second. Closed loop hides queueing (a slow answer delays
// the next send), so its latencies are reported but never used as a latency target: those come from the
// open loop (open-loop.ts).
import { startCpuMeter, type CpuShare } from './cpu.js';
import { LatencyHistogram, round1, type LatencySummary } from './histogram.js';

export interface ClosedLoopOptions {
  concurrency: number;
  durationMs: number;
  /** Unmeasured run first, same shape: JIT, connection set-up, caches. */
  warmupMs: number;
  /** Sends request number `i`; resolves true when the answer is the expected one. */
  request(i: number): Promise<boolean>;
  /** Ends the run early, checked with the next request's number before each send: a fixed amount of work. */
  stopWhen?: (nextIndex: number) => boolean;
  /** The server's pid: its CPU use over the measured run is reported with the client's. */
  serverPid?: number;
}

export interface ClosedLoopResult {
  concurrency: number;
  seconds: number;
  completed: number;
  errors: number;
  reqPerS: number;
  latency: LatencySummary;
  /** CPU of server and client over the measured run, and server CPU µs per completed request. */
  cpu: (CpuShare & { serverUsPerReq: number }) | null;
}

export async function runClosedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  // One request counter across warm-up and measurement: request i is never sent twice (an RFQ body sent
  // twice would be an idempotent replay, not a new RFQ).
  const counter = { next: 0 };
  if (options.warmupMs > 0) await loop(options, options.warmupMs, null, counter);
  const histogram = new LatencyHistogram();
  const meter = options.serverPid === undefined ? null : startCpuMeter(options.serverPid);
  const result = await loop(options, options.durationMs, histogram, counter);
  if (meter !== null) {
    const share = meter();
    const serverUsPerReq =
      result.completed === 0 ? 0 : Math.round((((share.serverPercent / 100) * result.seconds * 1e6) / result.completed) * 10) / 10;
    result.cpu = { ...share, serverUsPerReq };
  }
  return result;
}

async function loop(
  options: ClosedLoopOptions,
  durationMs: number,
  histogram: LatencyHistogram | null,
  counter: { next: number },
): Promise<ClosedLoopResult> {
  let completed = 0;
  let errors = 0;
  const startMs = performance.now();
  const endMs = startMs + durationMs;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < endMs && options.stopWhen?.(counter.next) !== true) {
        const sentMs = performance.now();
        const isOk = await options.request(counter.next++).catch(() => false);
        histogram?.recordMs(performance.now() - sentMs);
        if (isOk) completed++;
        else errors++;
      }
    }),
  );
  const seconds = (performance.now() - startMs) / 1000;
  return {
    concurrency: options.concurrency,
    seconds: round1(seconds),
    completed,
    errors,
    reqPerS: Math.round(completed / seconds),
    latency: (histogram ?? new LatencyHistogram()).summary(),
    cpu: null,
  };
}
