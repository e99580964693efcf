// Any thread. Gathers items and hands them over in one batch: at the end of the synchronous run that added
// the first ('microtask'), or of the whole event-loop turn, after its I/O ('turn', setImmediate). Each user
// pays a fixed cost per batch that is worth sharing: a thread hop (~100 µs, RFQ shard messages), a piscina
// task (signature recovery), an fsync (the shard's group commit). (Maker frames are grouped per connection
// as they arrive, a keyed shape of their own: shard-pool.ts.)
//
// 'turn' matters where uWS calls JavaScript once per socket message: a turn that reads quotes from ten makers
// is ten synchronous runs, and per run it would be ten batches where per turn it is one.
export type FlushPoint = 'microtask' | 'turn';

export class Batcher<T> {
  #items: T[] = [];
  #isScheduled = false;

  constructor(
    private readonly flush: (batch: T[]) => void,
    private readonly flushAt: FlushPoint = 'microtask',
  ) {}

  /** Items added and not yet handed over. */
  get size(): number {
    return this.#items.length;
  }

  add(item: T): void {
    this.#items.push(item);
    if (this.#isScheduled) return;
    this.#isScheduled = true;
    if (this.flushAt === 'turn') setImmediate(this.#flushNow);
    else queueMicrotask(this.#flushNow);
  }

  readonly #flushNow = (): void => {
    const batch = this.#items;
    this.#items = [];
    this.#isScheduled = false;
    this.flush(batch);
  };
}
