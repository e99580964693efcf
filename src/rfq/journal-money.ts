// Inside an RFQ shard on the journal engine. The movements of money that are not an RFQ's own (messages.ts
// MoneyOp), as calls of the shard's owner (engine/owner.ts) with the records they go with as facts: durable
// together or not at all. The same rules as the lmdb engine's (shard-money.ts): a user's debit decided by its
// owner against its balance in memory, settlements idempotent (a hold is the proof a step was not done yet, a
// settled record that it was), a credit's replay decided by its key's owner.
//
// Every answer leaves only once LMDB (the read model) holds what the op decided: the main thread's reads that
// follow (the contest lane's next task, a balance after a credit, a withdrawal's record) see it.
import assert, { AssertionError } from 'node:assert/strict';
import { ApiError, overloaded } from '../lib/errors.js';
import { creditRef, userAccount } from '../records/ledger.js';
import type { OwnerRuntime } from '../engine/owner-runtime.js';
import type { MoneyAnswer, MoneyCall } from '../ledger/money-ops.js';
import { readStoredMarket } from '../markets/market-table.js';
import type { Store } from '../store/db.js';
import type { BlindWrite } from '../store/records.js';
import { fillKey, settledFill } from '../records/fills.js';
import type { ChannelPoint, EntrySettlement, MoneyOp, MoneyResult, UserDebit } from '../ledger/money-ops.js';
import { legOutcome, positionOutcome, positionPayout } from './positions.js';
import { rfqRef } from '../records/rfqs.js';
import { settledPositionWrites } from './rfq-records.js';

/**
 * A prize refused POOL_SHORT (collected stakes still on their way to the pool's shard) is asked again `delayMs`
 * later, up to `tries` times; then the batch fails OVERLOADED and the contest's settlement is continued later.
 */
export interface PoolShortRetry {
  delayMs: number;
  tries: number;
}

export const POOL_SHORT_RETRY: PoolShortRetry = { delayMs: 10, tries: 500 };

export class JournalMoney {
  constructor(
    private readonly runtime: OwnerRuntime,
    private readonly store: Store,
    private readonly poolShortRetry: PoolShortRetry = POOL_SHORT_RETRY,
  ) {}

  async money(op: MoneyOp): Promise<MoneyResult> {
    const result = await this.#decide(op);
    await this.runtime.barrier();
    return result;
  }

