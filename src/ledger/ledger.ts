// The only module that moves money (STYLE: money only moves in ledger/). Every movement is a double-entry
// transfer (accounts.ts) written inside the caller's LMDB write transaction, together with the fact that
// causes it, so a crash keeps both or neither.
//
// Who may decide a debit of an account's `available` (docs/money.md, "Owners"):
//   - a user's: only the RFQ shard the user hashes to (rfq/ids.ts shardOfUser), which decides it in memory
//     first (rfq/shard-book.ts). Every Ledger is built for one owner and asserts it on every such debit.
//   - a maker's or the protocol's: whoever writes, inside the transaction, against the latest commit: LMDB's
//     one writer orders every transaction of every thread, so a check made inside one is exact. Those
//     debits return false, and write nothing, when the account cannot cover them.
// Money already held (a hold: a reservation, a filled stake, a maker's locked liability, a contest's pool, a
// pending withdrawal) moves by its reference, exactly the amount the hold says; a hold that is gone was
// settled already, which makes every settlement idempotent. Credits need no decision.
//
// Amounts are BigInt micros in memory and decimal strings on disk. No bucket is ever negative: a movement that
// would make one negative is a bug, and throws (the transaction rolls back) rather than carry on.
import assert from 'node:assert/strict';
import type { Db, Store } from '../store/db.js';
import {
  bucketsOf,
  journalKey,
  journalRange,
  lockRef,
  makerAccount,
  poolRef,
  PROTOCOL,
  transferId,
  userAccount,
  userIdOf,
  type AccountId,
  type AccountRecord,
  type HoldRecord,
  JournalRow,
  type Side,
  type TransferRecord,
  type PositionOutcome,
} from '../records/ledger.js';
import type { Bucket, TransferKind } from '../contract/ledger-kinds.js';
import { recordCheck } from '../store/record-check.js';
import { table } from '../store/records.js';
import { clampKey } from '../store/key-range.js';

/** Whose `available` a Ledger may debit: the users one RFQ shard owns (none on the main thread). */
export interface BalanceOwner {
  readonly name: string;
  owns(userId: string): boolean;
}

/** The main thread's ledger: it debits makers and the protocol (checked in the transaction), never a user. */
export const NO_USERS: BalanceOwner = { name: 'the main thread', owns: () => false };

export interface UserBalance {
  availableMicros: bigint;
  reservedMicros: bigint;
  atRiskMicros: bigint;
  pendingWithdrawalMicros: bigint;
}

/** How a filled position ended (contract section 11, Settlement). */
/** Any thread: an account's buckets as last committed (this thread's read snapshot), zeros included. */
export function readAccount(store: Store, account: AccountId): Record<Bucket, bigint> {
  const record = table(store, 'accounts').get(account);
  const out = {} as Record<Bucket, bigint>;
  for (const bucket of bucketsOf(account)) out[bucket] = BigInt(record?.[bucket] ?? '0');
  return out;
}

/** Any thread: an account's available micros as last committed (the shard's cover check, per quote). */
export function readAvailable(store: Store, account: AccountId): bigint {
  return BigInt(table(store, 'accounts').get(account)?.available ?? '0');
}

export function readUserBalance(store: Store, userId: string): UserBalance {
  const b = readAccount(store, userAccount(userId));
  return {
    availableMicros: b.available,
    reservedMicros: b.reserved,
    atRiskMicros: b.at_risk,
    pendingWithdrawalMicros: b.pending_withdrawal,
  };
}

/** Any thread: the hold of a reference, if money is still held for it. */
export function readHold(store: Store, ref: string): HoldRecord | undefined {
  return table(store, 'holds').get(ref);
}

const checkJournalRow = recordCheck('accountJournal', JournalRow);

/** Any thread: a user account's journal, oldest first, checked (tests; the route pages it: journalNewestFirst). */
export function readJournal(store: Store, account: AccountId): JournalRow[] {
  return [...table(store, 'accountJournal').getRange(journalRange(account))].map(({ key, value }) => checkJournalRow.value(key, value));
}

/**
 * Any thread: an account's journal rows newest first, each checked, from `fromKey` (a journalKey of the
 * account, inclusive: GET /v1/user/journal resumes inside a row) or from the newest when null. Lazy: a page
 * reads only the rows it lists.
 */
export function* journalNewestFirst(store: Store, account: AccountId, fromKey: string | null): Generator<{ key: string; row: JournalRow }> {
  const range = journalRange(account);
  for (const { key, value } of table(store, 'accountJournal').getRange({
    start: fromKey === null ? range.end : clampKey(fromKey, range.start, range.end),
    end: range.start,
    reverse: true,
  })) {
    yield { key, row: checkJournalRow.value(key, value) };
  }
}

