// Opened on the main thread (and again, by path, in shard workers: lmdb-js shares one environment per
// process). One LMDB environment in PARLAYD_DATA_DIR holds every record; each record type has its own named
// database. overlappingSync is off so that a committed write promise means "fsynced": a handler that awaits
// its write before responding has made the acknowledged state durable (contract section 6, docs/durability.md).
import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { GroupCommit } from './group-commit.js';

export type Db<V> = Database<V, string>;

/** Named databases. Adding one here is the whole migration: LMDB creates it on first open. */
export const DB_NAMES = [
  'users', // userId -> UserRecord
  'usersByWallet', // wallet -> userId
  'sessions', // sha256(token) hex -> SessionRecord
  'makerSessions', // `${makerAddress}:${sha256(token) hex}` -> {expiresAtMs}: a maker's sessions without a scan
  'balances', // userId -> BalanceRecord (decimal strings)
  'journal', // `${userId}:${seq}` -> JournalEntry, one per money movement
  'holds', // ledger reference (`rfq:<id>`, `contest:<id>:<user>:<index>`) -> HoldRecord: money reserved or at risk for it
  'credits', // admin credit idempotency_key -> CreditRecord
  'preferences', // userId -> PreferencesRecord
  'markets', // decimal market id (zero-padded) -> MarketRecord
  'marketWindows', // `${asset}:${durationSecs}:${startMs}` -> marketId
  'mentionMarkets', // market id key -> true, the index behind GET /v1/mention-markets
  'loginNonces', // used SIWE nonce -> {expiresAtMs}, until it expires (auth/wallet-login.ts)
  'makers', // maker address -> MakerRecord
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
  close(): Promise<void>;
}

export interface StoreOptions {
  /**
   * Worker threads that own their thread (RFQ shards): transactions are grouped per event-loop turn and
   * committed synchronously (group-commit.ts). Never on the main thread, which must not block on an fsync.
   */
  isGroupCommit?: boolean;
}

export function openStore(dataDir: string, options: StoreOptions = {}): Store {
  mkdirSync(dataDir, { recursive: true });
  const root = open<unknown, string>({
    path: dataDir,
    compression: false,
    // lmdb-js guesses "single file" from a dot in the last path part (/tmp/tmp.X1); ours is always a directory.
    noSubdir: false,
    overlappingSync: false,
    // Large enough for 100k+ RFQs with room to grow; LMDB maps lazily, so this is address space, not RAM.
    mapSize: 8 * 1024 ** 3,
    maxDbs: 64,
  });
  const opened = new Map<DbName, Db<unknown>>();
  // Shared structures: each database keeps its msgpack record shapes once, under lmdb-js's structures key,
  // instead of inline in every value. Measured (docs/performance.md): an RFQ record decodes ~5x faster
  // (the GET and session-lookup hot paths) and takes half the bytes. Values written without it still read.
  for (const name of DB_NAMES) {
    opened.set(name, root.openDB<unknown, string>({ name, compression: false, sharedStructuresKey: Symbol.for('structures') }));
  }
  const group = options.isGroupCommit === true ? new GroupCommit(root) : null;
  return {
    root,
    db: <V>(name: DbName) => opened.get(name) as Db<V>,
    transact: group === null ? (fn) => root.childTransaction(fn) : (fn) => group.transact(fn),
    close: () => root.close(),
  };
}
