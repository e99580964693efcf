// Main thread, at start. Keys that belong to a data directory rather than to a configuration: 32 random bytes
// made once per name and kept in LMDB `meta`, so what they authenticate (a login nonce, a page cursor) still
// verifies after a restart. Deriving them from config would need a secret the operator must set (the admin
// token may be generated per start). Whoever can read the data directory can read them: they protect the API
// from its callers, not the data directory from its readers.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Store } from './db.js';
import { metaTable } from './records.js';

const KEY_BYTES = 32;

/** The data directory's key named `name` (e.g. 'cursor-key:v1'), made and stored on first use (one synchronous write, once). */
export function loadOrCreateDataKey(store: Store, name: string): Buffer {
  const meta = metaTable<string>(store);
  const stored = meta.get(name);
  if (stored !== undefined) return decodeKey(name, stored);
  const made = randomBytes(KEY_BYTES).toString('hex');
  // ifNoExists semantics by hand, in one write transaction: a racing opener (a test's second store on the
  // same directory) keeps the first key, and both read it back.
  store.root.transactionSync(() => {
    if (meta.get(name) === undefined) void meta.put(name, made);
  });
  return decodeKey(name, meta.get(name)!);
}

function decodeKey(name: string, hex: string): Buffer {
  assert.match(hex, /^[0-9a-f]{64}$/, `the stored key ${name} is 32 bytes of hex`);
  return Buffer.from(hex, 'hex');
}
