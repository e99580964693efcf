// Main thread. The durable contest records and their LMDB keys. Only the contest actor (contests/contests.ts,
// and entries.ts, resolution.ts and settlement.ts for it) writes them, or has a user's shard write them, always
// inside one transaction and always from the contest's own serial lane (see serial-queue.ts).
//
// Money is kept as JS numbers here because every amount is bounded at creation: protocol pool + entry_cap ×
// bet_amount ≤ 2^53−1 (rules.ts checks it), so no stored amount can lose precision. Arithmetic on them is
// done in BigInt (scoring.ts, ledger).
import type { BetType, ContestCategory, ContestStatus, GameType, ImageContentType, PickOutcome } from '../schemas/contests.js';
import type { Db } from '../store/db.js';

export interface ContestMarketRef {
  marketId: number;
  /** Per-contest category label (bets_per_category counts picks per label). */
  category: string;
}

export interface ContestRecord {
  contestId: string;
  /** Creation order (a counter), the tie-break of "newest first". */
  seq: number;
  title: string;
  category: ContestCategory;
  status: ContestStatus;
  betAmountMicros: number;
  protocolPrizePoolMicros: number;
  entryCap: number;
  entryOpensAtMs: number | null;
  bettingClosesMs: number;
  liveEndsAtMs: number | null;
  /** Set when the contest resolves or is voided. */
  resolvedAtMs: number | null;
  createdAtMs: number;
  description: string | null;
  betType: BetType;
  gameType: GameType;
  winningSplitBps: number[];
  markets: ContestMarketRef[];
  hasImage: boolean;
  /** Number of entries; written in the same transaction as each entry, so it is always their count. */
  entriesFilled: number;
  /** Sum of payouts credited at resolution (≤ the pot), null until resolved. */
  paidMicros: number | null;
  /**
   * Present only while the contest's entries are being settled, batch after batch (settlement.ts); absent
   * before and after (and on records written before batching existed). status stays 'open' meanwhile.
   */
  settling?: SettlingRecord;
}

/**
 * The durable progress of a settlement, rewritten in each batch's transaction together with the entries and
 * the money that batch settled, so that a crash between batches leaves exactly: the entries up to `lastKey`
 * settled and their money moved, none after it. Entries are settled in key order.
 */
export interface SettlingRecord {
  /** Decided once, by the first batch: 'resolve' pays by score; 'void' refunds every stake. */
  kind: 'resolve' | 'void';
  /** When the decision was taken: every batch's journal entries and the final resolved_at_ms use it. */
  atMs: number;
  /**
   * A resolution runs two sweeps over the entries (contests/settlement.ts): 'collect' moves every stake into
   * the contest's pot, then 'pay' pays the prizes out of it; a void has only 'pay' (its refunds). Absent on a
   * record written before the money model: 'pay'.
   */
  phase?: 'collect' | 'pay';
  /** The last entry key done in this phase: every entry with a key ≤ it is, no entry after it is; '' for none yet. */
  lastKey: string;
  settledCount: number;
  /** Sum of the payouts of the entries settled so far (0 for a void: refunds are not payouts). */
  paidMicros: number;
}

export interface PickRecord {
  marketId: number;
  direction: 'up' | 'down';
}

/** Written once when the contest resolves or is voided; frozen afterwards. */
export interface EntrySettlement {
  outcomes: PickOutcome[];
  payoutMicros: number;
  netPayoutMicros: number;
  rank: number | null;
}

export interface EntryRecord {
  contestId: string;
  userId: string;
  entryIndex: number;
  /** Position in the contest's entry order (0-based): the tie-break for rounding remainders. */
  seq: number;
  createdAtMs: number;
  /** In submission order; survivor/streak continuations append. */
  picks: PickRecord[];
  /** The bet amount reserved for this entry when it was created. */
  stakeMicros: number;
  settlement: EntrySettlement | null;
}

export interface ImageRecord {
  contentType: ImageContentType;
  bytes: Uint8Array;
}

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

/**
 * A contest's entries in key order, strictly after `afterKey` (from its first when null), at most `limit`:
 * how settlement batches, scoring pages and admin pages walk a contest from the last key they saw without
 * holding its entries. LMDB's range start is inclusive, so `afterKey` itself is read and skipped here.
 */
export function* contestEntriesAfter(
  entries: Db<EntryRecord>,
  contestId: string,
  afterKey: string | null,
  limit = Number.POSITIVE_INFINITY,
): Generator<{ key: string; value: EntryRecord }> {
  if (limit <= 0) return;
  const range = contestEntryRange(contestId);
  const readLimit = Number.isFinite(limit) ? { limit: limit + 1 } : {};
  let yielded = 0;
  for (const { key, value } of entries.getRange({ start: afterKey ?? range.start, end: range.end, ...readLimit })) {
    if (key === afterKey) continue;
    yield { key, value };
    if (++yielded === limit) return;
  }
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

/** The entry a contest entry's idempotency key made (contract section 13), and what it was made from. */
export interface EntryKeyRecord {
  contestId: string;
  entryIndex: number;
  /** sha256 of the request's content (contest, entry_index, bets): the same key with other content is 409. */
  contentHash: string;
  reservedMicros: string;
}

export const entryKeyRecordKey = (userId: string, idempotencyKey: string) => `${userId}:${idempotencyKey}`;
