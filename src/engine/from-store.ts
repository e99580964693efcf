// At start, once: the owners' first snapshots from a data directory of today's layout (the engine issue: "a
// data directory of today's layout is migrated at start into the first snapshot, refused with one line if it
// still has active RFQs"). Each owner's state is what LMDB holds for the accounts and holds it owns, and its
// journal begins with one record that says so: every non-zero bucket as an `opening` transfer from the world,
// every hold. So the check across owners (check.ts) holds from the first record, and the totals are today's to
// the micro. The credit keys stay where they are: LMDB is the owners' read model, and an owner decides a key
// its book does not hold from its record there (owner-host.ts), as it does for every key it has forgotten.
//
// Refused, before anything is built, while the directory still has work only the lmdb engine can finish: RFQs
// that are not terminal (their reservations and quotes live in its shard; starting it once with
// PARLAYD_ENGINE=lmdb fails them, contract section 6) and contests in the middle of a settlement (its progress
// record decides what is left to move).
import { bucketsOf, type AccountId } from '../records/ledger.js';
import type { Store } from '../store/db.js';
import { table } from '../store/records.js';
import { Book } from './book.js';
import type { Effect, Hold } from './effects.js';

export type StoreMigration = { books: Book[]; firstRecords: Effect[][] } | { refusal: string };

export function booksFromStore(store: Store, owners: number, ownerOf: (account: AccountId) => number): StoreMigration {
  const activeRfqs = [...table(store, 'rfqActive').getKeys()].length;
  if (activeRfqs > 0) {
    return {
      refusal: `the data directory has ${activeRfqs} active RFQs: start it once with PARLAYD_ENGINE=lmdb (it fails them), then on the journal engine`,
    };
  }
  for (const { key, value } of table(store, 'contests').getRange()) {
    if (value.settling !== undefined && value.status === 'open') {
      return {
        refusal: `contest ${key} is in the middle of its settlement: let the lmdb engine finish it (PARLAYD_ENGINE=lmdb), then start on the journal engine`,
      };
    }
  }
  const firstRecords: Effect[][] = Array.from({ length: owners }, () => []);
  const add = (account: AccountId, effect: Effect) => firstRecords[ownerOf(account)]!.push(effect);
  for (const { key: account, value } of table(store, 'accounts').getRange()) {
    for (const bucket of bucketsOf(account)) {
      const amountMicros = BigInt(value[bucket] ?? '0');
      if (amountMicros === 0n) continue;
      const ref = `opening:${account}`;
      const transfer = {
        id: `${ref}/${bucket}`,
        kind: 'opening' as const,
        ref,
        debit: null,
        credit: { account, bucket },
        amountMicros,
        atMs: 0,
      };
      add(account, { t: 'transfer', transfer, half: 'both' });
    }
  }
  for (const { key: ref, value } of table(store, 'holds').getRange()) {
    const hold: Hold = { account: value.account, bucket: value.bucket, amountMicros: BigInt(value.amountMicros) };
    add(value.account, { t: 'hold', ref, hold });
  }
  const books = firstRecords.map((record, self) => {
    const book = new Book(self, ownerOf);
    for (const effect of record) book.apply(effect);
    return book;
  });
  return { books, firstRecords };
}
