// Runs on whichever thread calls it (main thread for credits and contests, shard workers for RFQs): every
// function that moves money runs inside the caller's LMDB write transaction, so LMDB's single writer lock
// is what serializes two movements on the same user, whichever thread they come from.
//
// This is the only module that changes a balance (STYLE: money only moves in ledger/). Amounts are BigInt
// micros in memory and decimal strings on disk, so no sum can silently lose precision. Each movement writes a
// journal entry in the same transaction. Invariant, asserted before every write and after every read:
//   available + reserved + at_risk = credited + pnl   and no amount is negative.
import assert from 'node:assert/strict';
import type { Store } from '../store/db.js';

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

export type MovementKind = 'credit' | 'reserve' | 'release' | 'fill' | 'settle_at_risk' | 'settle_reserved';

export interface JournalEntry {
  kind: MovementKind;
  /** The amounts of the movement, decimal micros. */
  amounts: Record<string, string>;
  /** What caused it: `rfq:<id>`, `contest:<id>:<entry>`, `credit:<key>`. */
  ref: string;
  atMs: number;
}

const ZERO: Balance = { availableMicros: 0n, reservedMicros: 0n, atRiskMicros: 0n, creditedMicros: 0n, pnlMicros: 0n };

export class Ledger {
  constructor(private readonly store: Store) {}

  private get balances() {
    return this.store.db<BalanceRecord>('balances');
  }

  getBalance(userId: string): Balance {
    const record = this.balances.get(userId);
    if (record === undefined) return { ...ZERO };
    const balance = fromRecord(record);
    assertInvariant(userId, balance);
    return balance;
  }

  /** Admin funding. Inside a transaction. */
  creditInTxn(userId: string, amountMicros: bigint, ref: string, atMs: number): Balance {
    assert.ok(amountMicros > 0n, 'credit must be positive');
    return this.apply(userId, 'credit', { amountMicros }, ref, atMs, (b) => {
      b.availableMicros += amountMicros;
      b.creditedMicros += amountMicros;
    });
  }

  /** Reserves `amountMicros` of available balance; returns false (and changes nothing) when too low. */
  tryReserveInTxn(userId: string, amountMicros: bigint, ref: string, atMs: number): boolean {
    assert.ok(amountMicros > 0n, 'reservation must be positive');
    if (this.getBalance(userId).availableMicros < amountMicros) return false;
    this.apply(userId, 'reserve', { amountMicros }, ref, atMs, (b) => {
      b.availableMicros -= amountMicros;
      b.reservedMicros += amountMicros;
    });
    return true;
  }

  /** Returns a reservation (or its unfilled part) to available. */
  releaseInTxn(userId: string, amountMicros: bigint, ref: string, atMs: number): void {
    if (amountMicros === 0n) return;
    this.apply(userId, 'release', { amountMicros }, ref, atMs, (b) => {
      b.reservedMicros -= amountMicros;
      b.availableMicros += amountMicros;
    });
  }

  /** A fill: the whole reservation leaves reserved; the filled part goes at risk, the rest back to available. */
  fillInTxn(userId: string, reservedMicros: bigint, filledMicros: bigint, ref: string, atMs: number): void {
    assert.ok(filledMicros > 0n && filledMicros <= reservedMicros, 'fill must be within its reservation');
    this.apply(userId, 'fill', { reservedMicros, filledMicros }, ref, atMs, (b) => {
      b.reservedMicros -= reservedMicros;
      b.atRiskMicros += filledMicros;
      b.availableMicros += reservedMicros - filledMicros;
    });
  }

  /** Settles a filled position: its stake leaves at-risk and the payout (0 when it lost) becomes available. */
  settleAtRiskInTxn(userId: string, stakeMicros: bigint, payoutMicros: bigint, ref: string, atMs: number): void {
    assert.ok(payoutMicros >= 0n, 'payout is never negative');
    this.apply(userId, 'settle_at_risk', { stakeMicros, payoutMicros }, ref, atMs, (b) => {
      b.atRiskMicros -= stakeMicros;
      b.availableMicros += payoutMicros;
      b.pnlMicros += payoutMicros - stakeMicros;
    });
  }

  /** Settles a reservation held until resolution (a contest entry): the stake is taken, the payout credited. */
  settleReservedInTxn(userId: string, stakeMicros: bigint, payoutMicros: bigint, ref: string, atMs: number): void {
    assert.ok(payoutMicros >= 0n, 'payout is never negative');
    this.apply(userId, 'settle_reserved', { stakeMicros, payoutMicros }, ref, atMs, (b) => {
      b.reservedMicros -= stakeMicros;
      b.availableMicros += payoutMicros;
      b.pnlMicros += payoutMicros - stakeMicros;
    });
  }

  /** The user's journal, oldest first (for audits and tests). */
  journal(userId: string): JournalEntry[] {
    const out: JournalEntry[] = [];
    const journal = this.store.db<JournalEntry>('journal');
    for (const { value } of journal.getRange({ start: `${userId}:`, end: `${userId}:~` })) out.push(value);
    return out;
  }

  private apply(
    userId: string,
    kind: MovementKind,
    amounts: Record<string, bigint>,
    ref: string,
    atMs: number,
    change: (b: Balance) => void,
  ): Balance {
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
    void this.store.db<JournalEntry>('journal').put(`${userId}:${String(journalSeq).padStart(12, '0')}`, entry);
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
