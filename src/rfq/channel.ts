// Both threads. Batches messages to another thread: everything sent during one synchronous run goes as one
// postMessage at the end of it (a microtask), because a thread hop costs ~100 µs and a batch costs one.
export class BatchingSender<T> {
  private queue: T[] = [];
  private isScheduled = false;

  constructor(private readonly post: (batch: T[]) => void) {}

  send(message: T): void {
    this.queue.push(message);
    if (this.isScheduled) return;
    this.isScheduled = true;
    queueMicrotask(this.flush);
  }

  private readonly flush = (): void => {
    const batch = this.queue;
    this.queue = [];
    this.isScheduled = false;
    this.post(batch);
  };
}
