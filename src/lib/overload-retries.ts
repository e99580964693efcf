// Main thread. Work refused 503 OVERLOADED (a full store, store/room.ts, or a shard at its limit of calls:
// nothing of it was done), done again in the background until it is: after 1 s, doubling to 30 s, one loop per
// key, until the service stops. A market resolution's listeners and a contest's settlement both end this way,
// so that a disk that fills for a while leaves nothing half-settled once it has room again; so does the
// withdrawal of a maker's quotes when its protection trips (mm/desk.ts).

import { ApiError } from './errors.js';

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

/** A 503 OVERLOADED, alone or as every failure of an AggregateError: nothing of it was written. */
export function isOverloaded(err: unknown): boolean {
  if (err instanceof AggregateError) return err.errors.length > 0 && err.errors.every(isOverloaded);
  return err instanceof ApiError && err.code === 'OVERLOADED';
}

export class OverloadRetries<K> {
  /** Keys with a loop running: a second failure of the same work joins it. */
  readonly #running = new Set<K>();
  #isStopped = false;

  /**
   * Runs `attempt` again after each backoff until it succeeds, the service stops, or it fails with something
   * other than OVERLOADED (handed to `onOtherFailure`; the loop ends and whoever runs the work next, a retry
   * by hand or the next start, continues it).
   */
  retry(key: K, attempt: () => Promise<unknown>, onOtherFailure: (err: unknown) => void): void {
    if (this.#isStopped || this.#running.has(key)) return;
    this.#running.add(key);
    void this.#loop(attempt, onOtherFailure).finally(() => this.#running.delete(key));
  }

  /** At stop, before the store closes: no attempt starts any more. */
  stop(): void {
    this.#isStopped = true;
  }

  async #loop(attempt: () => Promise<unknown>, onOtherFailure: (err: unknown) => void): Promise<void> {
    for (let delayMs = RETRY_FIRST_MS; !this.#isStopped; delayMs = Math.min(delayMs * 2, RETRY_MAX_MS)) {
      await new Promise<void>((resolve) => setTimeout(resolve, delayMs).unref());
      if (this.#isStopped) return;
      try {
        await attempt();
        return;
      } catch (err) {
        if (isOverloaded(err)) continue;
        onOtherFailure(err);
        return;
      }
    }
  }
}
