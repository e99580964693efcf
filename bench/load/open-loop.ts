// Load generator, main thread. Open loop: request i is due at t0 + i / rate whatever happened to earlier
// requests, and its latency is measured from that due time, not from when it was actually sent. A server
// that stalls therefore shows the stall in every request that was due during it (no coordinated
// omission), and the generator's own lateness is counted against the figure, never hidden: it is also
// reported on its own (sendLag) so a reader can tell the two apart. Due times are kept by a pacer thread
// (pacer-worker.ts) with sub-millisecond sleeps, not by this thread's 1 ms timers.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { LatencyHistogram, round1, type LatencySummary } from './histogram.js';
import type { PacerStart } from './pacer-worker.js';

export interface OpenLoopOptions {
  ratePerS: number;
  durationMs: number;
  /** Past this many requests in flight the step stops sending: the server is saturated. */
  maxInFlight: number;
  /** Sends request number `i`; resolves true when the answer is the expected one. */
  request(i: number): Promise<boolean>;
}

export interface OpenLoopResult {
  offeredPerS: number;
  seconds: number;
  scheduled: number;
  sent: number;
  completed: number;
  errors: number;
  /** True when maxInFlight was reached and sending stopped early. */
  isSaturated: boolean;
  /** Completed requests per second over the step (from the first due time to the last answer). */
  throughputPerS: number;
  /** Due time -> answer received, ms (what the targets are about). */
  latency: LatencySummary;
  /** Due time -> actually handed to the client, ms: the generator's timer lateness. */
  sendLag: LatencySummary;
}

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const { ratePerS, durationMs, maxInFlight } = options;
  const scheduled = Math.max(1, Math.round((ratePerS * durationMs) / 1000));
  const intervalMs = 1000 / ratePerS;
  const latency = new LatencyHistogram();
  const sendLag = new LatencyHistogram();
  let sent = 0;
  let completed = 0;
  let errors = 0;
  let inFlight = 0;
  let isSaturated = false;
  let lastAnswerMs = 0;
  const pacer = new Worker(new URL('./pacer-worker.js', import.meta.url));
  await once(pacer, 'online');
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const t0 = performance.now() + 2;

  return new Promise((resolve) => {
    const stopPacer = () => {
      Atomics.store(stop, 0, 1);
      Atomics.notify(stop, 0);
    };
    const finishIfDone = () => {
      if (inFlight > 0 || (sent < scheduled && !isSaturated)) return;
      void pacer.terminate();
      const seconds = Math.max(lastAnswerMs - t0, durationMs) / 1000;
      resolve({
        offeredPerS: ratePerS,
        seconds: round1(seconds),
        scheduled,
        sent,
        completed,
        errors,
        isSaturated,
        throughputPerS: Math.round(completed / seconds),
        latency: latency.summary(),
        sendLag: sendLag.summary(),
      });
    };
    const fire = (i: number, dueMs: number) => {
      inFlight++;
      sendLag.recordMs(performance.now() - dueMs);
      options.request(i).then(
        (isOk) => settle(dueMs, isOk),
        () => settle(dueMs, false),
      );
    };
    const settle = (dueMs: number, isOk: boolean) => {
      inFlight--;
      lastAnswerMs = performance.now();
      latency.recordMs(lastAnswerMs - dueMs);
      if (isOk) completed++;
      else errors++;
      finishIfDone();
    };
    // Woken by the pacer as each request falls due; sends every request due by now (after a late wake-up,
    // the main thread having been busy, it catches up at once, and the lateness shows in sendLag).
    pacer.on('message', (due: number) => {
      if (sent >= scheduled || isSaturated) return;
      const nowMs = performance.now();
      while (sent < scheduled) {
        const dueMs = t0 + sent * intervalMs;
        // Request `due` is sent whatever this thread's clock says (the two threads' clocks agree only to
        // rounding, and a request left unsent after the last message would never be sent).
        if (sent > due && dueMs > nowMs) break;
        if (inFlight >= maxInFlight) {
          isSaturated = true;
          stopPacer();
          break;
        }
        fire(sent++, dueMs);
      }
      finishIfDone();
    });
    const start: PacerStart = {
      startEpochMs: performance.timeOrigin + t0,
      intervalMs,
      count: scheduled,
      stop: stop.buffer as SharedArrayBuffer,
    };
    pacer.postMessage(start);
  });
}
