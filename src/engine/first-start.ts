// Main thread, at start, before the shards: what the journal engine's owners start from. A data directory
// the owners have run on has a marker (`engine/owners.json`) naming how many there are: balances live on the
// owner their account hashes to (routing.ts), so another count would put them on the wrong owners, and the
// start is refused with one line. On a directory without it (a new one, or one of the lmdb engine's layout),
// each owner's first record is built from what LMDB holds (from-store.ts), refused with one line while
// work only the lmdb engine can finish is left; the marker is written once every owner has journaled its
// first record (`markStarted`), so a crash before that builds them again. It is written before any route
// takes traffic, so without it no owner ever answered anyone: what a first start that did not finish left
// (owners' journals and snapshots, their read model's positions) is dropped, and every owner starts again
// from what LMDB holds, which is then the truth (an lmdb-engine start in between may have moved money there).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UnsupportedDataError } from '../store/db.js';
import type { Store } from '../store/db.js';
import { forgetAppliedSeqs } from '../store/write-behind.js';
import type { Effect } from './effects.js';
import { booksFromStore } from './from-store.js';
import { ownerOfName } from './routing.js';
import { syncDirectory } from '../wal/journal.js';

export interface OwnersStart {
  /** Each owner's first record, on a directory's first start on the journal engine; else undefined. */
  firstRecords: Effect[][] | undefined;
  /** Every owner is running: records the count (once). */
  markStarted(): void;
}

export function prepareOwners(store: Store, dataDir: string, owners: number): OwnersStart {
  const dir = join(dataDir, 'engine');
  const marker = join(dir, 'owners.json');
  if (existsSync(marker)) {
    const recorded = (JSON.parse(readFileSync(marker, 'utf8')) as { owners: number }).owners;
    if (recorded !== owners) {
      throw new UnsupportedDataError(
        `its journal engine has ${recorded} shards (balances live on them): start it with PARLAYD_SHARDS=${recorded}`,
      );
    }
    return { firstRecords: undefined, markStarted: () => {} };
  }
  discardUnfinishedStart(store, dir);
  const migration = booksFromStore(store, owners, ownerOfName(owners));
  if ('refusal' in migration) throw new UnsupportedDataError(migration.refusal);
  return {
    firstRecords: migration.firstRecords,
    markStarted: () => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(marker, `${JSON.stringify({ owners })}\n`, { flush: true });
      syncDirectory(dir);
    },
  };
}

/**
 * Drops what a first start that did not finish left: the read model's positions first (in one transaction),
 * then the owners' directories, so a crash between the two leaves nothing that names a journal record.
 */
function discardUnfinishedStart(store: Store, dir: string): void {
  forgetAppliedSeqs(store);
  if (!existsSync(dir)) return;
  const leftovers = readdirSync(dir).filter((name) => /^owner-\d+$/.test(name));
  for (const name of leftovers) rmSync(join(dir, name), { recursive: true, force: true });
  if (leftovers.length > 0) syncDirectory(dir);
}

/** The lmdb engine refuses a directory the owners ran on: LMDB is only their read model there. */
export function refuseIfOwned(dataDir: string): void {
  if (existsSync(join(dataDir, 'engine', 'owners.json'))) {
    throw new UnsupportedDataError('its balances are owned by the journal engine: start it with PARLAYD_ENGINE=journal');
  }
}