  #decide(op: MoneyOp): Promise<MoneyResult> {
    switch (op.op) {
      case 'credit':
        return this.#credit(op);
      case 'reserve':
        return this.#debit(op, { op: 'reserve', userId: op.userId, amountMicros: BigInt(op.amountMicros), ref: op.ref }).then(() => ({
          op: 'reserve',
        }));
      case 'withdraw':
        return this.#debit(op, {
          op: 'withdraw',
          account: userAccount(op.userId),
          amountMicros: BigInt(op.amountMicros),
          ref: op.ref,
        }).then(() => ({ op: 'withdraw' }));
      case 'collect_entries':
        return this.#collect(op.contestId, op.refs);
      case 'settle_entries':
        return this.#settleEntries(op.contestId, op.entries);
      case 'settle_positions':
        return this.#settlePositions(op.requestIds, op.atMs);
      case 'owner_call':
        if (op.call.op === 'credit')
          return this.#credited(op.call).then(({ answer, transit }) => ({ op: 'owner_call', answer, ...transit }));
        return this.#answer(this.runtime.withEnding(op.call), op.facts).then((answer) => ({ op: 'owner_call', answer }));
      default: {
        const unknown: never = op;
        throw new Error(`unknown money op ${JSON.stringify(unknown)}`);
      }
    }
  }

  async #credit(op: Extract<MoneyOp, { op: 'credit' }>): Promise<MoneyResult> {
    // A replay moves nothing, so it answers on a full store too.
    if (!this.runtime.isCreditKeyUsed(op.idempotencyKey)) this.store.assertRoom();
    assert.equal(
      this.runtime.ownerOf(creditRef(op.idempotencyKey)),
      this.runtime.book.self,
      `credit key ${op.idempotencyKey} sent to another owner`,
    );
    const call: MoneyCall = {
      op: 'credit',
      account: userAccount(op.userId),
      amountMicros: BigInt(op.amountMicros),
      key: op.idempotencyKey,
    };
    const { answer, transit } = await this.#credited(call);
    if (!answer.ok) throw new ApiError(answer.code === 'IDEMPOTENCY_CONFLICT' ? 'IDEMPOTENCY_CONFLICT' : 'INSUFFICIENT_BALANCE');
    return { op: 'credit', isReplay: answer.isReplay === true, ...transit };
  }

  /**
   * A credit decided by its key's owner, here. When the account lives on another owner, the money goes on
   * to it on the channel: `transit` names that command, so the caller's answer can wait until it is applied
   * there (a credit's answer shows the account's new balance).
   */
  async #credited(call: Extract<MoneyCall, { op: 'credit' }>): Promise<{ answer: MoneyAnswer; transit: { transit?: ChannelPoint } }> {
    const owner = this.runtime.ownerOf(call.account);
    const made = this.runtime.call(call);
    if (made === 'overloaded') throw overloaded();
    const self = this.runtime.book.self;
    const decided = made.decided;
    // A replay waits too: its credit's money went on earlier on the same channel, and may still be on its way
    // (the first request's answer not back yet). Waiting for all sent so far covers it.
    const isMovedElsewhere = owner !== self && decided !== 'pending' && decided.ok;
    const transit = isMovedElsewhere ? { transit: { owner, from: self, seq: this.runtime.book.outbox(owner).nextSeq - 1 } } : {};
    return { answer: await made.answer, transit };
  }

  /** A debit of a user's available with its records; `uniqueKeys` read as this owner last wrote them. */
  async #debit(op: UserDebit, call: MoneyCall): Promise<void> {
    this.store.assertRoom();
    // The same debit sent again (a cluster's caller that never heard its answer, contests/contest-owners.ts)
    // finds its own hold, and its keys written by itself: the owner answers it as the first (engine/owner.ts).
    const isRepeat = this.runtime.book.holds.has(op.ref);
    if (!isRepeat && op.uniqueKeys.some(({ db, key }) => this.runtime.read(db, key) !== undefined)) {
      // The key's earlier request may be decided here and not yet in LMDB, where the caller looks for its
      // replay (an identical request is answered as one): the refusal waits until LMDB holds it.
      await this.runtime.barrier();
      throw new ApiError('IDEMPOTENCY_CONFLICT');
    }
    const answer = await this.#answer(call, op.writes);
    if (!answer.ok) throw new ApiError(answer.code === 'IDEMPOTENCY_CONFLICT' ? 'IDEMPOTENCY_CONFLICT' : 'INSUFFICIENT_BALANCE');
  }

  async #collect(contestId: string, refs: readonly string[]): Promise<MoneyResult> {
    const answers = await Promise.all(refs.map((ref) => this.#answer({ op: 'collect', contestId, ref })));
    return { op: 'collect_entries', collected: answers.filter((answer) => answer.ok && answer.isMoved === true).length };
  }

  /**
   * Each entry once. A refund releases the stake on the entrant's owner; a prize (0 too: it marks the entry
   * paid) leaves the pool on the protocol's owner, so the main thread sends prizes there (shard-pool.ts).
   * A prize the pool still cannot cover after its retries fails the batch OVERLOADED: the contest's progress
   * then stays before this batch, and its settlement continues later (resolution.ts retryFinish) with the
   * entries paid here already marked settled.
   */
  async #settleEntries(contestId: string, entries: readonly EntrySettlement[]): Promise<MoneyResult> {
    const settling: Array<Promise<boolean>> = [];
    for (const entry of entries) {
      const stored = this.runtime.read(entry.write.db, entry.write.key);
      // A prize is paid by the protocol's owner, which in a cluster holds no record of another node's users'
      // entries: the pool's book of prizes paid is what pays it once there (engine/owner.ts pay_prize).
      const isOthersPrize = entry.payoutMicros !== null && !this.runtime.book.owns(userAccount(entry.userId));
      assert.ok(stored !== undefined || isOthersPrize, `entry ${entry.ref} is not stored`);
      if (stored !== undefined && stored.settlement !== null) continue; // settled by an earlier attempt, with its money
      const facts: BlindWrite[] = [entry.write];
      if (entry.payoutMicros === null) {
        settling.push(
          this.#answer({ op: 'release', ref: entry.ref }, facts).then((answer) => {
            assert.ok(answer.ok && answer.isMoved === true, `refund of ${entry.ref}, which holds nothing`);
            return true;
          }),
        );
      } else {
        const call: MoneyCall = {
          op: 'pay_prize',
          contestId,
          ref: entry.ref,
          userId: entry.userId,
          amountMicros: BigInt(entry.payoutMicros),
        };
        settling.push(
          this.#untilPoolHolds(call, facts).then((answer) => {
            if (!answer.ok) {
              assert.equal(answer.code, 'POOL_SHORT', `prize of ${entry.ref} refused ${answer.code}`);
              throw overloaded();
            }
            return answer.isMoved === true;
          }),
        );
      }
    }
    // Every call of the batch ends before its outcome is told (a refusal must not leave the others in flight).
    const outcomes = await Promise.allSettled(settling);
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    // A broken invariant first: it must still stop the process.
    if (failures.length > 0) throw failures.find((err) => err instanceof AssertionError) ?? failures[0];
    return { op: 'settle_entries', settled: outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value).length };
  }

  /** Each position whose outcome is decided, once, both sides; markets read at LMDB's latest commit. */
  async #settlePositions(requestIds: readonly string[], atMs: number): Promise<MoneyResult> {
    this.store.root.resetReadTxn();
    const settling: Array<Promise<MoneyAnswer>> = [];
    for (const requestId of requestIds) {
      const record = this.runtime.read('rfqs', requestId);
      if (record?.fill == null) continue;
      const fill = this.runtime.read('fills', fillKey(record.fill.makerAddress, requestId));
      if (fill === undefined || fill.settledPaidMicros !== null) continue;
      const outcome = positionOutcome(record.legs.map((leg) => legOutcome(leg, readStoredMarket(this.store, leg.marketId))));
      if (outcome === null) continue;
      const paid = positionPayout(outcome, BigInt(fill.filledWagerMicros), BigInt(fill.payoutMicros));
      const facts = settledPositionWrites(record, settledFill(fill, paid, outcome, atMs));
      settling.push(this.#answer({ op: 'settle', ref: rfqRef(requestId), makerAddress: fill.makerAddress, outcome }, facts));
    }
    const answers = await Promise.all(settling);
    for (const answer of answers) assert.ok(answer.ok && answer.isMoved === true, 'an unsettled position held nothing at risk');
    return { op: 'settle_positions', settled: answers.length };
  }

  /** POOL_SHORT: stakes collected on other shards have not reached the pool yet; they are on their channels. */
  async #untilPoolHolds(call: MoneyCall, facts: readonly BlindWrite[]): Promise<MoneyAnswer> {
    for (let tries = 1; ; tries++) {
      const answer = await this.#answer(call, facts);
      if (answer.ok || answer.code !== 'POOL_SHORT' || tries >= this.poolShortRetry.tries) return answer;
      await new Promise((resolve) => setTimeout(resolve, this.poolShortRetry.delayMs));
    }
  }

  #answer(call: MoneyCall, facts: readonly BlindWrite[] = []): Promise<MoneyAnswer> {
    const made = this.runtime.call(call, facts);
    if (made === 'overloaded') return Promise.reject(overloaded());
    return made.answer;
  }
}
