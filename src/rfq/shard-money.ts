// Inside one RFQ shard. The movements of its users' money that do not come from its own RFQs: admin credits,
// contest entries and their settlement, and the settlement of filled positions (messages.ts MoneyOp). Each
// is decided here, by the balance's owner, and written in one transaction with whatever it goes with (the
// credit's key, the entry, the settled fill), so a crash leaves all of it or none.
//
// Settlements are idempotent: a position's at-risk hold, an entry's reserved hold (collected or refunded) and
// a settled entry's record each prove that the step was done, and were written with it, so a repeated batch
// (a retried resolve, a restart mid-settlement) moves nothing and writes nothing.
import assert from 'node:assert/strict';
import { ApiError } from '../lib/errors.js';
import { readStoredMarket } from '../markets/market-table.js';
import type { Store } from '../store/db.js';
import { creditRef, userAccount } from '../records/ledger.js';
import { settledFill } from '../records/fills.js';
import type { EntrySettlement, MoneyOp, MoneyResult, RecordWrite, UserDebit } from '../ledger/money-ops.js';
import { legOutcome, positionOutcome, positionPayout } from './positions.js';
import { rfqRef } from '../records/rfqs.js';
import { readFill, readRfq, settledPositionWrites } from './rfq-records.js';
import type { ShardBook } from './shard-book.js';
import { readHold } from '../ledger/ledger.js';

import { checkCreditKey, readCreditKey } from '../ledger/credit-keys.js';
import type { CreditRecord } from '../records/credits.js';
import { applyWrites, putRecord, table } from '../store/records.js';

export class ShardMoney {
  constructor(
    private readonly store: Store,
    private readonly book: ShardBook,
  ) {}

  run(op: MoneyOp): Promise<MoneyResult> {
    switch (op.op) {
      case 'credit':
        return this.credit(op);
      case 'reserve':
        return this.debit(op, () => this.book.ledger.reserve(op.userId, BigInt(op.amountMicros), op.ref, op.atMs)).then(() => ({
          op: 'reserve',
        }));
      case 'withdraw':
        return this.debit(op, () => this.book.ledger.withdraw(userAccount(op.userId), BigInt(op.amountMicros), op.ref, op.atMs)).then(
          () => ({
            op: 'withdraw',
          }),
        );
      case 'collect_entries':
        return this.store.transact(() => ({ op: 'collect_entries', collected: this.collectInTxn(op.contestId, op.refs, op.atMs) }));
      case 'settle_entries':
        return this.store.transact(() => ({ op: 'settle_entries', settled: this.settleEntriesInTxn(op.contestId, op.entries, op.atMs) }));
      case 'settle_positions':
        return this.store.transact(() => ({ op: 'settle_positions', settled: this.settlePositionsInTxn(op.requestIds, op.atMs) }));
      case 'owner_call':
        throw new Error("owner_call is the journal engine's; this shard runs the lmdb engine");
      default: {
        const unknown: never = op;
        throw new Error(`unknown money op ${JSON.stringify(unknown)}`);
      }
    }
  }

  /**
   * Same key and content: no second credit (isReplay). Same key, other content: 409. The key's record is
   * read inside the transaction: on one machine LMDB's writer lock orders two writers crediting one key
   * (docs/architecture.md says what a shard on another machine would need instead).
   */
  private credit(op: Extract<MoneyOp, { op: 'credit' }>): Promise<MoneyResult> {
    const account = userAccount(op.userId);
    const record: CreditRecord = { account, wallet: op.wallet, amountMicros: op.amountMicros, atMs: op.atMs };
    // A replay writes nothing, so it answers on a full store too; the transaction reads the key again.
    if (readCreditKey(this.store, op.idempotencyKey) === undefined) this.store.assertRoom();
    return this.store.transact(() => {
      const isReplay = checkCreditKey(this.store, op.idempotencyKey, record);
      if (!isReplay) this.book.ledger.credit(account, BigInt(op.amountMicros), creditRef(op.idempotencyKey), op.atMs);
      return { op: 'credit', isReplay };
    });
  }

  /** A debit of a user's available (an entry's stake, a withdrawal): decided now against the book, written with its records. */
  private async debit(op: UserDebit, move: () => unknown): Promise<void> {
    this.store.assertRoom(); // before the book counts the debit: a refusal leaves nothing to settle
    const settle = this.book.tryDebit(op.userId, BigInt(op.amountMicros));
    if (settle === null) throw new ApiError('INSUFFICIENT_BALANCE');
    try {
      await this.store.transact(() => {
        // Read inside the transaction: the user's records are this shard's to write, so nothing can race it.
        for (const { db, key } of op.uniqueKeys)
          if (table(this.store, db).get(key) !== undefined) throw new ApiError('IDEMPOTENCY_CONFLICT');
        move();
        this.write(op.writes);
      });
    } finally {
      settle();
    }
  }

  private collectInTxn(contestId: string, refs: readonly string[], atMs: number): number {
    let collected = 0;
    for (const ref of refs) if (this.book.ledger.collect(ref, contestId, atMs)) collected++;
    return collected;
  }

  /**
   * Each entry once: a refund needs its stake still held (void); a prize needs the entry not yet settled on
   * disk (its stake was collected by the first sweep: contests/settlement.ts).
   */
  private settleEntriesInTxn(contestId: string, entries: readonly EntrySettlement[], atMs: number): number {
    let settled = 0;
    for (const entry of entries) {
      const stored = table(this.store, entry.write.db).get(entry.write.key);
      assert.ok(stored !== undefined, `entry ${entry.ref} is not stored`);
      if (stored.settlement !== null) continue; // settled by an earlier attempt, with its money
      if (entry.payoutMicros === null) {
        assert.ok(this.book.ledger.release(entry.ref, atMs) !== null, `refund of ${entry.ref}, which holds nothing`);
      } else {
        assert.equal(readHold(this.store, entry.ref), undefined, `prize of ${entry.ref} before its stake was collected`);
        const payout = BigInt(entry.payoutMicros);
        if (payout > 0n) this.book.ledger.payPrize(entry.ref, contestId, entry.userId, payout, atMs);
      }
      this.write([entry.write]);
      settled++;
    }
    return settled;
  }

  /**
   * Each position whose outcome is decided (markets read inside this transaction, so a resolution committed
   * just before is seen) is settled once, both sides: the ledger's at-risk hold is its proof of not being
   * settled yet.
   */
  private settlePositionsInTxn(requestIds: readonly string[], atMs: number): number {
    let settled = 0;
    for (const requestId of requestIds) {
      const record = readRfq(this.store, requestId);
      if (record?.fill == null) continue;
      const fill = readFill(this.store, record.fill.makerAddress, requestId);
      if (fill === undefined || fill.settledPaidMicros !== null) continue;
      const outcomes = record.legs.map((leg) => legOutcome(leg, readStoredMarket(this.store, leg.marketId)));
      const outcome = positionOutcome(outcomes);
      if (outcome === null) continue;
      const paid = positionPayout(outcome, BigInt(fill.filledWagerMicros), BigInt(fill.payoutMicros));
      const isMoved = this.book.ledger.settlePosition(rfqRef(requestId), fill.makerAddress, outcome, atMs);
      assert.ok(isMoved, `position ${requestId} is unsettled but holds nothing at risk`);
      applyWrites(this.store, settledPositionWrites(record, settledFill(fill, paid, outcome, atMs)));
      settled++;
    }
    return settled;
  }

  private write(writes: readonly RecordWrite[]): void {
    for (const write of writes) putRecord(this.store, write);
  }
}
