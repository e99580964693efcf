// Inside one RFQ shard. The movements of its users' money that do not come from its own RFQs: admin credits,
// contest entries and their settlement, and the settlement of filled positions (messages.ts MoneyOp). Each
// is decided here, by the balance's owner, and written in one transaction with whatever it goes with (the
// credit's key, the entry, the settled fill), so a crash leaves all of it or none.
//
// Settlements are idempotent through the ledger's holds: a hold that is gone was settled already, and its
// records were written with it, so a repeated batch (a retried resolve, a restart mid-settlement) moves
// nothing and writes nothing.
import assert from 'node:assert/strict';
import { ApiError } from '../errors.js';
import { marketKey } from '../markets/markets.js';
import type { Market } from '../schemas/markets.js';
import type { Store } from '../store/db.js';
import { fillKey, settledFill, type FillRecord } from './fills.js';
import type { EntrySettlement, MoneyOp, MoneyResult, RecordWrite } from './messages.js';
import { legOutcome, positionPayout } from './positions.js';
import { rfqRef, type RfqRecord } from './records.js';
import type { ShardBook } from './shard-book.js';

/** The record of a credit's idempotency key (contract section 4). */
export interface CreditRecord {
  wallet: string;
  amountMicros: string;
  userId: string;
  atMs: number;
}

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
        return this.reserve(op);
      case 'settle_entries':
        return this.store.transact(() => ({ op: 'settle_entries', settled: this.settleEntriesInTxn(op.entries, op.atMs) }));
      case 'settle_positions':
        return this.store.transact(() => ({ op: 'settle_positions', settled: this.settlePositionsInTxn(op.requestIds, op.atMs) }));
      default: {
        const unknown: never = op;
        throw new Error(`unknown money op ${JSON.stringify(unknown)}`);
      }
    }
  }

  /**
   * Same key and content: no second credit (isReplay). Same key, other content: 409. The key's record is
   * read inside the transaction: on one machine LMDB's writer lock orders two shards crediting one key for
   * different users (docs/architecture.md says what a shard on another machine would need instead).
   */
  private credit(op: Extract<MoneyOp, { op: 'credit' }>): Promise<MoneyResult> {
    const credits = this.store.db<CreditRecord>('credits');
    // A replay writes nothing, so it answers on a full store too; the transaction reads the key again.
    if (credits.get(op.idempotencyKey) === undefined) this.store.assertRoom();
    return this.store.transact(() => {
      const previous = credits.get(op.idempotencyKey);
      const isReplay = previous !== undefined;
      if (isReplay) {
        if (previous.wallet !== op.wallet || previous.amountMicros !== op.amountMicros) throw new ApiError('IDEMPOTENCY_CONFLICT');
      } else {
        this.book.ledger.creditInTxn(op.userId, BigInt(op.amountMicros), `credit:${op.idempotencyKey}`, op.atMs);
        void credits.put(op.idempotencyKey, { wallet: op.wallet, amountMicros: op.amountMicros, userId: op.userId, atMs: op.atMs });
      }
      const balance = this.book.ledger.getBalance(op.userId);
      return {
        op: 'credit',
        isReplay,
        balance: {
          availableMicros: balance.availableMicros.toString(),
          reservedMicros: balance.reservedMicros.toString(),
          atRiskMicros: balance.atRiskMicros.toString(),
        },
      };
    });
  }

  /** A contest entry's stake: decided now against the book, written with the entry's records. */
  private async reserve(op: Extract<MoneyOp, { op: 'reserve' }>): Promise<MoneyResult> {
    const amountMicros = BigInt(op.amountMicros);
    this.store.assertRoom(); // before the book counts the debit: a refusal leaves nothing to settle
    const settle = this.book.tryDebit(op.userId, amountMicros);
    if (settle === null) throw new ApiError('INSUFFICIENT_BALANCE');
    try {
      await this.store.transact(() => {
        // Read inside the transaction: the user's records are this shard's to write, so nothing can race it.
        for (const { db, key } of op.uniqueKeys) if (this.store.db(db).get(key) !== undefined) throw new ApiError('IDEMPOTENCY_CONFLICT');
        this.book.ledger.reserveInTxn(op.userId, amountMicros, op.ref, op.atMs);
        this.write(op.writes);
      });
    } finally {
      settle();
    }
    return { op: 'reserve' };
  }

  private settleEntriesInTxn(entries: readonly EntrySettlement[], atMs: number): number {
    let settled = 0;
    for (const entry of entries) {
      const isMoved =
        entry.payoutMicros === null
          ? this.book.ledger.releaseInTxn(entry.ref, atMs) !== null
          : this.book.ledger.settleReservedInTxn(entry.ref, BigInt(entry.payoutMicros), atMs);
      if (!isMoved) continue; // settled by an earlier attempt, together with its records
      this.write(entry.writes);
      settled++;
    }
    return settled;
  }

  /**
   * Each position whose outcome is decided (markets read inside this transaction, so a resolution committed
   * just before is seen) is settled once: the ledger's at-risk hold is its proof of not being settled yet.
   */
  private settlePositionsInTxn(requestIds: readonly string[], atMs: number): number {
    const rfqs = this.store.db<RfqRecord>('rfqs');
    const fills = this.store.db<FillRecord>('fills');
    const markets = this.store.db<Market>('markets');
    const positions = this.store.db<true>('openPositions');
    let settled = 0;
    for (const requestId of requestIds) {
      const record = rfqs.get(requestId);
      if (record?.fill == null) continue;
      const key = fillKey(record.fill.makerAddress, requestId);
      const fill = fills.get(key);
      if (fill === undefined || fill.settledPaidMicros !== null) continue;
      const outcomes = record.legs.map((leg) => legOutcome(leg, markets.get(marketKey(leg.marketId))));
      const paid = positionPayout(outcomes, BigInt(fill.filledWagerMicros), BigInt(fill.payoutMicros));
      if (paid === null) continue;
      const isMoved = this.book.ledger.settleAtRiskInTxn(rfqRef(requestId), paid, atMs);
      assert.ok(isMoved, `position ${requestId} is unsettled but holds nothing at risk`);
      void fills.put(key, settledFill(fill, paid));
      for (const leg of record.legs) void positions.remove(`${marketKey(leg.marketId)}:${requestId}`);
      settled++;
    }
    return settled;
  }

  private write(writes: readonly RecordWrite[]): void {
    for (const { db, key, value } of writes) void this.store.db(db).put(key, value);
  }
}
