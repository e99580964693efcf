// Main thread. The contests' way to the balances' owners (ledger/owners.ts BalanceOwners).
//
// In one process the owners write into this process's LMDB, and what they write with the money (an entry
// with its contest's new count, a settled entry, a contest's record with its pool) is what the contests read:
// every call passes straight through. In a cluster the owners are on shard nodes, each writing its own LMDB,
// while the contests' records are this process's, which runs their lanes: so each record a call carries is
// written here too, once its owner has answered.
//
// A call whose answer never came (its node gone, nats-server down, or this process killed before it heard)
// may or may not have moved money. The two that create something are kept as a doubt, durable before the
// call leaves: an entry's stake (without its entry here, the stake would stay reserved with nothing to
// settle it) and a new contest's pool (the protocol's money committed to a contest nobody could see). A doubt
// is settled by sending the same call again, which its owner decides once (by the hold's reference: a repeat
// is answered as the first was), never by giving up on it: first on the contest's lane before any later task
// of that contest, and at start. A settlement's calls need no doubt: its progress is durable here and a
// batch sent again moves nothing twice.
import type { Logger } from 'pino';
import { ApiError, overloaded } from '../lib/errors.js';
import type { BalanceOwners } from '../ledger/owners.js';
import type { MoneyAnswer, MoneyOp, MoneyResult, OwnedMoneyCall, RecordWrite } from '../ledger/money-ops.js';
import { poolRef } from '../records/ledger.js';
import type { ContestDoubtRecord, ContestRecord } from '../records/contests.js';
import type { Store } from '../store/db.js';
import { applyWrites, table, type BlindWrite } from '../store/records.js';

/** Refusals an owner decides for good: nothing moved, nothing to send again. */
const REFUSALS: ReadonlySet<string> = new Set(['INSUFFICIENT_BALANCE', 'IDEMPOTENCY_CONFLICT']);

const isRefusal = (err: unknown): boolean => err instanceof ApiError && REFUSALS.has(err.code);

/**
 * A doubt settled by a refusal is settled: nothing moved. Its refusal was its own caller's (answered 503 long
 * ago), not that of the task that settled it on the lane.
 */
function ignoreRefusal(err: unknown): void {
  if (!isRefusal(err)) throw err;
}

export class ContestOwners implements BalanceOwners {
  /** Doubts being settled, by reference: a second asker waits for the same resend. */
  readonly #settling = new Map<string, Promise<ContestRecord | null>>();

  constructor(
    private readonly store: Store,
    private readonly owners: BalanceOwners,
    private readonly log: Logger,
  ) {}

  get engine() {
    return this.owners.engine;
  }

  get areShardsRemote(): boolean {
    return this.owners.areShardsRemote;
  }

  shardOfUser(userId: string): number {
    return this.owners.shardOfUser(userId);
  }

  shardOfCredit(idempotencyKey: string, userId: string): number {
    return this.owners.shardOfCredit(idempotencyKey, userId);
  }

  shardOfAccount(account: Parameters<BalanceOwners['shardOfAccount']>[0]): number {
    return this.owners.shardOfAccount(account);
  }

  shardOfEntrySettlement(userId: string, isPrize: boolean): number {
    return this.owners.shardOfEntrySettlement(userId, isPrize);
  }

  readBarrier(): Promise<void> {
    return this.owners.readBarrier();
  }

  async moveMoney<R extends MoneyResult>(shard: number, op: MoneyOp): Promise<R> {
    if (!this.areShardsRemote) return this.owners.moveMoney<R>(shard, op);
    if (op.op === 'reserve') {
      const contest = op.writes.find((write) => write.db === 'contests');
      if (contest === undefined) throw new Error(`reserve ${op.ref} carries no contest`); // a caller's bug
      const doubt: ContestDoubtRecord = {
        kind: 'entry',
        contestId: contest.key,
        shard,
        userId: op.userId,
        amountMicros: op.amountMicros,
        atMs: op.atMs,
        writes: op.writes,
        uniqueKeys: op.uniqueKeys,
      };
      await this.store.transact(() => void table(this.store, 'contestDoubts').put(op.ref, doubt));
      await this.#settle(op.ref, doubt);
      return { op: 'reserve' } as R;
    }
    const result = await this.owners.moveMoney<R>(shard, op);
    // Each entry as this batch settles it, whether this call or an earlier one moved its money.
    if (op.op === 'settle_entries')
      await this.store.transact(() =>
        applyWrites(
          this.store,
          op.entries.map((entry) => entry.write),
        ),
      );
    return result;
  }

