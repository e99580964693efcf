// Any thread. The money protocol between the services that move money and the balances' owners: the calls an
// owner decides (engine/owner.ts implements them; the shard's ledger on the lmdb engine), their answers, and
// the money operations that travel to a user's shard in a thread message (rfq/messages.ts carries them).
import type { AccountId, PositionOutcome } from '../records/ledger.js';
import type { BlindWrite, TypedWrite } from '../store/records.js';

/**
 * The journal engine's money calls the main thread makes (engine/owner.ts MoneyCall has them with the
 * shards' own): makers' and the protocol's credits and withdrawals, contests' pools.
 */
export type OwnedMoneyCall =
  | { op: 'credit'; account: AccountId; amountMicros: bigint; key: string }
  | { op: 'withdraw'; account: AccountId; amountMicros: bigint; ref: string }
  | { op: 'finish_withdrawal'; ref: string; isCompleted: boolean }
  /** A new contest's pool leaves the protocol's available (on the protocol's owner). */
  | { op: 'open_pool'; contestId: string; amountMicros: bigint }
  /**
   * What the contest did not pay goes back to the protocol's available. `expectedMicros` is what the lane
   * knows the pool holds by now (its opening, plus the stakes it collected, less the prizes it paid): refused
   * POOL_SHORT while collected stakes are still on their way, so none arrives at a closed pool.
   */
  | { op: 'close_pool'; contestId: string; expectedMicros: bigint };

export type MoneyRefusal = 'INSUFFICIENT_BALANCE' | 'IDEMPOTENCY_CONFLICT' | 'UNCOVERED' | 'OWNER_UNAVAILABLE' | 'ABORTED' | 'POOL_SHORT';

export type MoneyAnswer = { ok: true; isReplay?: boolean; isMoved?: boolean } | { ok: false; code: MoneyRefusal };

/** What a credit key was used for. */
export interface CreditKeyUse {
  account: AccountId;
  amountMicros: bigint;
}

/** Calls from the owner's clients (the RFQ actor, the main thread's money routes: OwnedMoneyCall, settlement). */
export type MoneyCall =
  | Exclude<OwnedMoneyCall, { op: 'credit' | 'finish_withdrawal' }>
  /**
   * `stored`: the key's use as the read model holds it, looked up by the host when the book has forgotten
   * the key (owner-host.ts); a replay or a conflict is decided from it as from the book.
   */
  | (Extract<OwnedMoneyCall, { op: 'credit' }> & { stored?: CreditKeyUse })
  /**
   * `wasCompleted`: how the withdrawal already ended, when its hold is gone: the transfer that settled the
   * hold, looked up by the host in the read model (journal-money.ts); a repeat and the other end are told
   * apart from it.
   */
  | (Extract<OwnedMoneyCall, { op: 'finish_withdrawal' }> & { wasCompleted?: boolean })
  | { op: 'reserve'; userId: string; amountMicros: bigint; ref: string }
  | { op: 'release'; ref: string }
  /** The fill of an RFQ's reservation `ref`; the maker's liability is locked first, wherever the maker lives. */
  | { op: 'fill'; ref: string; filledMicros: bigint; makerAddress: string; liabilityMicros: bigint }
  /** The RFQ of `ref` ended otherwise while its fill waited for a lock: a lock granted later is voided. */
  | { op: 'abort_fill'; ref: string }
  | { op: 'settle'; ref: string; makerAddress: string; outcome: PositionOutcome }
  // A contest's money (contract section 11): its prize pool on the protocol's owner (OwnedMoneyCall), its
  // entries' stakes (reserved like an RFQ's wager) on their users' owners.
  /** An entry's stake joins its contest's pot (the protocol's committed, the pool's hold). */
  | { op: 'collect'; contestId: string; ref: string }
  /** A winner's prize out of the pot; refused POOL_SHORT while stakes collected are still on their way. */
  | { op: 'pay_prize'; contestId: string; ref: string; userId: string; amountMicros: bigint };

/** Which engine owns the balances: the shards' LMDB transactions, or the owner actors and their journals (docs/engine.md). */
export type EngineKind = 'lmdb' | 'journal';

/** A record another owner decided, committed by the shard in the same transaction as the money it goes with. */
export type RecordWrite = TypedWrite<
  | 'contests'
  | 'contestEntries'
  | 'userEntries'
  | 'entryKeys'
  | 'withdrawals'
  | 'withdrawalKeys'
  | 'accountWithdrawals'
  | 'withdrawalsByStatus'
>;

/**
 * One contest entry at its contest's settlement, once its stake was collected into the pot (a resolution)
 * or not (a void): its prize (0: none), or null to refund the reserved stake.
 */
export interface EntrySettlement {
  ref: string;
  userId: string;
  payoutMicros: string | null;
  /** The entry as settled: written only if this settlement moved its money (not already settled). */
  write: TypedWrite<'contestEntries'>;
}

/**
 * A debit of one user's available that the user's shard decides (an entry's stake, a withdrawal), written
 * with the records it goes with, or INSUFFICIENT_BALANCE and nothing written. `uniqueKeys`: records that
 * must not exist yet (an idempotency key): if one does, IDEMPOTENCY_CONFLICT.
 */
export interface UserDebit {
  userId: string;
  amountMicros: string;
  ref: string;
  writes: RecordWrite[];
  uniqueKeys: Array<Pick<RecordWrite, 'db' | 'key'>>;
  atMs: number;
}

/**
 * A movement of users' money, sent to the shard that owns their balances (contract sections 4 and 8): the
 * shard alone decides whether it can happen and writes it. Every user named belongs to that shard.
 */
export type MoneyOp =
  /** Admin funding, idempotent by key: the key's record is written with the credit. */
  | { op: 'credit'; userId: string; wallet: string; amountMicros: string; idempotencyKey: string; atMs: number }
  /** A contest entry: its stake reserved with the entry's records. */
  | ({ op: 'reserve' } & UserDebit)
  /** A resolving contest's first sweep: each entry's reserved stake joins the pot, once. */
  | { op: 'collect_entries'; contestId: string; refs: string[]; atMs: number }
  /** A batch of a contest's settlement: each entry paid (or refunded) once, however often this is repeated. */
  | { op: 'settle_entries'; contestId: string; entries: EntrySettlement[]; atMs: number }
  /** A user's withdrawal: available → pending_withdrawal, with the withdrawal's records. */
  | ({ op: 'withdraw' } & UserDebit)
  /** Filled positions one of whose markets resolved: each settles when its outcome is decided, once. */
  | { op: 'settle_positions'; requestIds: string[]; atMs: number }
  /**
   * The journal engine's: one call of the owner's money protocol (engine/owner.ts) with the records that go
   * with it (its facts), for the accounts the main thread moves (makers', the protocol's, contest pools).
   */
  | { op: 'owner_call'; call: MoneyCall; facts: BlindWrite[] };

/** A command on the channel from owner `from` to owner `owner`, by its seq (engine/owner.ts channels). */
export interface ChannelPoint {
  owner: number;
  from: number;
  seq: number;
}

/**
 * `transit`: the money moved on to another shard's account on a channel (a credit whose key and account have
 * two owners); the answer waits until that shard has applied it (shard-pool.ts moveMoney).
 */
export type MoneyResult =
  | { op: 'credit'; isReplay: boolean; transit?: ChannelPoint }
  | { op: 'reserve' }
  | { op: 'withdraw' }
  | { op: 'collect_entries'; collected: number }
  | { op: 'settle_entries'; settled: number }
  | { op: 'settle_positions'; settled: number }
  | { op: 'owner_call'; answer: MoneyAnswer; transit?: ChannelPoint };
