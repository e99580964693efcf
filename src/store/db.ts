// Opened on the main thread (and again, by path, in shard workers: lmdb-js shares one environment per
// process). One LMDB environment in PARLAYD_DATA_DIR holds every record; each record type has its own named
// database. overlappingSync is off so that a committed write promise means "fsynced": a handler that awaits
// its write before responding has made the acknowledged state durable (contract section 6, docs/durability.md).
import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { GroupCommit, type GroupCommitCounts } from './group-commit.js';
import { createRoomState, guardCommitFailures, StorageRoom } from './room.js';

export { isStorageFull } from './room.js';

export type Db<V> = Database<V, string>;

/** Named databases. Adding one here is the whole migration: LMDB creates it on first open. */
export const DB_NAMES = [
  'users', // userId -> UserRecord
  'usersByWallet', // wallet -> userId
  'sessions', // sha256(token) hex -> SessionRecord
  'makerSessions', // `${makerAddress}:${sha256(token) hex}` -> {expiresAtMs}: a maker's sessions without a scan
  'balances', // before schema 5: userId -> the old one-sided balance; read only by the migration
  'journal', // before schema 5: `${userId}:${seq}` -> the old journal entry; read only by the migration
  'accounts', // account id (`user:<id>`, `maker:<address>`, `protocol`) -> AccountRecord (records/ledger.ts)
  'transfers', // transfer id (`${ref}/${step}`) -> TransferRecord: every movement of money
  'transferHalves', // transferHalfKey (transfer id, side) -> true: which sides of a transfer between two owners LMDB holds
  'accountJournal', // journalKey (account, at_ms, transfer id) -> JournalRow: an account's transfers in time order
  'holds', // ledger reference (`rfq:<id>`, `rfq:<id>:lock`, `contest:<id>:…`, `withdrawal:<id>`) -> HoldRecord
  'credits', // admin credit idempotency_key -> CreditRecord (ledger/credit-keys.ts)
  'withdrawals', // withdrawal id -> WithdrawalRecord (ledger/withdrawals.ts, with the three indexes below)
  'withdrawalKeys',
  'accountWithdrawals',
  'withdrawalsByStatus',
  'preferences', // userId -> PreferencesRecord
  'markets', // decimal market id (zero-padded) -> MarketRecord
  'marketWindows', // `${asset}:${durationSecs}:${startMs}` -> marketId
  'mentionMarkets', // market id key -> true, the index behind GET /v1/mention-markets
  'loginNonces', // used SIWE nonce -> {expiresAtMs}, until it expires (auth/wallet-login.ts)
  'makers', // maker address -> MakerRecord
  'makerProtection', // `${'maker' | 'admin'}:${address}` -> ProtectionLimits (mm/protection.ts)
  'meta', // counters, the layout version, index versions, the login nonce key, one-time migration marks
  'rfqs', // request_id -> RfqRecord
  'rfqKeys', // replay key -> RfqKeyRecord {requestId, contentHash}
  'rfqActive', // request_id -> true while the RFQ is not terminal: what a restart must fail and release
  'userRfqs', // userRfqKey (user, created_at_ms, request_id) -> true: a user's RFQs newest first (GET /v1/user/rfqs)
  'fills', // `${makerAddress}:${request_id}` -> FillRecord
  'makerTakerFills', // makerTakerFillKey (maker, taker, at_ms, request_id) -> true: GET /v1/mm/taker_pnl by taker
  'openPositions', // `${marketKey}:${request_id}` -> true for each leg of a filled, unsettled RFQ
  'contests', // contest id -> ContestRecord
  'contestEntries', // `${contestId}:${userId}:${entryIndex}` -> EntryRecord
  'userEntries', // userEntryKey (user, created_at_ms, contest, entry_index) -> true: GET /v1/user/contest_entries
  'entryKeys', // `${userId}:${idempotency_key}` -> EntryKeyRecord: a contest entry's idempotency key
  'contestImages', // contest id -> { contentType, bytes }
  'contestDoubts', // a call's hold reference -> ContestDoubtRecord: a cluster's contest money call not yet answered
  'marketsDue', // `${dueAtMs, 16 digits}:${marketKey}` -> true for each OPEN market (markets/due-index.ts)
  'oraclePrices', // `${asset}:${tsMs, 16 digits}` -> PriceReportRecord (oracle/prices.ts)
] as const;
export type DbName = (typeof DB_NAMES)[number];

export interface Store {
  readonly root: RootDatabase<unknown, string>;
  /** The named database; its record type is declared by the one module that owns it. */
  db<V>(name: DbName): Db<V>;
  /**
   * Runs `fn` atomically, serialized with every other writer, and resolves once fsynced. It is a child
   * transaction of lmdb-js's current batch: batched for group commit, yet a throw in `fn` rolls back `fn`'s
   * own writes (a plain lmdb-js `transaction` keeps writes made before a throw; measured, see docs).
   */
  transact<T>(fn: () => T): Promise<T>;
  /**
   * Throws 503 OVERLOADED (Retry-After) when new work has no room (room.ts: the map limit less a reserve,
   * the disk's free space less a reserve, or a commit just failed for want of space): called before any
   * write that starts new work (an RFQ, a credit, an entry), never before one that finishes work already
   * accepted (a fill, a release, a settlement), which may use the reserves.
   */
  assertRoom(): void;
  /** The room and its limits (room.ts): read and raised by the admin storage route, retries of accepted work. */
  readonly room: StorageRoom;
  /** Group-commit stores (the shards'): their commits and transactions so far (group-commit.ts); null elsewhere. */
  readonly groupCommitCounts: Readonly<GroupCommitCounts> | null;
  close(): Promise<void>;
}

