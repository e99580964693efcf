// Main thread. Terminal RFQ results, serialized, by request id. A terminal RFQ never changes again (the shard
// asserts that an RFQ ends once, and settlement writes fills, not RFQ records), so after the first read from
// LMDB a GET of it is a map lookup and a write of bytes already made: no msgpack decode, no JSON encode.
// Bounded: the oldest entry leaves first, and a miss is only a read from LMDB.
import { setBounded } from '../lib/bounded-map.js';
import type { Store } from '../store/db.js';
import { isTerminal, toRfqResult } from '../records/rfqs.js';
import { readRfq } from './rfq-records.js';

export const MAX_CACHED_RESULTS = 65_536;

/** `userId` is the owner: a GET by anyone else is RFQ_NOT_FOUND (contract section 2: never reveal it exists). */
export type StoredRfq = { isTerminal: true; userId: string; resultJson: string } | { isTerminal: false; userId: string };

export class TerminalResults {
  readonly #byRequestId = new Map<string, StoredRfq>();

  constructor(private readonly store: Store) {}

  /** What is stored of an RFQ: its result when terminal (an active one's live state is its shard's). */
  lookup(requestId: string): StoredRfq | undefined {
    const cached = this.#byRequestId.get(requestId);
    if (cached !== undefined) return cached;
    const record = readRfq(this.store, requestId);
    if (record === undefined) return undefined;
    if (!isTerminal(record.status)) return { isTerminal: false, userId: record.userId };
    const stored: StoredRfq = { isTerminal: true, userId: record.userId, resultJson: JSON.stringify(toRfqResult(record)) };
    setBounded(this.#byRequestId, requestId, stored, MAX_CACHED_RESULTS);
    return stored;
  }
}
