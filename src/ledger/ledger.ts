// The only module that changes a user's balance (STYLE: money only moves in ledger/). Writes run inside the
// caller's LMDB write transaction, on the thread of the balance's one owner: the RFQ shard that the user
// hashes to (rfq/ids.ts shardOfUser). Every writer is built for one owner and asserts, on every movement,
// that the user is its own: a movement decided anywhere else is a bug, not a race for LMDB's lock to settle.
// Reads (`readBalance`) are open to any thread.
//
// Money held for something is a **hold**, a record keyed by its reference (`rfq:<id>`, `contest:<id>:…`):
// a reservation (`reserved`) or a filled stake (`at_risk`). A release, fill or settlement names the hold's
// reference and moves exactly what the hold says, so no caller can release more than was reserved, and a
// hold that is gone (settled already) makes a repeated settlement a no-op.
//
// Amounts are BigInt micros in memory and decimal strings on disk. Each movement writes a journal entry in
// the same transaction. Invariant, asserted before every write and after every read:
//   available + reserved + at_risk = credited + pnl   and no amount is negative.
import assert from 'node:assert/strict';
import type { Db, Store } from '../store/db.js';

interface BalanceRecord {
  availableMicros: string;
  reservedMicros: string;
  atRiskMicros: string;
  /** Sum of every admin credit. */
  creditedMicros: string;
  /** Sum over settled positions and entries of (payout - stake); negative when the user has lost. */
  pnlMicros: string;
  /** Last journal sequence number used for this user. */
  journalSeq: number;
}

export interface Balance {
  availableMicros: bigint;
  reservedMicros: bigint;
  atRiskMicros: bigint;
  creditedMicros: bigint;
  pnlMicros: bigint;
}

/** Money held for one reference, until it is released, filled or settled. */
export interface HoldRecord {
  userId: string;
  bucket: 'reserved' | 'at_risk';
  amountMicros: string;
}

export type MovementKind = 'credit' | 'reserve' | 'release' | 'fill' | 'settle_at_risk' | 'settle_reserved';

export interface JournalEntry {
  kind: MovementKind;
  /** The amounts of the movement, decimal micros. */
  amounts: Record<string, string>;
  /** What caused it: `rfq:<id>`, `contest:<id>:<entry>`, `credit:<key>`. */
  ref: string;
  atMs: number;
}

/** Whose balances a Ledger may change: the users one RFQ shard owns. */
export interface BalanceOwner {
  readonly name: string;
  owns(userId: string): boolean;
}

const ZERO: Balance = { availableMicros: 0n, reservedMicros: 0n, atRiskMicros: 0n, creditedMicros: 0n, pnlMicros: 0n };

/** Any thread: the balance as last committed (what this thread's read snapshot holds). */
export function readBalance(store: Store, userId: string): Balance {
  const record = store.db<BalanceRecord>('balances').get(userId);
  if (record === undefined) return { ...ZERO };
  const balance = fromRecord(record);
  assertInvariant(userId, balance);
  return balance;
}

/** Any thread: a user's journal, oldest first (for audits and tests). */
export function readJournal(store: Store, userId: string): JournalEntry[] {
  const out: JournalEntry[] = [];
  for (const { value } of store.db<JournalEntry>('journal').getRange({ start: `${userId}:`, end: `${userId}:~` })) out.push(value);
  return out;
}

/** Any thread: the hold of a reference, if money is still held for it. */
export function readHold(store: Store, ref: string): HoldRecord | undefined {
  return store.db<HoldRecord>('holds').get(ref);
}

export class Ledger {
  private readonly balances: Db<BalanceRecord>;
  private readonly holds: Db<HoldRecord>;
  private readonly journal: Db<JournalEntry>;

  constructor(
    private readonly store: Store,
    private readonly owner: BalanceOwner,
  ) {
    this.balances = store.db('balances');
    this.holds = store.db('holds');
    this.journal = store.db('journal');
  }

  getBalance(userId: string): Balance {
    return readBalance(this.store, userId);
  }

  /** Admin funding. */
  creditInTxn(userId: string, amountMicros: bigint, ref: string, atMs: number): Balance {
    assert.ok(amountMicros > 0n, 'credit must be positive');
    return this.apply(userId, 'credit', { amountMicros }, ref, atMs, (b) => {
      b.availableMicros += amountMicros;
      b.creditedMicros += amountMicros;
    });
  }

  /**
   * Holds `amountMicros` of available balance for `ref`. The owner decided beforehand that the balance
   * covers it (rfq/shard-book.ts), so a shortfall here is a broken invariant and throws an AssertionError.
   */
  reserveInTxn(userId: string, amountMicros: bigint, ref: string, atMs: number): void {
    assert.ok(amountMicros > 0n, 'reservation must be positive');
    assert.equal(this.holds.get(ref), undefined, `${ref} is held already`);
    this.apply(userId, 'reserve', { amountMicros }, ref, atMs, (b) => {
      b.availableMicros -= amountMicros;
      b.reservedMicros += amountMicros;
    });
    void this.holds.put(ref, { userId, bucket: 'reserved', amountMicros: amountMicros.toString() });
  }

  /** Returns a reservation to available; returns what it released, or null when nothing is held for `ref`. */
  releaseInTxn(ref: string, atMs: number): bigint | null {
    const hold = this.takeHold(ref, 'reserved');
    if (hold === null) return null;
    this.apply(hold.userId, 'release', { amountMicros: hold.amountMicros }, ref, atMs, (b) => {
      b.reservedMicros -= hold.amountMicros;
      b.availableMicros += hold.amountMicros;
    });
    return hold.amountMicros;
  }

