// Main thread. What the services that move users' money without owning it (contests, admin credits, position
// settlement) need of the balances' owners, the RFQ shards: which shard owns a user, and a way to ask it to
// decide and write a movement (rfq/messages.ts MoneyOp). The shard pool is the implementation.
import type { MoneyOp, MoneyResult } from '../rfq/messages.js';

export interface BalanceOwners {
  shardOfUser(userId: string): number;
  /** Every user `op` names must belong to `shard`; the shard's ledger asserts it. */
  moveMoney<R extends MoneyResult>(shard: number, op: MoneyOp): Promise<R>;
}
