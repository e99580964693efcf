// Monotonic counters kept in the `meta` database. Call only inside a write transaction (store.transact), so
// that two writers can never hand out the same value.
import type { Store } from './db.js';
import { metaTable } from './records.js';

export function nextCounterInTxn(store: Store, name: string): number {
  const meta = metaTable<number>(store);
  const next = (meta.get(`counter:${name}`) ?? 0) + 1;
  void meta.put(`counter:${name}`, next);
  return next;
}
