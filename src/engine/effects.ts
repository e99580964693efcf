// Any thread; pure. What an owner actor's decisions change, as data: the records of its journal. An owner
// (a shard, later a process) owns some accounts; its state is only ever changed by applying these effects
// (book.ts), live and at recovery alike, so the journal replays to exactly the state that decided.
//
// Money moves only as transfers (records/ledger.ts). A transfer between two accounts of one owner is applied
// whole; one whose sides belong to two owners is applied in halves, each by its owner, once each: the debit
// by the sender, which then carries the transfer to the receiver on a channel (channels below), and the
// credit by the receiver. Between the two it is in transit, and the ledger check counts it so (check.ts).
import type { AccountId, Side, UnlockKind } from '../records/ledger.js';
import type { Bucket, TransferKind } from '../contract/ledger-kinds.js';
import type { BlindWrite } from '../store/records.js';
import type { MoneyAnswer } from '../ledger/money-ops.js';

export interface Transfer {
  /** transferId(ref, step): unique, so a step can never move money twice. */
  id: string;
  kind: TransferKind | UnlockKind;
  ref: string;
  /** null: the world outside (a credit). */
  debit: Side | null;
  /** null: the world outside (a completed withdrawal). */
  credit: Side | null;
  amountMicros: bigint;
  atMs: number;
}

/** Which sides of a transfer an owner applies: both when it owns both, else its own half. */
export type Half = 'both' | 'debit' | 'credit';

/**
 * Money held for one reference. A maker's lock asked for by another owner's fill is `pendingFor` that owner
 * until the fill's fate is known (two phases: owner.ts); every other hold is final until settled.
 */
export interface Hold {
  account: AccountId;
  bucket: Exclude<Bucket, 'available'>;
  amountMicros: bigint;
  /** A lock whose fill lives on owner `owner` and is not yet known to have been committed; since `atMs`. */
  pendingFor?: { owner: number; ref: string; atMs: number };
}

/** What travels between two owners in order, at least once, applied once (the receiver's watermark). */
export type ChannelCommand =
  /** The credit half of a transfer whose debit half the sender applied; a stake collected joins its pool's hold. */
  | { c: 'credit'; transfer: Transfer; poolRef?: string }
  /** The fill that asked for lock `key` is durable: the lock becomes the position's (lockRef of `ref`). */
  | { c: 'post_lock'; key: string; ref: string }
  /** The fill that asked for lock `key` will never be: the liability goes back to the maker's available. */
  | { c: 'void_lock'; key: string }
  /** A position settled: the maker's liability moves as `outcome` says (to `taker` when won). */
  | { c: 'settle_lock'; ref: string; outcome: 'won' | 'lost' | 'voided'; taker: AccountId; atMs: number };

export type Effect =
  | { t: 'transfer'; transfer: Transfer; half: Half }
  | { t: 'hold'; ref: string; hold: Hold | null }
  | { t: 'credit_key'; key: string; account: AccountId; amountMicros: bigint }
  /** A contest's prize for entry `ref` was paid out of pool `poolRef` (kept until the pool closes). */
  | { t: 'prize'; poolRef: string; ref: string }
  /** A command put on the channel to `to` as its `seq`-th (kept until acknowledged). */
  | { t: 'send'; to: number; seq: number; command: ChannelCommand }
  /** The channel to `to` is acknowledged up to `seq`: those commands are applied there. */
  | { t: 'acked'; to: number; seq: number }
  /** The channel from `from` is applied up to `seq`. */
  | { t: 'received'; from: number; seq: number }
  /**
   * A client's record that goes with a call's money (an RFQ created with its reservation, ended with its
   * fill): journaled in the same record, so both are durable or neither, and written to the read model. The
   * book keeps nothing of it.
   */
  | { t: 'fact'; write: BlindWrite }
  /**
   * The answer to request `id`, a call from a client across the network that may send it again until it hears
   * (at least once): kept (the latest REPLIES_KEPT, book.ts) so that a repeat gets this answer, a refusal
   * included, instead of being decided anew against a later state. Journaled with the decision, so it
   * outlives a crash exactly when the decision does.
   */
  | { t: 'reply'; id: string; answer: MoneyAnswer };
