// Inside one RFQ shard (or the in-process transport of tests). The shard's book of the balances it owns: the
// one place where a debit of one of its users' money is decided (an RFQ's reservation, a contest entry).
//
// The shard decides a debit when the message arrives, but writes it at the end of the turn (group commit),
// or up to `createCoalesceMs` later for a held create (shard.ts commitCreate). A debit decided and not yet
// committed is therefore counted here until its transaction has settled, so two debits decided in the same
// turn cannot both spend the same balance. Only debits are counted, never pending credits: a commit can run
// in another order than the decisions (a held create commits after later ones), and a decision that relied
// on money not yet written could then drive a balance negative on disk. This is the owner's own write-ahead
// state, not a copy of anyone else's: no other thread moves these balances (ledger.ts asserts it).
import assert from 'node:assert/strict';
import type { Store } from '../store/db.js';
import { Ledger, readUserBalance, type BalanceOwner } from '../ledger/ledger.js';
import { shardOfUser } from './ids.js';

/** The owner of the users hashed to `shard` of `shardCount`. */
export function shardOwner(shard: number, shardCount: number): BalanceOwner {
  return { name: `shard ${shard} of ${shardCount}`, owns: (userId) => shardOfUser(userId, shardCount) === shard };
}

export class ShardBook {
  readonly ledger: Ledger;
  /** Per user: debits decided and not yet committed (or refused at commit). Empty between turns at rest. */
  readonly #pendingDebits = new Map<string, bigint>();

  constructor(
    private readonly store: Store,
    readonly owner: BalanceOwner,
  ) {
    this.ledger = new Ledger(store, owner);
  }

  /** What a new debit of the user may spend now: committed available less the debits on their way to disk. */
  spendableMicros(userId: string): bigint {
    return readUserBalance(this.store, userId).availableMicros - (this.#pendingDebits.get(userId) ?? 0n);
  }

  /**
   * Decides a debit. When the balance covers it, counts it until the returned `settle` is called (once, when
   * the transaction that writes it has committed or failed) and returns that; else null and nothing changes.
   */
  tryDebit(userId: string, amountMicros: bigint): (() => void) | null {
    assert.ok(this.owner.owns(userId), `${this.owner.name} may not decide for user ${userId}`);
    assert.ok(amountMicros > 0n, 'a debit is positive');
    if (this.spendableMicros(userId) < amountMicros) return null;
    this.#pendingDebits.set(userId, (this.#pendingDebits.get(userId) ?? 0n) + amountMicros);
    let isSettled = false;
    return () => {
      assert.ok(!isSettled, 'a debit settles once');
      isSettled = true;
      const left = this.#pendingDebits.get(userId)! - amountMicros;
      assert.ok(left >= 0n);
      if (left === 0n) this.#pendingDebits.delete(userId);
      else this.#pendingDebits.set(userId, left);
    };
  }

  /** Users with debits on their way to disk (a gauge, and a test's check that none leaks). */
  get pendingUsers(): number {
    return this.#pendingDebits.size;
  }
}
