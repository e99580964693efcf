// Main thread. Deletes the expired records of one LMDB database (sessions, login nonces) in bounded batches:
// nothing else would ever remove a session that was not logged out, nor a login nonce that was never used,
// and the challenge route that writes nonces needs no auth.
//
// Back of the envelope, measured on the 2-vCPU dev VM (20 000 sessions, half expired): a batch of 1 000
// records holds the main thread (and the write lock) ~1 ms once warm, ~9 ms the first time. With a 50 ms gap
// between the batches of a pass, a backlog drains at up to 20 000 records examined per second for ~2 % of the
// main thread. Creation is slower than that: a nonce is one fsynced write on a route rate limited per IP
// (2 000/s by default, docs/architecture.md), so a pass catches up.
import assert from 'node:assert/strict';
import type { Clock } from '../lib/clock.js';
import type { Store } from '../store/db.js';
import { table } from '../store/records.js';
import { StorageFullError } from '../store/room.js';

/** Between the end of one pass and the start of the next: an expired record lingers at most TTL + this + a pass. */
export const SWEEP_PASS_INTERVAL_MS = 60_000;
/** Records examined per batch, one write transaction each: the bound on one sweep's main-thread time. */
export const SWEEP_BATCH_RECORDS = 1_000;
/** Between the batches of one pass, so a long pass leaves the main thread to requests. */
export const SWEEP_BATCH_GAP_MS = 50;

export interface ExpirySweepOptions {
  passIntervalMs?: number;
  batchRecords?: number;
  batchGapMs?: number;
  /** Told of a batch that failed (its transaction wrote nothing); the sweep tries again at its next pass. */
  onFailure?: (err: unknown, dbName: ExpiringDbName) => void;
}

export interface SweepBatchResult {
  examined: number;
  removed: number;
  /** The batch reached the end of the database: the next batch starts a new pass from the first key. */
  isPassDone: boolean;
}

/** The databases whose records carry `expiresAtMs` and are swept (their owners write them). */
export type ExpiringDbName = 'sessions' | 'makerSessions' | 'loginNonces';

/**
 * Deletes the records of one database whose `expiresAtMs` has passed, in bounded batches that walk the keys
 * in order from a cursor (keys are random hashes or nonces, so expired records are spread over the whole
 * range; a cursor visits each once per pass instead of rescanning the first ones). Each batch reads and
 * deletes in one store transaction, so a record that a racing request removes is never removed twice.
 * The timer is unref'd: it never keeps the process alive.
 */
export class ExpirySweep {
  readonly #passIntervalMs: number;
  readonly #batchRecords: number;
  readonly #batchGapMs: number;
  readonly #onFailure: (err: unknown, dbName: ExpiringDbName) => void;
  /** Last key examined by the previous batch of this pass; undefined at the start of a pass. */
  #cursorKey: string | undefined = undefined;
  #timer: NodeJS.Timeout | null = null;
  #isStopped = false;

  constructor(
    private readonly store: Store,
    private readonly dbName: ExpiringDbName,
    private readonly clock: Clock,
    /** Called with the keys a batch removed, after its transaction committed. */
    private readonly onRemoved: (keys: readonly string[]) => void,
    options: ExpirySweepOptions = {},
  ) {
    this.#passIntervalMs = options.passIntervalMs ?? SWEEP_PASS_INTERVAL_MS;
    this.#batchRecords = options.batchRecords ?? SWEEP_BATCH_RECORDS;
    this.#batchGapMs = options.batchGapMs ?? SWEEP_BATCH_GAP_MS;
    this.#onFailure = options.onFailure ?? (() => {});
    assert.ok(Number.isSafeInteger(this.#batchRecords) && this.#batchRecords >= 1, 'batchRecords must be an integer >= 1');
    assert.ok(Number.isSafeInteger(this.#passIntervalMs) && this.#passIntervalMs >= 0, 'passIntervalMs must be an integer >= 0');
    assert.ok(Number.isSafeInteger(this.#batchGapMs) && this.#batchGapMs >= 0, 'batchGapMs must be an integer >= 0');
  }

  /** The first batch runs at once (so a restart clears what expired while the process was down). */
  start(): void {
    if (!this.#isStopped && this.#timer === null) this.#schedule(0);
  }

  stop(): void {
    this.#isStopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  async sweepBatch(): Promise<SweepBatchResult> {
    const db = table(this.store, this.dbName);
    const batch = await this.store.transact(() => {
      // Read inside the transaction: "now" is when the removal is decided, not when it was queued.
      const nowMs = this.clock.nowMs();
      const startKey = this.#cursorKey;
      const removedKeys: string[] = [];
      let examined = 0;
      let lastKey: string | undefined;
      for (const { key, value } of db.getRange(startKey === undefined ? {} : { start: startKey })) {
        if (key === startKey) continue; // examined by the previous batch
        if (examined === this.#batchRecords) break;
        examined++;
        lastKey = key;
        assert.ok(Number.isSafeInteger(value.expiresAtMs), `${this.dbName} record without an integer expiresAtMs`);
        if (value.expiresAtMs <= nowMs) {
          void db.remove(key);
          removedKeys.push(key);
        }
      }
      return { removedKeys, examined, lastKey };
    });
    const isPassDone = batch.examined < this.#batchRecords;
    this.#cursorKey = isPassDone ? undefined : batch.lastKey;
    if (batch.removedKeys.length > 0) this.onRemoved(batch.removedKeys);
    return { examined: batch.examined, removed: batch.removedKeys.length, isPassDone };
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#runBatch();
    }, delayMs).unref();
  }

  async #runBatch(): Promise<void> {
    if (this.#isStopped || !isStoreOpen(this.store)) return;
    let result: SweepBatchResult;
    try {
      result = await this.sweepBatch();
    } catch (err) {
      // A store closed under the sweep (service stopping) ends it.
      if (this.#isStopped || !isStoreOpen(this.store)) return;
      // Any other failure wrote nothing of the batch, and expired records can wait: every read refuses an
      // expired session or nonce, so none is usable meanwhile. The next pass tries again from the first key:
      // a full store may have room by then (its refusals of new work say so already, so it is not reported
      // here); a commit that failed otherwise, or a record that breaks the sweep's rule, is reported. Stopping
      // instead would leave the records to pile up unseen, and a crash would repeat at every start, whose
      // first batch runs at once.
      if (!(err instanceof StorageFullError)) this.#onFailure(err, this.dbName);
      this.#cursorKey = undefined;
      return this.#schedule(this.#passIntervalMs);
    }
    if (!this.#isStopped) this.#schedule(result.isPassDone ? this.#passIntervalMs : this.#batchGapMs);
  }
}

/** lmdb-js keeps `status` 'open' on its root until close() finishes (not in its typings). */
function isStoreOpen(store: Store): boolean {
  return (store.root as { status?: unknown }).status === 'open';
}
