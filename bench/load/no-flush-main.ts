// The service of scenario `storage-bound`: parlayd itself (dist/src/main.js, every line of it), with LMDB's
// flushes and the journal engine's journal flushes turned off. NOT DURABLE: a commit is acknowledged once in the page cache. It exists to measure
// what no storage layout can beat on this machine: a durable write that costs nothing. Any log, page layout
// or commit scheme still pays at least its own flush, so a figure this service misses, no storage change
// reaches here (issue 24; docs/performance.md, "The storage bound").
//
// How: lmdb-js keeps one environment per path and process, and an open of a path already open joins it with
// the flags it was first opened with (lmdb-js open.js re-reads them). This opens the service's environment
// first, with MDB_NOSYNC, then starts the service, whose own opens (main thread, shards, ledger check) join it.
import { mkdirSync } from 'node:fs';
import { open } from 'lmdb';
import { loadConfig } from '../../src/config/config.js';
import { environmentOptions } from '../../src/store/db.js';

const config = loadConfig();
mkdirSync(config.dataDir, { recursive: true });
/** Held for the process's life: the environment stays the one opened here. */
export const unflushedRoot = open<unknown, string>({
  ...environmentOptions(config.dataDir, config.lmdbMapSizeMb * 1024 * 1024),
  noSync: true,
});
// The journal engine's journal (src/wal/journal.ts) reads this on every shard thread: its writes go unflushed too.
process.env['PARLAYD_STORAGE_BOUND_UNFLUSHED'] = '1';
process.stderr.write('parlayd (storage bound): LMDB commits and journal writes are not flushed; nothing here is durable\n');
await import('../../src/main.js');
