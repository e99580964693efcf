// Every thread that opens the store. The room new work may use, and what a write does when there is none
// (docs/reliability.md "A full store"): new work is refused 503 before it writes, work already
// accepted retries its write until it commits, and both start again by themselves once there is room, without
// a restart. Kept apart from db.ts, which opens the environment, so that either can change alone.
//
// Two limits, read at most every ROOM_CHECK_INTERVAL_MS (reading both costs ~25 µs: ~20 for mdb_env_info and
// a stat, ~5 for the statfs, measured; too much for every RFQ):
// - ours, the map size (PARLAYD_LMDB_MAP_SIZE_MB, raised at run time by PUT /v1/admin/storage): lmdb-js grows
//   the map past it by itself, so it is a limit only because we keep it. It lives in a SharedArrayBuffer the
//   main thread makes and hands to every shard (ShardInit.roomState): one raise is seen by every thread.
// - the disk's: the free bytes of the data directory's filesystem, read with statfs. A full disk makes a
//   commit fail (measured on a full tmpfs: EIO from LMDB's short write, not ENOSPC), so new work stops while
//   a reserve is left for the writes that finish accepted work; it starts again once the operator frees space.
import { statfsSync } from 'node:fs';
import { inspect } from 'node:util';
import type { RootDatabase } from 'lmdb';
import { ApiError } from '../lib/errors.js';

/**
 * The share of the map limit kept for writes that finish accepted work. Each active RFQ's end, each settlement
 * batch needs a few pages; with 1/8 of even a 64 MiB map (8 MiB = 2,048 pages) there is room for every RFQ the
 * shards may hold at once (PARLAYD_MAX_ACTIVE_RFQS_PER_SHARD) to end. New work may overshoot the room by what
 * one ROOM_CHECK_INTERVAL_MS writes, which the reserve covers too.
 */
const RESERVE_DIVISOR = 8;
/**
 * Free disk kept for writes that finish accepted work: each RFQ's end or settlement batch needs a few 4 KiB
 * pages, so 32 MiB (8,192 pages) lets every RFQ the shards may hold at once end; less for a small map.
 */
const MAX_DISK_RESERVE_BYTES = 32 * 1024 * 1024;
export const ROOM_CHECK_INTERVAL_MS = 50;
/** Space rarely comes back within a second (an operator frees or grows it): callers retry less often. */
export const STORAGE_RETRY_AFTER_S = 5;
/** After a commit failed for want of space, new work is refused this long on every thread, whatever statfs says. */
const REFUSE_AFTER_FAILURE_MS = STORAGE_RETRY_AFTER_S * 1000;
/** Backoff of a write that finishes accepted work and failed for want of space: 1 s doubling to 30 s. */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

/** Slots of the shared room state (Float64Array over a SharedArrayBuffer). */
const LIMIT_BYTES = 0;
const REFUSE_UNTIL_MS = 1;
/** Until when a thread's measure found no room (the others refuse too, without measuring); a raise clears it. */
const MEASURED_FULL_UNTIL_MS = 2;
const SLOTS = 3;

/** 503 OVERLOADED for want of space: nothing of the write was kept. A distinct class so retries can tell it apart. */
export class StorageFullError extends ApiError {
  constructor() {
    super('OVERLOADED', undefined, undefined, { 'Retry-After': String(STORAGE_RETRY_AFTER_S) });
  }
}

/** The main thread makes it once; every openStore of the process (shards included) gets the same buffer. */
export function createRoomState(mapSizeBytes: number): SharedArrayBuffer {
  const shared = new SharedArrayBuffer(SLOTS * Float64Array.BYTES_PER_ELEMENT);
  const slots = new Float64Array(shared);
  slots[LIMIT_BYTES] = mapSizeBytes;
  slots[REFUSE_UNTIL_MS] = 0;
  slots[MEASURED_FULL_UNTIL_MS] = 0;
  return shared;
}

export interface RoomStatus {
  map_size_mb: number;
  used_bytes: number;
  room_bytes: number;
  disk_free_bytes: number | null;
  disk_reserve_bytes: number;
  is_refusing: boolean;
}

/**
 * A commit that failed for want of space. lmdb-js grows the map by itself, so MDB_MAP_FULL only surfaces
 * when that growth fails; a full disk surfaces as ENOSPC or EDQUOT from the write or the fsync, or as EIO
 * when LMDB's pwrite was short (what a full tmpfs gave: docs/reliability.md).
 */
export function isStorageFull(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return code === 'ENOSPC' || code === 'EDQUOT' || /MDB_MAP_FULL|No space left|Disk quota exceeded|MDB_MAP_RESIZED/i.test(err.message);
}

const isIoError = (err: Error) =>
  (err as { code?: unknown }).code === 5 || (err as { code?: unknown }).code === 'EIO' || /Input\/output error/.test(err.message);

/**
 * lmdb-js rejects a failed asynchronous commit with "Commit failed (see commitError for details)" and the
 * cause in a promise, `commitError`, which it also leaves unhandled, as it does one promise of its batch:
 * either would stop the process. Set once per thread by openStore: a commit failure is answered to its
 * callers (Store.transact), so it is not a crash; any other unhandled rejection still is (rethrown, as Node
 * does without a listener).
 */