export class Ledger {
  private readonly accounts: Db<AccountRecord>;
  private readonly transfers: Db<TransferRecord>;
  private readonly holds: Db<HoldRecord>;
  private readonly journal: Db<JournalRow>;

  constructor(
    store: Store,
    private readonly owner: BalanceOwner,
  ) {
    this.accounts = table(store, 'accounts');
    this.transfers = table(store, 'transfers');
    this.holds = table(store, 'holds');
    this.journal = table(store, 'accountJournal');
  }

  /** What the account has available: inside a transaction, as of the latest commit. */
  availableOf(account: AccountId): bigint {
    return BigInt(this.accounts.get(account)?.available ?? '0');
  }

  // ---- funding ----

  credit(account: AccountId, amountMicros: bigint, ref: string, atMs: number): void {
    this.transfer('credit', ref, 'credit', null, { account, bucket: 'available' }, amountMicros, atMs);
  }

  // ---- a user's RFQs and contest entries ----

  /** Holds `amountMicros` of the user's available for `ref`; the owner decided beforehand that it covers it. */
  reserve(userId: string, amountMicros: bigint, ref: string, atMs: number): void {
    const account = userAccount(userId);
    this.transfer('reserve', ref, 'reserve', { account, bucket: 'available' }, { account, bucket: 'reserved' }, amountMicros, atMs);
    this.openHold(ref, { account, bucket: 'reserved' }, amountMicros);
  }

  /** Returns a reservation to available; what it released, or null when nothing is held for `ref`. */
  release(ref: string, atMs: number): bigint | null {
    const hold = this.takeHold(ref, 'reserved');
    if (hold === null) return null;
    this.transfer(
      'release',
      ref,
      'release',
      { account: hold.account, bucket: 'reserved' },
      { account: hold.account, bucket: 'available' },
      hold.amountMicros,
      atMs,
    );
    return hold.amountMicros;
  }

  /**
   * A fill (contract section 11, Fills): the filled wager goes at risk and the rest of the reservation back to
   * available; the liability leaves the maker's available for its locked bucket, held under `<ref>:lock`.
   * False, and nothing written, when the maker's available does not cover the liability now: other fills
   * took it since the quote arrived, and the caller goes on to the next quote.
   */
  fill(ref: string, filledMicros: bigint, makerAddress: string, liabilityMicros: bigint, atMs: number): boolean {
    const maker = makerAccount(makerAddress);
    assert.ok(liabilityMicros >= 0n, 'a liability is never negative');
    if (this.availableOf(maker) < liabilityMicros) return false;
    const hold = this.holds.get(ref);
    assert.ok(hold !== undefined && hold.bucket === 'reserved', `fill of ${ref}, which holds no reservation`);
    const reservedMicros = BigInt(hold.amountMicros);
    assert.ok(filledMicros > 0n && filledMicros <= reservedMicros, 'a fill is within its reservation');
    const { account } = hold;
    this.transfer('fill', ref, 'fill', { account, bucket: 'reserved' }, { account, bucket: 'at_risk' }, filledMicros, atMs);
    const restMicros = reservedMicros - filledMicros;
    if (restMicros > 0n)
      this.transfer('release', ref, 'release', { account, bucket: 'reserved' }, { account, bucket: 'available' }, restMicros, atMs);
    // The reservation's hold becomes the stake's, under the same reference: one write, not a remove and a put.
    void this.holds.put(ref, { account, bucket: 'at_risk', amountMicros: filledMicros.toString() });
    if (liabilityMicros > 0n) {
      this.transfer(
        'lock',
        ref,
        'lock',
        { account: maker, bucket: 'available' },
        { account: maker, bucket: 'locked' },
        liabilityMicros,
        atMs,
      );
      this.openHold(lockRef(ref), { account: maker, bucket: 'locked' }, liabilityMicros);
    }
    return true;
  }

  /**
   * Settles a filled position, both sides: lost, the stake and the liability go to the maker; won, both to
   * the taker (payout_micros in all); voided, each side gets its own back. False, and nothing moves, when it
   * was settled already (its at-risk hold is gone).
   */
  settlePosition(ref: string, makerAddress: string, outcome: PositionOutcome, atMs: number): boolean {
    const stake = this.takeHold(ref, 'at_risk');
    if (stake === null) return false;
    const liability = this.takeHold(lockRef(ref), 'locked');
    const taker: Side = { account: stake.account, bucket: 'available' };
    const maker: Side = { account: makerAccount(makerAddress), bucket: 'available' };
    this.transfer(
      'settle_stake',
      ref,
      'settle_stake',
      { account: stake.account, bucket: 'at_risk' },
      outcome === 'lost' ? maker : taker,
      stake.amountMicros,
      atMs,
    );
    if (liability !== null) {
      assert.equal(liability.account, maker.account, `${ref} locked another maker's collateral`);
      this.transfer(
        'settle_liability',
        ref,
        'settle_liability',
        { account: maker.account, bucket: 'locked' },
        outcome === 'won' ? taker : maker,
        liability.amountMicros,
        atMs,
      );
    }
    return true;
  }

