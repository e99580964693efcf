// Any thread. How code that finds a bug it cannot recover from stops its thread: the error is thrown on the
// next turn, outside every promise chain, so no caller can catch it or turn it into a rejection that is
// logged and forgotten. On the main thread that is the process's uncaught exception (it stops, main.ts); on a
// worker thread the worker's 'error' event, which the main thread treats as a failed shard.

import { AssertionError } from 'node:assert/strict';

/** Throws `error` on the next turn of this thread, where nothing can catch it. */
export function crashLater(error: unknown): void {
  setImmediate(() => {
    throw error;
  });
}

/**
 * A broken invariant (an AssertionError from a money check) is a bug, not a failure to retry: the thread
 * stops rather than carry on with wrong balances (STYLE). Other errors are left to the caller. True when
 * `error` was one, so the caller need not look again.
 */
export function crashOnBrokenInvariant(error: unknown): boolean {
  if (!(error instanceof AssertionError)) return false;
  crashLater(error);
  return true;
}
