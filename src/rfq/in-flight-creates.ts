// Main thread. Creates sent to a shard and not answered yet: what the main thread counts, on top of committed
// state, before it announces an RFQ its shard has not seen (shard-pool.ts create). A shard's own count of
// reservations not yet committed is always a part of this one, so a check against it is at least as strict.
export class InFlightCreates {
  readonly #wagerByUser = new Map<string, bigint>();
  /** Counts, not a set: two submissions with one key may both be on their way (the shard decides the race). */
  readonly #countByKey = new Map<string, number>();

  hasKey(replayKey: string): boolean {
    return this.#countByKey.has(replayKey);
  }

  wagerOf(userId: string): bigint {
    return this.#wagerByUser.get(userId) ?? 0n;
  }

  /** Counts a create until the returned release is called (once, when its answer is in). */
  add(userId: string, replayKey: string, wagerMicros: bigint): () => void {
    this.#wagerByUser.set(userId, this.wagerOf(userId) + wagerMicros);
    this.#countByKey.set(replayKey, (this.#countByKey.get(replayKey) ?? 0) + 1);
    return () => {
      const wagerLeft = this.wagerOf(userId) - wagerMicros;
      if (wagerLeft === 0n) this.#wagerByUser.delete(userId);
      else this.#wagerByUser.set(userId, wagerLeft);
      const countLeft = this.#countByKey.get(replayKey)! - 1;
      if (countLeft === 0) this.#countByKey.delete(replayKey);
      else this.#countByKey.set(replayKey, countLeft);
    };
  }
}
