// Any thread; pure. The bytes of an owner's journal records (one record: the effects of one input) and of its
// snapshots (its whole durable state at a journal seq). JSON: a record is a few hundred bytes, and the
// journal's framing (wal/record.ts) checks it. Every bigint in an effect is a field named `amountMicros`,
// written as a decimal string and read back as a bigint; nothing else is converted, so a user's string that
// looks like a number stays a string.
import { bucketsOf, type AccountId, type Bucket } from '../ledger/accounts.js';
import { Book, type Buckets, type Outbox } from './book.js';
import type { Effect, Hold } from './effects.js';

const toJson = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);
const fromJson = (key: string, value: unknown) => (key === 'amountMicros' && typeof value === 'string' ? BigInt(value) : value);

export function encodeEffects(effects: readonly Effect[]): Buffer {
  return Buffer.from(JSON.stringify(effects, toJson));
}

export function decodeEffects(payload: Uint8Array): Effect[] {
  return JSON.parse(Buffer.from(payload).toString(), fromJson) as Effect[];
}

interface SnapshotJson {
  self: number;
  /** The journal seq the state is as of: recovery replays the records after it. */
  seq: number;
  accounts: Array<[AccountId, Array<[Bucket, string]>]>;
  holds: Array<[string, Hold]>;
  creditKeys: Array<[string, { account: AccountId; amountMicros: bigint }]>;
  prizesPaid: Array<[string, string[]]>;
  outboxes: Array<[number, Outbox]>;
  received: Array<[number, number]>;
}

export function encodeSnapshot(book: Book, seq: number): Buffer {
  const snapshot: SnapshotJson = {
    self: book.self,
    seq,
    accounts: [...book.accounts].map(([account, buckets]) => [
      account,
      bucketsOf(account).flatMap((bucket): Array<[Bucket, string]> =>
        buckets[bucket] === undefined ? [] : [[bucket, buckets[bucket]!.toString()]],
      ),
    ]),
    holds: [...book.holds],
    creditKeys: [...book.creditKeys],
    prizesPaid: [...book.prizesPaid].map(([pool, refs]) => [pool, [...refs]]),
    outboxes: [...book.outboxes],
    received: [...book.received],
  };
  return Buffer.from(JSON.stringify(snapshot, toJson));
}

/** The book a snapshot holds, and the seq it is as of. */
export function decodeSnapshot(bytes: Uint8Array, ownerOf: (account: AccountId) => number): { book: Book; seq: number } {
  const snapshot = JSON.parse(Buffer.from(bytes).toString(), fromJson) as SnapshotJson;
  const book = new Book(snapshot.self, ownerOf);
  for (const [account, buckets] of snapshot.accounts) {
    const restored: Buckets = {};
    for (const [bucket, micros] of buckets) restored[bucket] = BigInt(micros);
    book.accounts.set(account, restored);
  }
  for (const [ref, hold] of snapshot.holds) book.holds.set(ref, hold);
  for (const [key, used] of snapshot.creditKeys) book.creditKeys.set(key, used);
  for (const [pool, refs] of snapshot.prizesPaid) book.prizesPaid.set(pool, new Set(refs));
  for (const [peer, outbox] of snapshot.outboxes) book.outboxes.set(peer, outbox);
  for (const [peer, seq] of snapshot.received) book.received.set(peer, seq);
  return { book, seq: snapshot.seq };
}