  /** A fill: the whole reservation leaves reserved; the filled part goes at risk (held), the rest is available. */
  fillInTxn(ref: string, filledMicros: bigint, atMs: number): void {
    const hold = this.takeHold(ref, 'reserved');
    assert.ok(hold !== null, `fill of ${ref}, which holds no reservation`);
    const reservedMicros = hold.amountMicros;
    assert.ok(filledMicros > 0n && filledMicros <= reservedMicros, 'fill must be within its reservation');
    this.apply(hold.userId, 'fill', { reservedMicros, filledMicros }, ref, atMs, (b) => {
      b.reservedMicros -= reservedMicros;
      b.atRiskMicros += filledMicros;
      b.availableMicros += reservedMicros - filledMicros;
    });
    void this.holds.put(ref, { userId: hold.userId, bucket: 'at_risk', amountMicros: filledMicros.toString() });
  }

  /**
   * Settles a filled position: its stake leaves at-risk and the payout (0 when it lost) becomes available.
   * False, and nothing moves, when the position was settled already.
   */
  settleAtRiskInTxn(ref: string, payoutMicros: bigint, atMs: number): boolean {
    assert.ok(payoutMicros >= 0n, 'payout is never negative');
    const hold = this.takeHold(ref, 'at_risk');
    if (hold === null) return false;
    const stakeMicros = hold.amountMicros;
    this.apply(hold.userId, 'settle_at_risk', { stakeMicros, payoutMicros }, ref, atMs, (b) => {
      b.atRiskMicros -= stakeMicros;
      b.availableMicros += payoutMicros;
      b.pnlMicros += payoutMicros - stakeMicros;
    });
    return true;
  }

  /**
   * Settles a reservation held until resolution (a contest entry): the stake is taken, the payout credited.
   * False, and nothing moves, when it was settled already.
   */
  settleReservedInTxn(ref: string, payoutMicros: bigint, atMs: number): boolean {
    assert.ok(payoutMicros >= 0n, 'payout is never negative');
    const hold = this.takeHold(ref, 'reserved');
    if (hold === null) return false;
    const stakeMicros = hold.amountMicros;
    this.apply(hold.userId, 'settle_reserved', { stakeMicros, payoutMicros }, ref, atMs, (b) => {
      b.reservedMicros -= stakeMicros;
      b.availableMicros += payoutMicros;
      b.pnlMicros += payoutMicros - stakeMicros;
    });
    return true;
  }

  /** Removes the hold of `ref` and returns it, or null when there is none; a hold in another bucket is a bug. */
  private takeHold(ref: string, bucket: HoldRecord['bucket']): { userId: string; amountMicros: bigint } | null {
    const hold = this.holds.get(ref);
    if (hold === undefined) return null;
    assert.equal(hold.bucket, bucket, `${ref} is held ${hold.bucket}, not ${bucket}`);
    void this.holds.remove(ref);
    return { userId: hold.userId, amountMicros: BigInt(hold.amountMicros) };
  }

  private apply(
    userId: string,
    kind: MovementKind,
    amounts: Record<string, bigint>,
    ref: string,
    atMs: number,
    change: (b: Balance) => void,
  ): Balance {
    assert.ok(this.owner.owns(userId), `${this.owner.name} may not move the money of user ${userId}`);
    const record = this.balances.get(userId);
    const balance = record === undefined ? { ...ZERO } : fromRecord(record);
    change(balance);
    assertInvariant(userId, balance);
    const journalSeq = (record?.journalSeq ?? 0) + 1;
    void this.balances.put(userId, toRecord(balance, journalSeq));
    const entry: JournalEntry = {
      kind,
      amounts: Object.fromEntries(Object.entries(amounts).map(([k, v]) => [k, v.toString()])),
      ref,
      atMs,
    };
    void this.journal.put(`${userId}:${String(journalSeq).padStart(12, '0')}`, entry);
    return balance;
  }
}

function fromRecord(r: BalanceRecord): Balance {
  return {
    availableMicros: BigInt(r.availableMicros),
    reservedMicros: BigInt(r.reservedMicros),
    atRiskMicros: BigInt(r.atRiskMicros),
    creditedMicros: BigInt(r.creditedMicros),
    pnlMicros: BigInt(r.pnlMicros),
  };
}

function toRecord(b: Balance, journalSeq: number): BalanceRecord {
  return {
    availableMicros: b.availableMicros.toString(),
    reservedMicros: b.reservedMicros.toString(),
    atRiskMicros: b.atRiskMicros.toString(),
    creditedMicros: b.creditedMicros.toString(),
    pnlMicros: b.pnlMicros.toString(),
    journalSeq,
  };
}

/** A broken invariant is a bug, not bad input: crash rather than carry on with wrong money. */
function assertInvariant(userId: string, b: Balance): void {
  assert.ok(b.availableMicros >= 0n, `negative available balance for ${userId}`);
  assert.ok(b.reservedMicros >= 0n, `negative reserved balance for ${userId}`);
  assert.ok(b.atRiskMicros >= 0n, `negative at-risk balance for ${userId}`);
  assert.equal(
    b.availableMicros + b.reservedMicros + b.atRiskMicros,
    b.creditedMicros + b.pnlMicros,
    `balance identity broken for ${userId}`,
  );
}
