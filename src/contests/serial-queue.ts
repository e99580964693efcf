// Main thread. The contest actor's mailbox: one FIFO lane per contest id, so that every state change of a
// contest (its creation, each entry, its resolution or voiding) is decided one at a time, in arrival order,
// against the state the previous change left durable. A lane exists only while it has work; its depth is
// bounded, and a full lane is 503 OVERLOADED with nothing accepted (STYLE: a bound that is hit is an error).
import { overloaded } from '../lib/errors.js';

interface Lane {
  tail: Promise<void>;
  depth: number;
}

export class SerialQueues {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly maxDepthPerLane: number,
    /**
     * Called when any task ends (done or failed), before its caller sees the result: what a task committed
     * is then visible to whoever was told about it (the contest list's page cache is dropped here).
     */
    private readonly onTaskSettled: () => void = () => {},
  ) {}

  /**
   * Runs `task` after every task queued before it on `key`; its result or error is the caller's. Client
   * work is bounded; the service's own tasks (resolution, admin) pass `isBounded = false`, because refusing
   * them would leave a contest unresolved rather than shed load (they are at most a few per contest).
   */
  run<T>(key: string, task: () => Promise<T>, isBounded = true): Promise<T> {
    let lane = this.lanes.get(key);
    if (lane === undefined) this.lanes.set(key, (lane = { tail: Promise.resolve(), depth: 0 }));
    if (isBounded && lane.depth >= this.maxDepthPerLane) return Promise.reject(overloaded());
    lane.depth++;
    const result = lane.tail.then(task);
    const current = lane;
    // The lane waits for the task however it ends; the caller sees its error, the lane does not. Registered
    // before the caller can await `result`, so finish() runs first.
    lane.tail = result.then(
      () => this.finish(key, current),
      () => this.finish(key, current),
    );
    return result;
  }

  /** Tasks waiting or running on `key` (for tests and metrics). */
  depth(key: string): number {
    return this.lanes.get(key)?.depth ?? 0;
  }

  /** Resolves when every lane is idle. */
  async drain(): Promise<void> {
    while (this.lanes.size > 0) await Promise.all([...this.lanes.values()].map((l) => l.tail));
  }

  private finish(key: string, lane: Lane): void {
    this.onTaskSettled();
    lane.depth--;
    if (lane.depth === 0 && this.lanes.get(key) === lane) this.lanes.delete(key);
  }
}
