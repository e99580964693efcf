// Main thread. The durable contest records and their LMDB keys. Only the contest actor (contests/contests.ts,
// and entries.ts, resolution.ts and settlement.ts for it) writes them, or has a user's shard write them, always
// inside one transaction and always from the contest's own serial lane (see serial-queue.ts); every read and
// write goes through contest-records.ts, which opens their databases.
//
// Money is kept as JS numbers here because every amount is bounded at creation: protocol pool + entry_cap ×
// bet_amount ≤ 2^53−1 (rules.ts checks it), so no stored amount can lose precision. Arithmetic on them is
// done in BigInt (scoring.ts, ledger).
import { Type, type Static } from '@sinclair/typebox';
import { canonicalUuid, Direction, MicrosString, Nullable } from '../contract/common.js';
import { BetType, ContestCategory, ContestStatus, GameType, ImageContentType, PickOutcome } from '../contract/contests.js';

// The stored shapes are typebox schemas, so the record module (contest-records.ts) can check what it reads;
// each type is its schema's static type.

export const ContestMarketRef = Type.Object({
  marketId: Type.Integer({ minimum: 1 }),
  /** Per-contest category label (bets_per_category counts picks per label). */
  category: Type.String(),
});
export type ContestMarketRef = Static<typeof ContestMarketRef>;

/**
 * The durable progress of a settlement, rewritten in each batch's transaction together with the entries and
 * the money that batch settled, so that a crash between batches leaves exactly: the entries up to `lastKey`
 * settled and their money moved, none after it. Entries are settled in key order.
 */
export const SettlingRecord = Type.Object({
  /** Decided once, written before any entry's money moves: 'resolve' pays by score; 'void' refunds every stake. */
  kind: Type.Union([Type.Literal('resolve'), Type.Literal('void')]),
  /** When the decision was taken: every batch's journal entries and the final resolved_at_ms use it. */
  atMs: Type.Integer(),
  /**
   * A resolution runs two sweeps over the entries (contests/settlement.ts): 'collect' moves every stake into
   * the contest's pot, then 'pay' pays the prizes out of it; a void has only 'pay' (its refunds). Absent on a
   * record written before the money model: 'pay'.
   */
  phase: Type.Optional(Type.Union([Type.Literal('collect'), Type.Literal('pay')])),
  /** The last entry key done in this phase: every entry with a key ≤ it is, no entry after it is; '' for none yet. */
  lastKey: Type.String(),
  settledCount: Type.Integer({ minimum: 0 }),
  /** Sum of the payouts of the entries settled so far (0 for a void: refunds are not payouts). */
  paidMicros: Type.Integer({ minimum: 0 }),
  /**
   * The payout rules the settlement was decided under, kept to its end (scoring.ts PayoutRules): a batch
   * settled before a restart and one after it must pay by one table. Absent on a record decided before the
   * rules returned rounding to the protocol: 'earliest_entries'.
   */
  payoutRules: Type.Optional(Type.Union([Type.Literal('earliest_entries'), Type.Literal('to_protocol'), Type.Literal('by_place')])),
});
export type SettlingRecord = Static<typeof SettlingRecord>;

export const ContestRecord = Type.Object({
  contestId: Type.String(),
  /** Creation order (a counter), the tie-break of "newest first". */
  seq: Type.Integer(),
  title: Type.String(),
  category: ContestCategory,
  status: ContestStatus,
  betAmountMicros: Type.Integer({ minimum: 0 }),
  protocolPrizePoolMicros: Type.Integer({ minimum: 0 }),
  entryCap: Type.Integer({ minimum: 0 }),
  entryOpensAtMs: Nullable(Type.Integer()),
  bettingClosesMs: Type.Integer(),
  liveEndsAtMs: Nullable(Type.Integer()),
  /** Set when the contest resolves or is voided. */
  resolvedAtMs: Nullable(Type.Integer()),
  createdAtMs: Type.Integer(),
  description: Nullable(Type.String()),
  betType: BetType,
  gameType: GameType,
  winningSplitBps: Type.Array(Type.Integer()),
  markets: Type.Array(ContestMarketRef),
  hasImage: Type.Boolean(),
  /** Number of entries; written in the same transaction as each entry, so it is always their count. */
  entriesFilled: Type.Integer({ minimum: 0 }),
  /** Sum of payouts credited at resolution (≤ the pot), null until resolved. */
  paidMicros: Nullable(Type.Integer({ minimum: 0 })),
  /**
   * Present only while the contest's entries are being settled, batch after batch (settlement.ts); absent
   * before and after (and on records written before batching existed). status stays 'open' meanwhile.
   */
  settling: Type.Optional(SettlingRecord),
});
export type ContestRecord = Static<typeof ContestRecord>;

export const PickRecord = Type.Object({ marketId: Type.Integer({ minimum: 1 }), direction: Direction });
export type PickRecord = Static<typeof PickRecord>;