let isGuardInstalled = false;
export function guardCommitFailures(): void {
  if (isGuardInstalled) return;
  isGuardInstalled = true;
  process.on('unhandledRejection', (reason) => {
    const commitError = (reason as { commitError?: unknown } | null)?.commitError;
    if (commitError instanceof Promise) {
      commitError.catch(() => undefined);
      return;
    }
    if (reason instanceof Error && (isStorageFull(reason) || isIoError(reason))) return; // a commitError: answered to its callers
    // Not an Error (lmdb-js rejects some promises with other values): an Error that says what it was, or a
    // worker's crash reaches the main thread's log as `err: {}`, with nothing to find it by.
    throw reason instanceof Error ? reason : new Error(`unhandled rejection with a non-Error: ${inspect(reason, { depth: 3 })}`);
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class StorageRoom {
  readonly #slots: Float64Array;
  #checkedAtMs = -Infinity;
  #isFull = false;

  constructor(
    private readonly root: RootDatabase<unknown, string>,
    private readonly dataDir: string,
    readonly shared: SharedArrayBuffer,
  ) {
    this.#slots = new Float64Array(shared);
  }

  /** Throws StorageFullError when new work has no room (see the file's comment); cheap between reads. */
  assertRoom(): void {
    const nowMs = performance.now();
    if (nowMs - this.#checkedAtMs >= ROOM_CHECK_INTERVAL_MS) {
      this.#checkedAtMs = nowMs;
      this.#isFull = this.#measure().isRefusing;
      // Told to every thread at once, not at each one's next measure: a full disk any thread sees refuses
      // new work everywhere (a shard that measured just before the disk filled would take one more).
      if (this.#isFull) this.#slots[MEASURED_FULL_UNTIL_MS] = Date.now() + ROOM_CHECK_INTERVAL_MS;
    }
    // Read on every call (shared loads): a failed commit on any thread refuses new work at once.
    const nowEpochMs = Date.now();
    if (this.#isFull || this.#slots[REFUSE_UNTIL_MS]! > nowEpochMs || this.#slots[MEASURED_FULL_UNTIL_MS]! > nowEpochMs) {
      throw new StorageFullError();
    }
  }

  /** Raises (or lowers) our limit for every thread; each sees it at its next read. */
  setMapSizeBytes(bytes: number): void {
    this.#slots[LIMIT_BYTES] = bytes;
    this.#slots[MEASURED_FULL_UNTIL_MS] = 0;
    this.#checkedAtMs = -Infinity;
  }

  status(): RoomStatus {
    const measured = this.#measure();
    return {
      map_size_mb: this.#slots[LIMIT_BYTES]! / (1024 * 1024),
      used_bytes: measured.usedBytes,
      room_bytes: measured.roomBytes,
      disk_free_bytes: measured.diskFreeBytes,
      disk_reserve_bytes: measured.diskReserveBytes,
      is_refusing: measured.isRefusing || this.#slots[REFUSE_UNTIL_MS]! > Date.now(),
    };
  }

  /**
   * What a failed transaction's error becomes: StorageFullError when it was for want of space (and every
   * thread refuses new work for a while), else the error itself. An EIO counts when the disk is (nearly) full.
   */
  async asOperatingError(err: unknown): Promise<unknown> {
    let cause = err;
    const commitError = (err as { commitError?: unknown } | null)?.commitError;
    if (commitError instanceof Promise)
      cause = await commitError.then(
        () => err,
        (inner: unknown) => inner,
      );
    const isFull = isStorageFull(cause) || (cause instanceof Error && isIoError(cause) && this.#isDiskLow());
    if (!isFull) return err;
    this.#slots[REFUSE_UNTIL_MS] = Date.now() + REFUSE_AFTER_FAILURE_MS;
    return new StorageFullError();
  }

  /**
   * Runs a write that finishes accepted work until it commits: on StorageFullError it waits (1 s doubling to
   * 30 s) and runs it again. The write must be the same decision each time (it is: nothing of a failed commit
   * was kept, and each write reads what it needs inside its transaction). Any other error is the caller's.
   */
  async untilWritten<T>(write: () => Promise<T>, onWait: (attempt: number, delayMs: number) => void = () => undefined): Promise<T> {
    let delayMs = FIRST_RETRY_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        const written = await write();
        if (attempt > 1) this.noteCommitted();
        return written;
      } catch (err) {
        if (!(err instanceof StorageFullError)) throw err;
        onWait(attempt, delayMs);
        await sleep(delayMs);
        delayMs = Math.min(delayMs * 2, MAX_RETRY_MS);
      }
    }
  }

  /** A retried write committed: there is room again, so new work need not wait out the refusal. */
  noteCommitted(): void {
    this.#slots[REFUSE_UNTIL_MS] = 0;
  }

  #isDiskLow(): boolean {
    const free = this.#diskFreeBytes();
    return free !== null && free < this.#diskReserveBytes();
  }

  #diskReserveBytes(): number {
    return Math.min(MAX_DISK_RESERVE_BYTES, Math.floor(this.#slots[LIMIT_BYTES]! / RESERVE_DIVISOR));
  }

  #diskFreeBytes(): number | null {
    try {
      const fs = statfsSync(this.dataDir);
      return fs.bavail * fs.bsize;
    } catch {
      return null; // a filesystem without statfs: only our limit and failed commits refuse
    }
  }

  #measure(): { usedBytes: number; roomBytes: number; diskFreeBytes: number | null; diskReserveBytes: number; isRefusing: boolean } {
    const limitBytes = this.#slots[LIMIT_BYTES]!;
    const roomBytes = limitBytes - Math.floor(limitBytes / RESERVE_DIVISOR);
    // The high-water page of the last commit (every thread's): the data file never shrinks below it.
    const stats = this.root.getStats() as { lastPageNumber: number; pageSize: number };
    const usedBytes = (stats.lastPageNumber + 1) * stats.pageSize;
    const diskFreeBytes = this.#diskFreeBytes();
    const diskReserveBytes = this.#diskReserveBytes();
    const isRefusing = usedBytes >= roomBytes || (diskFreeBytes !== null && diskFreeBytes < diskReserveBytes);
    return { usedBytes, roomBytes, diskFreeBytes, diskReserveBytes, isRefusing };
  }
}
