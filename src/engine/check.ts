// Any thread; pure. The ledger check across owners: every bucket recomputed from the transfers in the owners'
// journals and compared with each owner's state, each half of each transfer applied once and by the owner of
// its side, money in transit between owners counted, conservation against the world (credits in, completed
// withdrawals out), and each held bucket equal to its holds. The owners' states and journals must be taken
// consistently (each owner's state is the result of exactly its journal's records).
import { bucketsOf, type AccountId } from '../records/ledger.js';
import type { Bucket } from '../contract/ledger-kinds.js';
import type { Book } from './book.js';
import type { Effect, Transfer } from './effects.js';

export interface OwnerRecords {
  book: Book;
  /** Every record of the owner's journal since it began, in order. */
  records: ReadonlyArray<readonly Effect[]>;
}

export interface LedgerCheck {
  isOk: boolean;
  differences: string[];
  /** Money whose debit half is applied and whose credit half is not yet: on a channel between owners. */
  inTransitMicros: bigint;
  worldInMicros: bigint;
  worldOutMicros: bigint;
  totalMicros: bigint;
}

interface Halves {
  transfer: Transfer;
  debits: number[];
  credits: number[];
}

export function checkOwners(owners: readonly OwnerRecords[]): LedgerCheck {
  const differences: string[] = [];
  const halves = new Map<string, Halves>();
  let totalMicros = 0n;
  for (const { book, records } of owners) {
    const recomputed = new Map<AccountId, Partial<Record<Bucket, bigint>>>();
    const add = (account: AccountId, bucket: Bucket, deltaMicros: bigint) => {
      const buckets = recomputed.get(account) ?? {};
      buckets[bucket] = (buckets[bucket] ?? 0n) + deltaMicros;
      recomputed.set(account, buckets);
    };
    for (const record of records) {
      for (const effect of record) {
        if (effect.t !== 'transfer') continue;
        const { transfer, half } = effect;
        let seen = halves.get(transfer.id);
        if (seen === undefined) halves.set(transfer.id, (seen = { transfer, debits: [], credits: [] }));
        else if (!sameTransfer(seen.transfer, transfer)) differences.push(`transfer ${transfer.id} differs between its halves`);
        // A half is recorded even with no side in the ledger (a credit from the world routed by its key).
        if (half !== 'credit') {
          seen.debits.push(book.self);
          if (transfer.debit !== null) add(transfer.debit.account, transfer.debit.bucket, -transfer.amountMicros);
        }
        if (half !== 'debit') {
          seen.credits.push(book.self);
          if (transfer.credit !== null) add(transfer.credit.account, transfer.credit.bucket, transfer.amountMicros);
        }
      }
    }
    const accounts = new Set([...recomputed.keys(), ...book.accounts.keys()]);
    for (const account of accounts) {
      if (!book.owns(account)) differences.push(`owner ${book.self} holds ${account}, which it does not own`);
      for (const bucket of bucketsOf(account)) {
        const fromTransfers = recomputed.get(account)?.[bucket] ?? 0n;
        const stated = book.bucket(account, bucket);
        totalMicros += stated;
        if (stated < 0n) differences.push(`${account} ${bucket} is negative (${stated})`);
        if (fromTransfers !== stated) differences.push(`${account} ${bucket}: state ${stated}, transfers ${fromTransfers}`);
      }
    }
    differences.push(...holdDifferences(book));
  }
  let inTransitMicros = 0n;
  let worldInMicros = 0n;
  let worldOutMicros = 0n;
  for (const [id, { transfer, debits, credits }] of halves) {
    if (debits.length > 1 || credits.length > 1) differences.push(`transfer ${id} applied more than once`);
    if (debits.length === 0) {
      differences.push(`transfer ${id} credited with no debit`);
      continue;
    }
    if (transfer.debit === null) worldInMicros += transfer.amountMicros;
    if (transfer.credit === null) worldOutMicros += transfer.amountMicros;
    else if (credits.length === 0) inTransitMicros += transfer.amountMicros;
  }
  if (totalMicros + inTransitMicros !== worldInMicros - worldOutMicros) {
    differences.push(`not conserved: ${totalMicros} held + ${inTransitMicros} in transit != ${worldInMicros} in - ${worldOutMicros} out`);
  }
  return { isOk: differences.length === 0, differences, inTransitMicros, worldInMicros, worldOutMicros, totalMicros };
}

/** Every bucket but `available` is exactly the sum of the holds on it: what is not, in words. */
export function holdDifferences(book: Book): string[] {
  return bookHoldDifferences(book).map(({ account, bucket, holdsMicros, statedMicros, ref }) =>
    ref !== undefined
      ? `hold ${ref} is negative`
      : statedMicros === null
        ? `holds on ${account} ${bucket} (${holdsMicros}) with no such bucket`
        : `${account} ${bucket} is ${statedMicros}, its holds ${holdsMicros}`,
  );
}

/** A held bucket that is not the sum of its holds (`statedMicros` null: no such bucket), or a negative hold (`ref`). */
export interface HoldDifference {
  account: string;
  bucket: string;
  statedMicros: bigint | null;
  holdsMicros: bigint;
  ref?: string;
}

export function bookHoldDifferences(book: Book): HoldDifference[] {
  const held = new Map<string, { account: AccountId; bucket: Bucket; micros: bigint }>();
  for (const [ref, hold] of book.holds) {
    if (hold.amountMicros < 0n)
      return [{ account: hold.account, bucket: hold.bucket, statedMicros: 0n, holdsMicros: hold.amountMicros, ref }];
    const key = `${hold.account} ${hold.bucket}`;
    const sum = held.get(key) ?? { account: hold.account, bucket: hold.bucket, micros: 0n };
    sum.micros += hold.amountMicros;
    held.set(key, sum);
  }
  const differences: HoldDifference[] = [];
  for (const [account, buckets] of book.accounts) {
    for (const bucket of bucketsOf(account)) {
      if (bucket === 'available') continue;
      const key = `${account} ${bucket}`;
      const holdsMicros = held.get(key)?.micros ?? 0n;
      held.delete(key);
      const statedMicros = buckets[bucket] ?? 0n;
      if (statedMicros !== holdsMicros) differences.push({ account, bucket, statedMicros, holdsMicros });
    }
  }
  for (const { account, bucket, micros } of held.values()) {
    if (micros !== 0n) differences.push({ account, bucket, statedMicros: null, holdsMicros: micros });
  }
  return differences;
}

const sameTransfer = (a: Transfer, b: Transfer) =>
  a.kind === b.kind &&
  a.ref === b.ref &&
  a.amountMicros === b.amountMicros &&
  a.debit?.account === b.debit?.account &&
  a.debit?.bucket === b.debit?.bucket &&
  a.credit?.account === b.credit?.account &&
  a.credit?.bucket === b.credit?.bucket;