/** Written once when the contest resolves or is voided; frozen afterwards. */
export const EntrySettlement = Type.Object({
  outcomes: Type.Array(PickOutcome),
  payoutMicros: Type.Integer({ minimum: 0 }),
  netPayoutMicros: Type.Integer(),
  rank: Nullable(Type.Integer()),
});
export type EntrySettlement = Static<typeof EntrySettlement>;

export const EntryRecord = Type.Object({
  contestId: Type.String(),
  userId: Type.String(),
  entryIndex: Type.Integer({ minimum: 0 }),
  /** Position in the contest's entry order (0-based): the tie-break for rounding remainders. */
  seq: Type.Integer({ minimum: 0 }),
  createdAtMs: Type.Integer(),
  /** In submission order; survivor/streak continuations append. */
  picks: Type.Array(PickRecord),
  /** The bet amount reserved for this entry when it was created. */
  stakeMicros: Type.Integer({ minimum: 0 }),
  settlement: Nullable(EntrySettlement),
});
export type EntryRecord = Static<typeof EntryRecord>;

export const ImageRecord = Type.Object({ contentType: ImageContentType, bytes: Type.Uint8Array() });
export type ImageRecord = Static<typeof ImageRecord>;

const INDEX_DIGITS = 10;

export const entryKey = (contestId: string, userId: string, entryIndex: number) =>
  `${contestId}:${userId}:${String(entryIndex).padStart(INDEX_DIGITS, '0')}`;

/** Key range of every entry of a contest (UUIDs and ':' sort below '~'). */
export const contestEntryRange = (contestId: string) => ({ start: `${contestId}:`, end: `${contestId}:~` });

/** entryKey's shape: contest id, user id (neither holds ':' or '~'), zero-padded entry_index. */
const ENTRY_KEY_RE = new RegExp(`^([^:~]{1,64}):[^:~]{1,64}:[0-9]{${INDEX_DIGITS}}$`);

/** The contest of an entry key, or null for text that is not one (a cursor made from a key is checked with it). */
export function contestOfEntryKey(key: string): string | null {
  return ENTRY_KEY_RE.exec(key)?.[1] ?? null;
}

/** Key range of one user's entries in a contest, in entry_index order. */
export const userEntryRange = (contestId: string, userId: string) => ({
  start: `${contestId}:${userId}:`,
  end: `${contestId}:${userId}:~`,
});

/** The ledger reference of an entry's money movements. */
export const entryRef = (entry: Pick<EntryRecord, 'contestId' | 'userId' | 'entryIndex'>) =>
  `contest:${entry.contestId}:${entry.userId}:${entry.entryIndex}`;

export const imageUrl = (contestId: string) => `/v1/contests/${contestId}/image`;

/** Time-ordered key of one of a user's entries in any contest (userEntries): newest first is a reverse range. */
export const userEntryKey = (userId: string, createdAtMs: number, contestId: string, entryIndex: number) =>
  `${userId}:${String(createdAtMs).padStart(16, '0')}:${contestId}:${String(entryIndex).padStart(INDEX_DIGITS, '0')}`;
/** Every userEntryKey of one user lies strictly between these two ('~' sorts after every digit). */
export const userEntriesRange = (userId: string) => ({ start: `${userId}:`, end: `${userId}:~` });
/** A userEntryKey's (created_at_ms, contest id, entry_index). */
export function userEntryPositionOf(userId: string, key: string): [createdAtMs: number, contestId: string, entryIndex: number] {
  const [createdAtMs, contestId, entryIndex] = key.slice(userId.length + 1).split(':') as [string, string, string];
  return [Number(createdAtMs), contestId, Number(entryIndex)];
}

/** The entry a contest entry's idempotency key made (contract section 13), and what it was made from. */
export const EntryKeyRecord = Type.Object({
  contestId: Type.String(),
  entryIndex: Type.Integer({ minimum: 0 }),
  /** sha256 of the request's content (contest, entry_index, bets): the same key with other content is 409. */
  contentHash: Type.String(),
  reservedMicros: MicrosString,
});
export type EntryKeyRecord = Static<typeof EntryKeyRecord>;

/** One UUID is one key, whatever the case of its hex digits (contract/common.ts UuidInput). */
export const entryKeyRecordKey = (userId: string, idempotencyKey: string) => `${userId}:${canonicalUuid(idempotencyKey)}`;

/**
 * A contest's money call sent to a remote owner whose answer never came (contests/contest-owners.ts): its
 * node was gone, or this process was killed before it heard. Kept until the same call, sent again, is
 * answered: `entry`, an entry's stake reserved with its records; `pool`, a new contest's prize pool opened
 * with its record. Keyed by the call's hold reference.
 */
export interface ContestDoubtRecord {
  kind: 'entry' | 'pool';
  contestId: string;
  /** The owner it was sent to. */
  shard: number;
  /** The entrant (null for a pool). */
  userId: string | null;
  amountMicros: string;
  atMs: number;
  /** The records sent with it, written here once it is answered (store/records.ts writes: db, key, value). */
  writes: Array<{ db: string; key: string; value: unknown }>;
  /** Records the call requires absent at its owner (an entry's idempotency key). */
  uniqueKeys: Array<{ db: string; key: string }>;
}
