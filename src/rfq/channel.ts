// Both threads. Batches messages to another thread, because a thread hop costs ~100 µs and a batch costs one.
// 'microtask' posts what one synchronous run sent at its end. 'turn' posts what a whole event-loop turn sent,
// after its I/O (setImmediate): on the main thread uWS calls JavaScript once per socket message, so a turn
// that reads quotes from ten makers is ten synchronous runs, and per run it would be ten posts (and ten
// wake-ups of the shard) where per turn it is one.
export type FlushPoint = 'microtask' | 'turn';

export class BatchingSender<T> {
  private queue: T[] = [];
  private isScheduled = false;

  constructor(
    private readonly post: (batch: T[]) => void,
    private readonly flushAt: FlushPoint = 'microtask',
  ) {}

  send(message: T): void {
    this.queue.push(message);
    if (this.isScheduled) return;
    this.isScheduled = true;
    if (this.flushAt === 'turn') setImmediate(this.flush);
    else queueMicrotask(this.flush);
  }

  private readonly flush = (): void => {
    const batch = this.queue;
    this.queue = [];
    this.isScheduled = false;
    this.post(batch);
  };
}
