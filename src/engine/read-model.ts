// Any thread; pure. What one journal record of an owner writes to the read model: today's LMDB layout of the
// ledger (records/ledger.ts: accounts, transfers, holds, the users' journal rows, credit keys), so every view,
// audit and the LMDB ledger check go on reading what they read before the owners existed. The owner's
// effects (effects.ts) say what moved; the book after the record says what each touched account now holds,
// written whole as ledger.ts writes it (every bucket of the kind, in one order).
//
// Between owners a transfer is applied in halves: each owner writes the account and the journal row of its
// own side, and both write the transfer's record, the same value, so either half alone shows it and a
// reader sees it once. Each half also writes a marker of its side (`transferHalves`), in the same batch as
// its account, so the ledger check counts exactly the sides LMDB holds while the other is on its way. A lock
// still pending for another owner's fill is an ordinary locked hold here, under its own key (`<ref>:lock#n`).
//
// An `opening` transfer (engine/from-store.ts) states what LMDB already held when the owner took it over: it
// writes nothing here, or the LMDB ledger check would count that money twice.
import {
  bucketsOf,
  creditRef,
  journalKey,
  transferHalfKey,
  userIdOf,
  type AccountId,
  type AccountRecord,
  type TransferRecord,
} from '../records/ledger.js';
import type { Bucket } from '../contract/ledger-kinds.js';
import type { BlindWrite } from '../store/records.js';
import type { Book } from './book.js';
import type { Effect, Transfer } from './effects.js';

/** The record's writes; the accounts it touched are written as `book` holds them (the state after the record). */
export function readModelWrites(effects: readonly Effect[], book: Book): BlindWrite[] {
  const touched = new Set<AccountId>();
  const writes = recordWrites(effects, touched);
  for (const account of touched) writes.push(accountWrite(book, account));
  return writes;
}

/**
 * The writes of a record apart from account values, which it adds to `touched` instead: a recovery that
 * catches the read model up to a snapshot writes those once, from the snapshot (owner-host.ts).
 */
export function recordWrites(effects: readonly Effect[], touched: Set<AccountId>): BlindWrite[] {
  const writes: BlindWrite[] = [];
  for (const effect of effects) {
    switch (effect.t) {
      case 'transfer':
        if (effect.transfer.kind !== 'opening') transferWrites(effect.transfer, effect.half, writes, touched);
        break;
      case 'hold': {
        const { hold } = effect;
        const value =
          hold === null ? undefined : { account: hold.account, bucket: hold.bucket, amountMicros: hold.amountMicros.toString() };
        writes.push({ db: 'holds', key: effect.ref, value });
        break;
      }
      case 'credit_key': {
        // The credit's own transfer carries its time: a key is recorded in the same record as its credit.
        const ref = creditRef(effect.key);
        const credit = effects.find((other) => other.t === 'transfer' && other.transfer.ref === ref);
        const atMs = credit?.t === 'transfer' ? credit.transfer.atMs : 0;
        writes.push({
          db: 'credits',
          key: effect.key,
          value: { account: effect.account, amountMicros: effect.amountMicros.toString(), atMs },
        });
        break;
      }
      case 'fact':
        writes.push(effect.write);
        break;
      case 'prize':
      case 'reply':
      case 'send':
      case 'acked':
      case 'received':
        break; // the owners' own bookkeeping: no view reads it
      default: {
        const unknown: never = effect;
        throw new Error(`unknown effect ${JSON.stringify(unknown)}`);
      }
    }
  }
  return writes;
}

/** An account's record as ledger.ts writes it: every bucket of its kind, in one order, zeros included. */
export function accountWrite(book: Book, account: AccountId): BlindWrite {
  const value: AccountRecord = {};
  for (const bucket of bucketsOf(account)) value[bucket] = book.bucket(account, bucket).toString();
  return { db: 'accounts', key: account, value };
}

function transferWrites(transfer: Transfer, half: 'both' | 'debit' | 'credit', writes: BlindWrite[], touched: Set<AccountId>): void {
  const { id, kind, ref, debit, credit, amountMicros, atMs } = transfer;
  const value: TransferRecord = { id, kind, debit, credit, amountMicros: amountMicros.toString(), ref, atMs };
  if (half === 'both') writes.push({ db: 'transfers', key: id, value });
  else {
    value.inHalves = true;
    writes.push({ db: 'transfers', key: id, value }, { db: 'transferHalves', key: transferHalfKey(id, half), value: true });
  }
  // Each account this half touches, with its buckets' changes, in ledger.ts's order: the debit's first.
  const changes = new Map<AccountId, Array<[Bucket, string]>>();
  if (half !== 'credit' && debit !== null) changes.set(debit.account, [[debit.bucket, (-amountMicros).toString()]]);
  if (half !== 'debit' && credit !== null) {
    const same = changes.get(credit.account);
    if (same === undefined) changes.set(credit.account, [[credit.bucket, amountMicros.toString()]]);
    else same.push([credit.bucket, amountMicros.toString()]);
  }
  for (const [account, deltas] of changes) {
    touched.add(account);
    // Only users read a journal (ledger.ts says why makers have none); an unlock is only ever a maker's.
    if (userIdOf(account) !== null && kind !== 'unlock')
      writes.push({ db: 'accountJournal', key: journalKey(account, atMs, id), value: { transferId: id, kind, ref, atMs, deltas } });
  }
}