export interface StoreOptions {
  /**
   * Worker threads that own their thread (RFQ shards): transactions are grouped per event-loop turn and
   * committed synchronously (group-commit.ts). Never on the main thread, which must not block on an fsync.
   */
  isGroupCommit?: boolean;
  /** PARLAYD_LMDB_MAP_SIZE_MB in bytes: the map's first size and the room new work may use. */
  mapSizeBytes?: number;
  /** room.ts createRoomState: the main thread's, handed to the shards, so a raised limit is seen by all. */
  roomState?: SharedArrayBuffer;
}

/** Today's default (8 GiB): large enough for 100k+ RFQs; LMDB maps lazily, so address space, not RAM. */
export const DEFAULT_MAP_SIZE_BYTES = 8 * 1024 ** 3;
/**
 * After a transaction that rolled back (a throw in its function, or a failed commit). A record shape first
 * written in it was added to the database's in-memory shared structures, but its save rolled back with it:
 * encoding against that phantom entry, then saving the next new shape, made records undecodable, on disk
 * (test/store/structures-rollback.test.ts). Dropping the in-memory copy (what lmdb-js does itself before a
 * clear) makes msgpackr read the saved list again on next use. Rare: every rollback is a refusal or a fault.
 */
function forgetUnsavedStructures(dbs: Iterable<Db<unknown>>): void {
  for (const db of dbs) {
    const encoder = (db as unknown as { encoder?: { clearSharedData?: () => void; structures?: unknown[] } }).encoder;
    if (encoder?.clearSharedData !== undefined) encoder.clearSharedData();
    else if (encoder?.structures !== undefined) encoder.structures = [];
  }
}

/** forgetUnsavedStructures over every database of `store`: after a failed commit not made by `transact` (write-behind.ts). */
export function forgetStoreStructures(store: Pick<Store, 'db'>): void {
  forgetUnsavedStructures(DB_NAMES.map((name) => store.db<unknown>(name)));
}

/**
 * The LMDB environment's options. lmdb-js keeps one environment per path and process, and every later open
 * of the path (the shards', the ledger check's) joins it with the flags it was first opened with. Exported
 * for the benchmark's storage bound alone (bench/load/no-flush-main.ts), which opens it first without flushes.
 */
export function environmentOptions(dataDir: string, mapSizeBytes: number) {
  return {
    path: dataDir,
    compression: false,
    // lmdb-js guesses "single file" from a dot in the last path part (/tmp/tmp.X1); ours is always a directory.
    noSubdir: false,
    overlappingSync: false,
    // lmdb-js only takes this as the first size and grows the map past it when a commit needs more (see
    // isStorageFull): the limit new work may use is ours (assertRoom).
    mapSize: mapSizeBytes,
    maxDbs: 64,
  };
}

export function openStore(dataDir: string, options: StoreOptions = {}): Store {
  mkdirSync(dataDir, { recursive: true });
  const mapSizeBytes = options.mapSizeBytes ?? DEFAULT_MAP_SIZE_BYTES;
  guardCommitFailures();
  const root = open<unknown, string>(environmentOptions(dataDir, mapSizeBytes));
  const opened = new Map<DbName, Db<unknown>>();
  // Shared structures: each database keeps its msgpack record shapes once, under lmdb-js's structures key,
  // instead of inline in every value. Measured (docs/performance.md): an RFQ record decodes ~5x faster
  // (the GET and session-lookup hot paths) and takes half the bytes. Values written without it still read.
  for (const name of DB_NAMES) {
    opened.set(name, root.openDB<unknown, string>({ name, compression: false, sharedStructuresKey: Symbol.for('structures') }));
  }
  const group = options.isGroupCommit === true ? new GroupCommit(root) : null;
  const room = new StorageRoom(root, dataDir, options.roomState ?? createRoomState(mapSizeBytes));
  return {
    root,
    db: <V>(name: DbName) => opened.get(name) as Db<V>,
    transact: <T>(fn: () => T): Promise<T> =>
      (group === null ? root.childTransaction(fn) : group.transact(fn)).catch(async (err: unknown) => {
        forgetUnsavedStructures(opened.values());
        // A failure for want of space becomes 503 OVERLOADED, nothing of it written (room.ts).
        throw await room.asOperatingError(err);
      }),
    assertRoom: () => room.assertRoom(),
    room,
    groupCommitCounts: group?.counts ?? null,
    close: () => root.close(),
  };
}

/** A data directory this build cannot read (a newer layout, or one that cannot be carried over): the start stops with its message. */
export class UnsupportedDataError extends Error {}
