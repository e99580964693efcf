// Main thread. Withdrawals (contract section 11): a request moves the amount from the account's available to
// pending_withdrawal (a hold under `withdrawal:<id>`); the operator then completes it (the money has left the
// system) or fails it (it comes back to available). Both ends are final.
//
// Who decides the request's debit: a user's, its shard (the 'withdraw' money op, with the records below in
// the same transaction); a maker's, this thread, inside the transaction (ledger.ts). The operator's end moves
// only the hold, so this thread writes it for every account.
//
// The records and their indexes: withdrawal-records.ts. They are read through WithdrawalReads, because in a
// cluster the account's owner writes them on its own node, with the money.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import type { RecordWrite } from './money-ops.js';
import type { Store } from '../store/db.js';
import { withdrawalRef, type AccountId } from '../records/ledger.js';
import type { Ledger } from './ledger.js';
import type { BalanceOwners } from './owners.js';
import { applyWrites, putRecord, table, type BlindWrite } from '../store/records.js';
import type { WithdrawalRecord, WithdrawalStatus } from '../records/withdrawals.js';
import {
  accountWithdrawalKey,
  newWithdrawalId,
  statusWithdrawalKey,
  withdrawalKeyOf,
  type WithdrawalPage,
  type WithdrawalReads,
} from './withdrawal-records.js';

export interface WithdrawalRequest {
  account: AccountId;
  /** For a user's account: its id, whose shard decides. */
  userId: string | null;
  amountMicros: bigint;
  destination: string;
  idempotencyKey: string;
}