  // ---- contests: the protocol's pool ----

  /**
   * A new contest's prize pool leaves the protocol's available for committed, held under the contest's pool
   * reference (with 0 too: the stakes are collected into it at settlement). False when the protocol is short.
   */
  openPool(contestId: string, amountMicros: bigint, atMs: number): boolean {
    const ref = poolRef(contestId);
    // A negative pool would move nothing yet open a negative hold: `committed` would differ from its holds.
    assert.ok(amountMicros >= 0n, `a prize pool is never negative (${ref})`);
    if (this.availableOf(PROTOCOL) < amountMicros) return false;
    if (amountMicros > 0n)
      this.transfer(
        'pool',
        ref,
        'pool',
        { account: PROTOCOL, bucket: 'available' },
        { account: PROTOCOL, bucket: 'committed' },
        amountMicros,
        atMs,
      );
    this.openHold(ref, { account: PROTOCOL, bucket: 'committed' }, amountMicros);
    return true;
  }

  /** An entry's reserved stake joins its contest's pot. False when it was collected (or refunded) already. */
  collect(entryRef: string, contestId: string, atMs: number): boolean {
    const stake = this.takeHold(entryRef, 'reserved');
    if (stake === null) return false;
    this.transfer(
      'collect',
      entryRef,
      'collect',
      { account: stake.account, bucket: 'reserved' },
      { account: PROTOCOL, bucket: 'committed' },
      stake.amountMicros,
      atMs,
    );
    this.adjustHold(poolRef(contestId), stake.amountMicros);
    return true;
  }

  /** A winner's prize, out of its contest's pot; written once per entry, with the settled entry. */
  payPrize(entryRef: string, contestId: string, userId: string, amountMicros: bigint, atMs: number): void {
    this.adjustHold(poolRef(contestId), -amountMicros);
    this.transfer(
      'prize',
      entryRef,
      'prize',
      { account: PROTOCOL, bucket: 'committed' },
      { account: userAccount(userId), bucket: 'available' },
      amountMicros,
      atMs,
    );
  }

  /** What the contest did not pay goes back to the protocol's available; null when it was closed already. */
  closePool(contestId: string, atMs: number): bigint | null {
    const ref = poolRef(contestId);
    const pool = this.takeHold(ref, 'committed');
    if (pool === null) return null;
    if (pool.amountMicros > 0n)
      this.transfer(
        'pool_return',
        ref,
        'pool_return',
        { account: PROTOCOL, bucket: 'committed' },
        { account: PROTOCOL, bucket: 'available' },
        pool.amountMicros,
        atMs,
      );
    return pool.amountMicros;
  }

  // ---- withdrawals ----

  /**
   * available → pending_withdrawal, held under the withdrawal's reference. A user's owner decided it
   * beforehand; a maker's is checked here: false when its available is short.
   */
  withdraw(account: AccountId, amountMicros: bigint, ref: string, atMs: number): boolean {
    if (userIdOf(account) === null && this.availableOf(account) < amountMicros) return false;
    this.transfer(
      'withdraw',
      ref,
      'request',
      { account, bucket: 'available' },
      { account, bucket: 'pending_withdrawal' },
      amountMicros,
      atMs,
    );
    this.openHold(ref, { account, bucket: 'pending_withdrawal' }, amountMicros);
    return true;
  }

  /** The operator's decision: the money left (complete) or comes back (fail). False when decided already. */
  finishWithdrawal(ref: string, isCompleted: boolean, atMs: number): boolean {
    const hold = this.takeHold(ref, 'pending_withdrawal');
    if (hold === null) return false;
    const from: Side = { account: hold.account, bucket: 'pending_withdrawal' };
    if (isCompleted) this.transfer('withdraw_complete', ref, 'complete', from, null, hold.amountMicros, atMs);
    else this.transfer('withdraw_fail', ref, 'fail', from, { account: hold.account, bucket: 'available' }, hold.amountMicros, atMs);
    return true;
  }

