// An owner's whole journal read back after its process stopped (no snapshot taken: the fixtures snapshot
// never), as the cross-owner ledger check (src/engine/check.ts checkOwners) takes it: every record since the
// first, and the book they make.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Book } from '../../src/engine/book.js';
import type { OwnerRecords } from '../../src/engine/check.js';
import { decodeEffects } from '../../src/engine/codec.js';
import type { Effect } from '../../src/engine/effects.js';
import type { AccountId } from '../../src/records/ledger.js';
import { FILE_HEADER_BYTES, scanRecords } from '../../src/wal/record.js';

export function readOwnerJournal(dir: string, self: number, ownerOf: (name: AccountId) => number): OwnerRecords {
  const names = readdirSync(dir);
  assert.deepEqual(
    names.filter((name) => name.startsWith('snapshot-')),
    [],
    `${dir}: a snapshot, so the journal no longer holds every record`,
  );
  const book = new Book(self, ownerOf);
  const records: Effect[][] = [];
  let nextSeq = 1;
  for (const name of names.filter((name) => name.startsWith('journal-')).sort()) {
    const bytes = readFileSync(join(dir, name));
    assert.equal(Number(name.slice('journal-'.length)), nextSeq, `${dir}/${name} follows record ${nextSeq - 1}`);
    const scan = scanRecords(bytes.subarray(FILE_HEADER_BYTES), nextSeq, (_seq, payload) => {
      const effects = decodeEffects(payload);
      for (const effect of effects) book.apply(effect);
      records.push(effects);
    });
    nextSeq = scan.lastSeq + 1;
  }
  return { book, records };
}