export class Withdrawals {
  /** The journal engine: makers' requests on their way to their owner, by key (requestOfOwner). */
  private readonly requesting = new Map<string, Promise<unknown>>();
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly owners: BalanceOwners,
    /** The main thread's ledger (NO_USERS). */
    private readonly ledger: Ledger,
    private readonly reads: WithdrawalReads,
  ) {}

  /** The request; `isReplay` when its key was used for exactly this request (200, nothing moved). */
  async request(req: WithdrawalRequest): Promise<{ record: WithdrawalRecord; isReplay: boolean }> {
    const replay = await this.findReplay(req);
    if (replay !== null) return { record: replay, isReplay: true };
    this.store.assertRoom();
    const createdAtMs = this.clock.nowMs();
    const owner = req.userId === null ? this.owners.shardOfAccount(req.account) : this.owners.shardOfUser(req.userId);
    const record: WithdrawalRecord = {
      withdrawalId: newWithdrawalId(createdAtMs, owner, randomBytes(5)),
      account: req.account,
      amountMicros: req.amountMicros.toString(),
      destination: req.destination,
      status: 'pending',
      createdAtMs,
      finishedAtMs: null,
    };
    const key = withdrawalKeyOf(req.account, req.idempotencyKey);
    const writes: RecordWrite[] = [
      { db: 'withdrawals', key: record.withdrawalId, value: record },
      {
        db: 'withdrawalKeys',
        key,
        value: { withdrawalId: record.withdrawalId, amountMicros: record.amountMicros, destination: record.destination },
      },
      { db: 'accountWithdrawals', key: accountWithdrawalKey(record), value: true },
      { db: 'withdrawalsByStatus', key: statusWithdrawalKey('pending', record), value: true },
    ];
    const ref = withdrawalRef(record.withdrawalId);
    try {
      if (req.userId !== null) {
        await this.owners.moveMoney(this.owners.shardOfUser(req.userId), {
          op: 'withdraw',
          userId: req.userId,
          amountMicros: record.amountMicros,
          ref,
          writes,
          uniqueKeys: [{ db: 'withdrawalKeys', key }],
          atMs: createdAtMs,
        });
      } else if (this.owners.engine === 'journal') {
        await this.requestOfOwner(req, ref, writes);
      } else {
        await this.store.transact(() => {
          if (table(this.store, 'withdrawalKeys').get(key) !== undefined) throw new ApiError('IDEMPOTENCY_CONFLICT');
          if (!this.ledger.withdraw(req.account, req.amountMicros, ref, createdAtMs)) throw new ApiError('INSUFFICIENT_BALANCE');
          for (const w of writes) putRecord(this.store, w);
        });
      }
    } catch (err) {
      // Two requests with one key raced: the one that lost answers as a replay if it asked the same.
      const raced = err instanceof ApiError && err.code === 'IDEMPOTENCY_CONFLICT' ? await this.findReplay(req) : null;
      if (raced !== null) return { record: raced, isReplay: true };
      throw err;
    }
    return { record, isReplay: false };
  }

  /**
   * The operator's end. The same end again answers the record unchanged; the other end 409 WITHDRAWAL_FINAL;
   * an unknown id 404. The status and the money change in one transaction, checked inside it.
   */
  finish(withdrawalId: string, isCompleted: boolean): Promise<WithdrawalRecord> {
    const target: WithdrawalStatus = isCompleted ? 'completed' : 'failed';
    const atMs = this.clock.nowMs();
    if (this.owners.engine === 'journal') return this.finishByOwner(withdrawalId, target, atMs);
    return this.store.transact(() => {
      const record = table(this.store, 'withdrawals').get(withdrawalId);
      if (record === undefined) throw new ApiError('WITHDRAWAL_NOT_FOUND');
      if (record.status === target) return record;
      if (record.status !== 'pending') throw new ApiError('WITHDRAWAL_FINAL');
      const moved = this.ledger.finishWithdrawal(withdrawalRef(withdrawalId), isCompleted, atMs);
      if (!moved) throw new Error(`withdrawal ${withdrawalId} is pending but holds nothing`);
      const finished = finishedRecord(record, target, atMs);
      applyWrites(this.store, finishWrites(record, finished));
      return finished;
    });
  }

  /**
   * The journal engine: a maker's request is decided by the maker's owner shard with its records. Two
   * requests with one key cannot both pass: the second waits here for the first, then finds its key.
   */
  private async requestOfOwner(req: WithdrawalRequest, ref: string, writes: BlindWrite[]): Promise<void> {
    const { account, amountMicros } = req;
    const key = withdrawalKeyOf(account, req.idempotencyKey);
    // However many wait, one asks at a time: each finds the key of the one before it, if that one succeeded.
    for (let earlier = this.requesting.get(key); earlier !== undefined; earlier = this.requesting.get(key)) {
      await earlier.catch(() => undefined);
    }
    // Registered before its first await (the key's read): a request that comes meanwhile waits for this one.
    const asking = (async () => {
      if ((await this.reads.key(account, req.idempotencyKey)) !== null) throw new ApiError('IDEMPOTENCY_CONFLICT');
      return this.owners.ownerCall(this.owners.shardOfAccount(account), { op: 'withdraw', account, amountMicros, ref }, writes);
    })();
    this.requesting.set(key, asking);
    try {
      const answer = await asking;
      if (!answer.ok) throw new ApiError(answer.code === 'IDEMPOTENCY_CONFLICT' ? 'IDEMPOTENCY_CONFLICT' : 'INSUFFICIENT_BALANCE');
    } finally {
      if (this.requesting.get(key) === asking) this.requesting.delete(key);
    }
  }

  /**
   * The journal engine: the account's owner decides the end, moving the money with the record's new status,
   * once (its hold is the proof). This thread's read of the record only answers early: two ends sent at once
   * both read it pending, and the owner takes the first; the second moves and writes nothing, and is told
   * whether it repeats the first (engine/owner.ts finish_withdrawal).
   */
  private async finishByOwner(withdrawalId: string, target: WithdrawalStatus, atMs: number): Promise<WithdrawalRecord> {
    const record = await this.reads.withdrawal(withdrawalId);
    if (record === null) throw new ApiError('WITHDRAWAL_NOT_FOUND');
    if (record.status === target) return record;
    if (record.status !== 'pending') throw new ApiError('WITHDRAWAL_FINAL');
    const finished = finishedRecord(record, target, atMs);
    const call = { op: 'finish_withdrawal', ref: withdrawalRef(withdrawalId), isCompleted: target === 'completed' } as const;
    const answer = await this.owners.ownerCall(this.owners.shardOfAccount(record.account), call, finishWrites(record, finished));
    if (!answer.ok) {
      if (answer.code === 'IDEMPOTENCY_CONFLICT') throw new ApiError('WITHDRAWAL_FINAL'); // the other end came first
      throw new Error(`withdrawal ${withdrawalId}: its owner refused its end (${answer.code})`);
    }
    if (answer.isMoved === true) return finished;
    // The same end came first: its record, which the owner's LMDB holds by now (a read waits for what it decided).
    return (await this.reads.withdrawal(withdrawalId))!;
  }

  /** An account's own withdrawals, newest first, after the key `before` (exclusive). */
  pageOfAccount(account: AccountId, limit: number, before: string | null): Promise<WithdrawalPage> {
    return this.reads.ofAccount(account, limit, before);
  }

  /** The operator's queue of one status, oldest first, after the key `after` (exclusive). */
  pageOfStatus(status: WithdrawalStatus, limit: number, after: string | null): Promise<WithdrawalPage> {
    return this.reads.ofStatus(status, limit, after);
  }

  private async findReplay(req: WithdrawalRequest): Promise<WithdrawalRecord | null> {
    const previous = await this.reads.key(req.account, req.idempotencyKey);
    if (previous === null) return null;
    if (previous.amountMicros !== req.amountMicros.toString() || previous.destination !== req.destination)
      throw new ApiError('IDEMPOTENCY_CONFLICT');
    return this.reads.withdrawal(previous.withdrawalId);
  }
}

function finishedRecord(record: WithdrawalRecord, status: WithdrawalStatus, atMs: number): WithdrawalRecord {
  return {
    withdrawalId: record.withdrawalId,
    account: record.account,
    amountMicros: record.amountMicros,
    destination: record.destination,
    status,
    createdAtMs: record.createdAtMs,
    finishedAtMs: atMs,
  };
}

/** A withdrawal's end: its record, and its place in the operator's queue moves to its new status. */
function finishWrites(pending: WithdrawalRecord, finished: WithdrawalRecord): BlindWrite[] {
  return [
    { db: 'withdrawals', key: finished.withdrawalId, value: finished },
    { db: 'withdrawalsByStatus', key: statusWithdrawalKey('pending', pending), value: undefined },
    { db: 'withdrawalsByStatus', key: statusWithdrawalKey(finished.status, finished), value: true },
  ];
}
