// Main thread. What the services that move money without owning it (contests, admin credits, withdrawals,
// position settlement) need of the balances' owners, the RFQ shards: which shard owns what, and a way to ask
// it to decide and write a movement (money-ops.ts MoneyOp). The shard pool is the implementation.
//
// On the lmdb engine the main thread still moves makers' and the protocol's money itself, in its own LMDB
// transactions (ledger.ts); on the journal engine every account has an owner shard (engine/routing.ts) and
// the main thread only asks (`ownerCall`), then reads LMDB after a `readBarrier` where it must see the result.
import type { EngineKind, MoneyAnswer, MoneyOp, MoneyResult, OwnedMoneyCall } from './money-ops.js';
import type { BlindWrite } from '../store/records.js';
import type { AccountId } from '../records/ledger.js';

export interface BalanceOwners {
  readonly engine: EngineKind;
  /** The owners are other processes (a cluster's shard nodes), each writing its own LMDB, not this one. */
  readonly areShardsRemote: boolean;
  shardOfUser(userId: string): number;
  /** Where a user's credit under this key is decided. */
  shardOfCredit(idempotencyKey: string, userId: string): number;
  /** The journal engine: the owner of any account. */
  shardOfAccount(account: AccountId): number;
  /** Where an entry's settlement is decided: its refund, or its prize. */
  shardOfEntrySettlement(userId: string, isPrize: boolean): number;
  /** Every user `op` names must belong to `shard`; the shard's ledger asserts it. */
  moveMoney<R extends MoneyResult>(shard: number, op: MoneyOp): Promise<R>;
  /** The journal engine: one call of the owners' money protocol, with its records. */
  ownerCall(shard: number, call: OwnedMoneyCall, facts?: BlindWrite[]): Promise<MoneyAnswer>;
  /** Resolves once LMDB shows everything the shards decided before the call. */
  readBarrier(): Promise<void>;
}
