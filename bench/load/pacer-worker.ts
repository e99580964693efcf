// Load generator, pacer thread (started by open-loop.ts). Node's timers fire on libuv's 1 ms grid, so a
// step paced by setTimeout handed each request to the client 0-1 ms late (sendLag p50 0.56-0.65 ms at every
// rate, a quarter of the unsigned p50 at 250 RFQ/s): the generator's lateness, counted against the server.
// This thread sleeps in Atomics.wait, whose timeout may be a fraction of a millisecond, and posts the index
// of each request as it falls due; the main thread, woken by the message, sends it.
import { parentPort } from 'node:worker_threads';

const port = parentPort;
if (port === null) throw new Error('pacer-worker must run as a worker thread');

export interface PacerStart {
  /** Due time of request 0, epoch ms (performance.timeOrigin + performance.now(), the same on every thread). */
  startEpochMs: number;
  intervalMs: number;
  count: number;
  /** Int32 cell the main thread sets to 1 to stop the pacer early (the step saturated). */
  stop: SharedArrayBuffer;
}

const nowEpochMs = () => performance.timeOrigin + performance.now();

port.once('message', ({ startEpochMs, intervalMs, count, stop }: PacerStart) => {
  const stopCell = new Int32Array(stop);
  for (let i = 0; i < count; i++) {
    // A timed wait may return a little early (the clocks differ in rounding): sleep again until due.
    for (let waitMs = startEpochMs + i * intervalMs - nowEpochMs(); waitMs > 0; waitMs = startEpochMs + i * intervalMs - nowEpochMs()) {
      Atomics.wait(stopCell, 0, 0, waitMs);
      if (Atomics.load(stopCell, 0) !== 0) break;
    }
    if (Atomics.load(stopCell, 0) !== 0) break;
    port.postMessage(i);
  }
  port.close();
});
