// A snapshot encoded in slices while its owner goes on (engine/book.ts AccountsAtSnapshot, codec.ts
// snapshotHead / accountRowsJson / snapshotChunks, used by owner-host.ts): whatever transfers change or
// create accounts between the slices, the snapshot decodes to the book exactly as it was when it began.
// Reproducible: a fixed seed, or FC_SEED=<n> to replay another (fast-check prints the seed of a failure).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Book, type Buckets } from '../../src/engine/book.js';
import { accountRowsJson, decodeSnapshot, encodeSnapshot, snapshotChunks, snapshotHead } from '../../src/engine/codec.js';
import type { Effect } from '../../src/engine/effects.js';
import { userAccount, type AccountId } from '../../src/records/ledger.js';
import type { Bucket } from '../../src/contract/ledger-kinds.js';

let transfers = 0;
/** A transfer of `amount` into `account`'s `to` bucket, from the world or from its `from` bucket. */
function move(account: AccountId, amountMicros: bigint, to: Bucket, from: Bucket | null): Effect {
  const id = `t${++transfers}`;
  const transfer = {
    id,
    kind: 'credit' as const,
    ref: id,
    debit: from === null ? null : { account, bucket: from },
    credit: { account, bucket: to },
    amountMicros,
    atMs: 0,
  };
  return { t: 'transfer', transfer, half: 'both' };
}

const accountOf = (n: number) => userAccount(`u${n}`);
const snapshotOf = (bytes: Uint8Array) => [...decodeSnapshot(bytes, () => 0).book.accounts];

test('a snapshot taken in slices while transfers change and create accounts is the book as it was when it began', () => {
  const step = fc.oneof(
    fc.record({ kind: fc.constant('slice' as const), size: fc.integer({ min: 1, max: 4 }) }),
    fc.record({ kind: fc.constant('credit' as const), who: fc.integer({ min: 0, max: 30 }), micros: fc.bigInt({ min: 1n, max: 1_000n }) }),
    fc.record({ kind: fc.constant('reserve' as const), who: fc.integer({ min: 0, max: 30 }), micros: fc.bigInt({ min: 1n, max: 1_000n }) }),
  );
  fc.assert(
    fc.property(fc.array(fc.bigInt({ min: 1n, max: 5_000n }), { maxLength: 20 }), fc.array(step, { maxLength: 60 }), (opening, steps) => {
      const book = new Book(0, () => 0);
      opening.forEach((micros, n) => book.apply(move(accountOf(n), micros, 'available', null)));
      const expected = snapshotOf(encodeSnapshot(book, 7));
      const head = snapshotHead(book, 7);
      const rows = book.beginAccountsSnapshot().entries();
      const slices: string[] = [];
      const takeSlice = (size: number) => {
        const slice: Array<[AccountId, Buckets]> = [];
        while (slice.length < size) {
          const next = rows.next();
          if (next.done === true) break;
          slice.push(next.value);
        }
        slices.push(accountRowsJson(slice));
      };
      let changed = 0;
      for (const s of steps) {
        if (s.kind === 'slice') takeSlice(s.size);
        else if (s.kind === 'credit') {
          book.apply(move(accountOf(s.who), s.micros, 'available', null));
          changed++;
        } else if (book.available(accountOf(s.who)) >= s.micros) {
          book.apply(move(accountOf(s.who), s.micros, 'reserved', 'available'));
          changed++;
        }
      }
      takeSlice(Number.MAX_SAFE_INTEGER);
      book.endAccountsSnapshot();
      const bytes = Buffer.from(snapshotChunks(head, slices).join(''));
      assert.deepEqual(snapshotOf(bytes), expected);
      assert.equal(decodeSnapshot(bytes, () => 0).seq, 7);
      // The book went on: after changes, the live book differs from the snapshot, which did not follow it.
      if (changed > 0) assert.notDeepEqual([...book.accounts], expected);
    }),
    { seed: Number(process.env['FC_SEED'] ?? 34), numRuns: 500 },
  );
});
