// Inside an RFQ shard: the lmdb engine (PARLAYD_ENGINE=lmdb). The shard is a synchronous LMDB client: its
// decisions are written in its group commit (store/group-commit.ts) through its own Ledger, by RfqWrites,
// ShardBook and ShardMoney, which this puts behind the actor's seam (rfq-durability.ts).
import assert from 'node:assert/strict';
import type { TimerClock } from '../lib/clock.js';
import { makerAccount } from '../records/ledger.js';
import { readAvailable } from '../ledger/ledger.js';
import type { Store } from '../store/db.js';
import type { ActiveRfq } from './active-rfq.js';
import type { FillRecord } from '../records/fills.js';
import type { CreateRfq } from './messages.js';
import type { ChannelPoint, MoneyOp, MoneyResult } from '../ledger/money-ops.js';
import { rfqRef, type RfqRecord } from '../records/rfqs.js';
import { readRfq } from './rfq-records.js';
import { RfqWrites } from './rfq-writes.js';
import type { RfqDurability, WrittenEnd } from './rfq-durability.js';
import { UNCOVERED } from './rfq-durability.js';
import { ShardBook, shardOwner } from './shard-book.js';
import { ShardMoney } from './shard-money.js';

export class LmdbDurability implements RfqDurability {
  readonly #book: ShardBook;
  readonly #money: ShardMoney;
  readonly #writes: RfqWrites;
  readonly #reported = { commits: 0, transactions: 0 };

  constructor(
    private readonly store: Store,
    shard: number,
    shardCount: number,
    clock: TimerClock,
  ) {
    this.#book = new ShardBook(store, shardOwner(shard, shardCount));
    this.#money = new ShardMoney(store, this.#book);
    this.#writes = new RfqWrites(store, this.#book.ledger, clock);
  }

  failInterrupted(): Promise<number> {
    return this.#writes.failInterrupted(this.#book.owner);
  }

  replayKey(replayKey: string) {
    return this.#writes.replayKeyRecord(replayKey);
  }

  readRfq(requestId: string): RfqRecord | undefined {
    return readRfq(this.store, requestId);
  }

  /** The book counts the debit until its transaction settles, so two creates of one turn cannot spend one balance. */
  create(command: CreateRfq, created: RfqRecord, rfq: ActiveRfq, holdMs: number): Promise<number> | null {
    const settleDebit = this.#book.tryDebit(command.userId, BigInt(command.wagerMicros));
    if (settleDebit === null) return null;
    return this.#writes
      .commitCreate(rfq, holdMs, () => this.#writes.createInTxn(command, created, rfq.phase !== 'closing'))
      .finally(settleDebit);
  }

  async release(rfq: ActiveRfq, ended: RfqRecord): Promise<WrittenEnd | null> {
    const written = await this.#writes.persistTerminal(rfq, () => {
      const releasedMicros = this.#book.ledger.release(rfqRef(ended.requestId), ended.terminalAtMs!);
      assert.equal(releasedMicros, rfq.wagerMicros, `RFQ ${ended.requestId} held another amount than its wager`);
      return ended;
    });
    assert.ok(written !== UNCOVERED);
    return written;
  }

  fill(rfq: ActiveRfq, completed: RfqRecord, fill: FillRecord, areLegsOpen: () => boolean) {
    return this.#writes.persistTerminal(rfq, () => this.#writes.fillInTxn(completed, fill, areLegsOpen));
  }

  makerAvailable(makerAddress: string): bigint {
    return readAvailable(this.store, makerAccount(makerAddress));
  }

  money(op: MoneyOp): Promise<MoneyResult> {
    return this.#money.run(op);
  }

  barrier(): Promise<ChannelPoint[]> {
    return Promise.resolve([]); // every answer followed its commit; no channels
  }

  takeCommitCounts() {
    const counts = this.store.groupCommitCounts;
    const commits = (counts?.commits ?? 0) - this.#reported.commits;
    const transactions = (counts?.transactions ?? 0) - this.#reported.transactions;
    this.#reported.commits += commits;
    this.#reported.transactions += transactions;
    return { commits, transactions };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