  async ownerCall(shard: number, call: OwnedMoneyCall, facts: BlindWrite[] = []): Promise<MoneyAnswer> {
    if (!this.areShardsRemote) return this.owners.ownerCall(shard, call, facts);
    if (call.op === 'open_pool') {
      const doubt: ContestDoubtRecord = {
        kind: 'pool',
        contestId: call.contestId,
        shard,
        userId: null,
        amountMicros: call.amountMicros.toString(),
        atMs: 0,
        writes: facts,
        uniqueKeys: [],
      };
      const ref = poolRef(call.contestId);
      await this.store.transact(() => void table(this.store, 'contestDoubts').put(ref, doubt));
      const opened = await this.#settle(ref, doubt);
      return opened === null ? { ok: false, code: 'INSUFFICIENT_BALANCE' } : { ok: true };
    }
    const answer = await this.owners.ownerCall(shard, call, facts);
    if (answer.ok) await this.store.transact(() => applyWrites(this.store, facts));
    return answer;
  }

  /**
   * Every doubt of `contestId` settled, or OVERLOADED (503) while one cannot be: on the contest's lane, before
   * a task reads the contest.
   */
  async settleDoubtsOf(contestId: string): Promise<void> {
    if (!this.areShardsRemote) return;
    const doubts = [...table(this.store, 'contestDoubts').getRange()].filter(({ value }) => value.contestId === contestId);
    for (const { key, value } of doubts) await this.#settle(key, value).catch(ignoreRefusal);
  }

  /**
   * At start: every entry's doubt settled (each on its contest's lane, given by `onLane`), and the contests
   * whose pools were in doubt and are open after all. A doubt that still cannot be settled stays for later.
   */
  async settleEveryDoubt(onLane: (contestId: string, task: () => Promise<void>) => Promise<void>): Promise<ContestRecord[]> {
    if (!this.areShardsRemote) return [];
    const opened: ContestRecord[] = [];
    for (const { key, value } of [...table(this.store, 'contestDoubts').getRange()]) {
      try {
        if (value.kind === 'entry') await onLane(value.contestId, () => this.#settle(key, value).then(() => undefined, ignoreRefusal));
        else {
          const contest = await this.#settle(key, value);
          if (contest !== null) opened.push(contest);
        }
      } catch (err) {
        this.log.warn({ err, ref: key }, 'a contest call still without its answer: settled on its next task or start');
      }
    }
    return opened;
  }

  /**
   * Sends the doubt's call (again) and settles it by the answer: its records written here and the doubt gone
   * together; a refusal, the doubt gone (and the refusal thrown, for an entry); no answer, the doubt kept and
   * OVERLOADED thrown. A pool's answer is its contest, or null when refused.
   */
  #settle(ref: string, doubt: ContestDoubtRecord): Promise<ContestRecord | null> {
    let settling = this.#settling.get(ref);
    if (settling === undefined) {
      settling = this.#send(ref, doubt).finally(() => this.#settling.delete(ref));
      this.#settling.set(ref, settling);
    }
    return settling;
  }

  async #send(ref: string, doubt: ContestDoubtRecord): Promise<ContestRecord | null> {
    const writes = doubt.writes as BlindWrite[];
    let isDone: boolean;
    try {
      isDone = doubt.kind === 'entry' ? await this.#sendEntry(ref, doubt) : await this.#sendPool(doubt);
    } catch (err) {
      if (isRefusal(err)) {
        await this.store.transact(() => void table(this.store, 'contestDoubts').remove(ref));
        throw err;
      }
      throw err instanceof ApiError && err.code === 'OVERLOADED' ? err : overloaded();
    }
    await this.store.transact(() => {
      if (isDone) applyWrites(this.store, writes);
      void table(this.store, 'contestDoubts').remove(ref);
    });
    if (!isDone) return null;
    return (writes.find((write) => write.db === 'contests')?.value as ContestRecord | undefined) ?? null;
  }

  async #sendEntry(ref: string, doubt: ContestDoubtRecord): Promise<boolean> {
    await this.owners.moveMoney(doubt.shard, {
      op: 'reserve',
      userId: doubt.userId!,
      amountMicros: doubt.amountMicros,
      ref,
      writes: doubt.writes as RecordWrite[],
      uniqueKeys: doubt.uniqueKeys as RecordWrite[],
      atMs: doubt.atMs,
    });
    return true;
  }

  async #sendPool(doubt: ContestDoubtRecord): Promise<boolean> {
    const call = { op: 'open_pool', contestId: doubt.contestId, amountMicros: BigInt(doubt.amountMicros) } as const;
    const answer = await this.owners.ownerCall(doubt.shard, call, doubt.writes as BlindWrite[]);
    return answer.ok;
  }
}
