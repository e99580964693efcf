// Main thread, for the maker protection (protection.ts): one maker's fills within its counting window, oldest
// first. Kept in typed arrays, not arrays of numbers and BigInts: at 2,000 fills/s every fill's time (a heap
// number) and wager (a BigInt) lived for the whole window, so each young-generation collection of the main
// thread copied thousands of them and promoted them (docs/performance.md, "This stop's changes"). Here a
// fill costs two slots of memory that is already old, and nothing for the collector.

/** Each window starts this small and doubles up to its bound: most makers never fill that much. */
const FIRST_CAPACITY = 64;

export class FillWindow {
  #atMs = new Float64Array(FIRST_CAPACITY);
  #wagerMicros = new BigInt64Array(FIRST_CAPACITY);
  #head = 0;
  #count = 0;
  #wagerSumMicros = 0n;

  constructor(private readonly maxFills: number) {}

  get count(): number {
    return this.#count;
  }

  get wagerSumMicros(): bigint {
    return this.#wagerSumMicros;
  }

  /** Adds a fill, then forgets those at or before `oldestCountedMs` and any past the bound, oldest first. */
  add(atMs: number, wagerMicros: bigint, oldestCountedMs: number): void {
    if (this.#count === this.#atMs.length && this.#count < this.maxFills) this.#grow();
    if (this.#count === this.#atMs.length) this.#dropOldest();
    const slot = (this.#head + this.#count) % this.#atMs.length;
    this.#atMs[slot] = atMs;
    this.#wagerMicros[slot] = wagerMicros;
    this.#count++;
    this.#wagerSumMicros += wagerMicros;
    while (this.#count > 0 && this.#atMs[this.#head]! <= oldestCountedMs) this.#dropOldest();
  }

  #dropOldest(): void {
    this.#wagerSumMicros -= this.#wagerMicros[this.#head]!;
    this.#head = (this.#head + 1) % this.#atMs.length;
    this.#count--;
  }

  #grow(): void {
    const capacity = Math.min(this.#atMs.length * 2, this.maxFills);
    const atMs = new Float64Array(capacity);
    const wagerMicros = new BigInt64Array(capacity);
    for (let i = 0; i < this.#count; i++) {
      const from = (this.#head + i) % this.#atMs.length;
      atMs[i] = this.#atMs[from]!;
      wagerMicros[i] = this.#wagerMicros[from]!;
    }
    this.#atMs = atMs;
    this.#wagerMicros = wagerMicros;
    this.#head = 0;
  }
}
