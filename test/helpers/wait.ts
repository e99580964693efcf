// The one polling helper of the tests: waits for something that follows an action without a response to
// await (a sweep, a socket's close, a resolution after a restart, a message on a feed).
//
//   await waitFor(() => relay.frozenOpenCount === 0, { what: 'the dead socket released' });
//   const detail = await waitFor(async () => {
//     const res = await getDetail(server, contestId);
//     return res.body.status === 'resolved' && res.body;
//   }, { timeoutMs: 10_000, what: 'the contest resolved' });
//   await waitFor(async () => { assert.equal(await balance(), 5n); }, { what: 'the refund' });
//
// The probe says "not yet" by returning false or by failing an assertion (node:assert's AssertionError: a
// check that does not hold yet); anything else it returns (true, a value, or nothing at all) ends the wait and
// is what waitFor resolves with. So a probe that looks something up returns `found ?? false`, never a bare
// `undefined` for "not found". Any other error (a refused connection, a socket's next() that timed out) is no
// "not yet": it fails the wait at once, as it would fail the test without the wait.
import { AssertionError } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** What is awaited, for the failure message: "timed out after 5000 ms waiting for <what>" (read only then). */
  what: string;
  /** Default 5000. */
  timeoutMs?: number;
  /** Pause between probes, default 20 ms. */
  intervalMs?: number;
}

export class WaitTimeoutError extends Error {
  override name = 'WaitTimeoutError';
}

/**
 * Calls `probe` until it returns something other than false without failing an assertion, and resolves with
 * what it returned. After `timeoutMs` it rejects with a WaitTimeoutError naming `what`, the time waited and
 * the last "not yet" (the last assertion's message, its error also the `cause`, or the last false).
 */
export async function waitFor<T>(probe: () => T | Promise<T>, options: WaitOptions): Promise<Exclude<T, false>> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const intervalMs = options.intervalMs ?? 20;
  const startMs = Date.now();
  for (let attempts = 1; ; attempts++) {
    let lastError: unknown = undefined;
    let hasThrown = false;
    try {
      const value = await probe();
      if (value !== false) return value as Exclude<T, false>;
    } catch (err) {
      if (!(err instanceof AssertionError)) throw err;
      lastError = err;
      hasThrown = true;
    }
    const waitedMs = Date.now() - startMs;
    if (waitedMs >= timeoutMs) {
      const last = hasThrown ? `the last probe failed: ${(lastError as AssertionError).message}` : 'the last probe returned false';
      throw new WaitTimeoutError(
        `timed out after ${waitedMs} ms (${attempts} probes) waiting for ${options.what}; ${last}`,
        hasThrown ? { cause: lastError } : undefined,
      );
    }
    await sleep(Math.min(intervalMs, Math.max(0, timeoutMs - waitedMs)));
  }
}