  /** Migration only (boot/migrations.ts): a balance carried over from before this ledger, as from the world. */
  opening(side: Side, amountMicros: bigint, ref: string, atMs: number): void {
    this.transfer('opening', ref, `opening:${side.bucket}`, null, side, amountMicros, atMs);
  }

  // ---- the primitives ----

  /** One double-entry transfer, with both sides' account records and each account's journal row. */
  private transfer(
    kind: TransferKind,
    ref: string,
    step: string,
    debit: Side | null,
    credit: Side | null,
    amountMicros: bigint,
    atMs: number,
  ): void {
    assert.ok(amountMicros > 0n, `a transfer moves a positive amount (${kind} of ${ref})`);
    assert.ok(debit !== null || credit !== null, 'a transfer has at least one side in the ledger');
    const id = transferId(ref, step);
    assert.equal(this.transfers.get(id), undefined, `transfer ${id} was written already`);
    if (debit !== null) this.assertMayDebit(debit);
    // Each account the transfer touches, with its buckets' changes: a transfer between two buckets of one
    // account (a reservation, a fill, a release, a maker's lock) reads and writes its record once.
    const changes = new Map<AccountId, Array<[Bucket, bigint]>>();
    if (debit !== null) changes.set(debit.account, [[debit.bucket, -amountMicros]]);
    if (credit !== null) {
      const same = changes.get(credit.account);
      if (same === undefined) changes.set(credit.account, [[credit.bucket, amountMicros]]);
      else same.push([credit.bucket, amountMicros]);
    }
    for (const [account, deltas] of changes) this.change(account, deltas);
    void this.transfers.put(id, { id, kind, debit, credit, amountMicros: amountMicros.toString(), ref, atMs });
    // Only users read a journal (GET /v1/user/journal). A maker's rows would be one more page per maker that
    // filled in each commit, read by no route (a maker's fills are GET /v1/mm/fills); the transfers keep
    // every movement of every account, and the ledger check reads those.
    for (const [account, deltas] of changes) {
      if (userIdOf(account) === null) continue;
      const rows: Array<[Bucket, string]> = deltas.map(([bucket, delta]) => [bucket, delta.toString()]);
      void this.journal.put(journalKey(account, atMs, id), { transferId: id, kind, ref, atMs, deltas: rows });
    }
  }

  private assertMayDebit({ account, bucket }: Side): void {
    const userId = userIdOf(account);
    if (bucket !== 'available' || userId === null) return;
    assert.ok(this.owner.owns(userId), `${this.owner.name} may not spend the money of user ${userId}`);
  }

  private change(account: AccountId, deltas: ReadonlyArray<[Bucket, bigint]>): void {
    const buckets = bucketsOf(account);
    const record = this.accounts.get(account);
    // Every bucket of the kind, in one order: one record shape per kind of account for lmdb-js's shared
    // structures (store/db.ts), however the buckets were first touched.
    const written: AccountRecord = {};
    for (const name of buckets) written[name] = record?.[name] ?? '0';
    for (const [bucket, delta] of deltas) {
      assert.ok(buckets.includes(bucket), `${account} has no ${bucket} bucket`);
      const next = BigInt(written[bucket]!) + delta;
      assert.ok(next >= 0n, `${account} ${bucket} would be negative`);
      written[bucket] = next.toString();
    }
    void this.accounts.put(account, written);
  }

  private openHold(ref: string, side: Side, amountMicros: bigint): void {
    assert.notEqual(side.bucket, 'available');
    assert.equal(this.holds.get(ref), undefined, `${ref} is held already`);
    void this.holds.put(ref, { account: side.account, bucket: side.bucket as HoldRecord['bucket'], amountMicros: amountMicros.toString() });
  }

  private adjustHold(ref: string, deltaMicros: bigint): void {
    const hold = this.holds.get(ref);
    assert.ok(hold !== undefined, `${ref} holds nothing`);
    const next = BigInt(hold.amountMicros) + deltaMicros;
    assert.ok(next >= 0n, `${ref} would hold a negative amount`);
    void this.holds.put(ref, { account: hold.account, bucket: hold.bucket, amountMicros: next.toString() });
  }

  /** Removes the hold of `ref` and returns it, or null when there is none; a hold in another bucket is a bug. */
  private takeHold(ref: string, bucket: HoldRecord['bucket']): { account: AccountId; amountMicros: bigint } | null {
    const hold = this.holds.get(ref);
    if (hold === undefined) return null;
    assert.equal(hold.bucket, bucket, `${ref} is held ${hold.bucket}, not ${bucket}`);
    void this.holds.remove(ref);
    return { account: hold.account, amountMicros: BigInt(hold.amountMicros) };
  }
}
