// Main thread; reads only. GET /v1/user/journal (contract section 11, Views): an account's own movements,
// newest first, one entry per (transfer, bucket) it changed, from the account's journal rows
// (`accountJournal`, keyed by account, time and transfer id: one reverse range read). A row holds one or two
// deltas (two when the transfer moved money between two of the account's own buckets), so a page reads at
// most `limit` + 1 rows. A page may end between a row's two entries: the cursor then names the row and how
// many of its entries were listed.
import type { Store } from '../store/db.js';
import type { JournalEntry } from '../contract/views.js';
import { journalKey, type AccountId } from '../records/ledger.js';
import { journalNewestFirst } from './ledger.js';

/** Where a page ends: the last row's (at_ms, transfer id) and how many of its entries the page listed. */
export type JournalCursor = [atMs: number, transferId: string, listed: number];

export function accountJournalPage(
  store: Store,
  account: AccountId,
  page: { limit: number; after: JournalCursor | null },
): { entries: JournalEntry[]; next: JournalCursor | null } {
  const entries: JournalEntry[] = [];
  // Rebuilt from the cursor's parts under this account's prefix, so no cursor reaches another account's rows:
  // every key from `${account}|` on, in reverse, belongs to this account ('|' is in no account id).
  const afterKey = page.after === null ? null : journalKey(account, page.after[0], page.after[1]);
  for (const { key, row } of journalNewestFirst(store, account, afterKey)) {
    // The range start is inclusive: the cursor's row is read again, and only its entries not yet listed are.
    const skip = key === afterKey ? page.after![2] : 0;
    for (let i = skip; i < row.deltas.length; i++) {
      if (entries.length === page.limit) return { entries, next: [row.atMs, row.transferId, i] };
      const [bucket, deltaMicros] = row.deltas[i]!;
      entries.push({ transfer_id: row.transferId, kind: row.kind, bucket, delta_micros: deltaMicros, ref: row.ref, at_ms: row.atMs });
    }
  }
  return { entries, next: null };
}
