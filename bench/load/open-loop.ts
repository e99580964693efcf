// Load generator, main thread. Open loop: request i is due at t0 + i / rate whatever happened to earlier
// requests, and its latency is measured from that due time, not from when it was actually sent. A server
// that stalls therefore shows the stall in every request that was due during it (no coordinated
// omission), and the generator's own lateness is counted against the figure, never hidden: it is also
// reported on its own (sendLag) so a reader can tell the two apart.
import { LatencyHistogram, round1, type LatencySummary } from './histogram.js';

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

// Node timers fire on a 1 ms grid at best: wake at most this early and send everything due.
const TICK_MS = 1;

export function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
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
  const t0 = performance.now() + 2;

  return new Promise((resolve) => {
    const finishIfDone = () => {
      if (inFlight > 0 || (sent < scheduled && !isSaturated)) return;
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
    const tick = () => {
      const nowMs = performance.now();
      while (sent < scheduled) {
        const dueMs = t0 + sent * intervalMs;
        if (dueMs > nowMs) break;
        if (inFlight >= maxInFlight) {
          isSaturated = true;
          break;
        }
        fire(sent++, dueMs);
      }
      if (sent < scheduled && !isSaturated) {
        const waitMs = t0 + sent * intervalMs - performance.now();
        setTimeout(tick, Math.max(0, Math.min(TICK_MS, waitMs)));
      } else finishIfDone();
    };
    setTimeout(tick, 0);
  });
}
