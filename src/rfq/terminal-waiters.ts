// Main thread. The requests whose answer waits for their RFQ's terminal result (`wait_ms`), and the terminal
// results that arrive before their request is waiting. Bounded both ways: places for waiting requests
// (PARLAYD_MAX_WAITERS), and unclaimed results.
import { overloaded } from '../lib/errors.js';
import { setBounded } from '../lib/bounded-map.js';
import type { RfqResult } from '../contract/rfq.js';

/** Terminal results kept for a waiter that registers just after them (see unclaimed). */
const MAX_UNCLAIMED_TERMINALS = 16_384;
export const DEFAULT_MAX_WAITERS = 16_384;

export class TerminalWaiters {
  private readonly waiters = new Map<string, Set<(result: RfqResult) => void>>();
  /**
   * Terminal results that a create's answer will wait for but that came first, oldest first. An RFQ's created
   * and terminal events can reach this thread back to back (makers answer while the create commits, or the
   * two writes share one commit: rfq-writes.ts commitCreate), before the submitting request has registered
   * its waiter (a promise turn after 'created'). Only those: the result of an RFQ whose create did not ask to
   * wait is never claimed (a poller reads it from LMDB), and keeping it would only fill this map.
   */
  private readonly unclaimed = new Map<string, RfqResult>();
  /** Waiting requests and the places taken for requests about to wait (reserve); at most maxWaiters. */
  private slots = 0;

  constructor(private readonly maxWaiters: number = DEFAULT_MAX_WAITERS) {}

  /**
   * Takes a place for a request that will wait, before it starts anything: 503 OVERLOADED when maxWaiters
   * are taken. The returned function gives it back (once).
   */
  reserve(): () => void {
    if (this.slots >= this.maxWaiters) throw overloaded();
    this.slots++;
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      this.slots--;
    };
  }

  /** Waiting requests and reserved places (a gauge). */
  get count(): number {
    return this.slots;
  }

  /** Terminal results waiting for their create's answer to claim them (a gauge: 0 between requests). */
  get unclaimedCount(): number {
    return this.unclaimed.size;
  }

  /**
   * Resolves with the terminal result, or null after `waitMs` or when the client goes away. `abortSignal` is
   * read only when the answer has to wait: making the request's AbortController was ~0.3 % of the main
   * thread's samples at 2,000 RFQ/s, and most answers find their result here already.
   */
  wait(requestId: string, waitMs: number, abortSignal: () => AbortSignal): Promise<RfqResult | null> {
    const ended = this.unclaimed.get(requestId);
    if (ended !== undefined) {
      this.unclaimed.delete(requestId);
      return Promise.resolve(ended);
    }
    const signal = abortSignal();
    return new Promise((resolve) => {
      const set = this.waiters.get(requestId) ?? new Set();
      this.waiters.set(requestId, set);
      const done = (result: RfqResult | null) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        set.delete(wake);
        if (set.size === 0 && this.waiters.get(requestId) === set) this.waiters.delete(requestId);
        resolve(result);
      };
      const wake = (result: RfqResult) => done(result);
      const onAbort = () => done(null);
      const timer = setTimeout(() => done(null), waitMs);
      signal.addEventListener('abort', onAbort);
      set.add(wake);
    });
  }

  /** A terminal result arrived: its waiters wake, or it is kept for the create that will claim it. */
  deliver(result: RfqResult, isAwaitedByCreate: boolean): void {
    const set = this.waiters.get(result.request_id);
    if (set !== undefined) for (const wake of [...set]) wake(result);
    // Claimed a promise turn later. Bounded all the same: a claim that never comes must not grow it.
    else if (isAwaitedByCreate) setBounded(this.unclaimed, result.request_id, result, MAX_UNCLAIMED_TERMINALS);
  }
}
