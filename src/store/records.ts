// Any thread. The value type of every named database, in one place: `table(store, name)` is the checked
// way to open one, so a record's type is stated once (by its owning module) instead of being asserted by
// a cast at each of ~100 call sites (`store.db<X>(name)` lets any caller pick any X). Types only: this
// module imports nothing at run time but db.ts.
import type { Db, DbName, Store } from './db.js';
import type { MakerSessionIndexRecord, SessionRecord } from '../records/auth.js';
import type { UsedNonceRecord } from '../records/auth.js';
import type { ContestDoubtRecord, ContestRecord, EntryKeyRecord, EntryRecord, ImageRecord } from '../records/contests.js';
import type { AccountRecord, HoldRecord, JournalRow, TransferRecord } from '../records/ledger.js';
import type { CreditRecord, LegacyCreditRecord } from '../records/credits.js';
import type { WithdrawalKeyRecord, WithdrawalRecord } from '../records/withdrawals.js';
import type { ProtectionLimits } from '../records/makers.js';
import type { MakerRecord } from '../records/makers.js';
import type { PriceReportRecord } from '../records/oracle.js';
import type { FillRecord } from '../records/fills.js';
import type { RfqKeyRecord, RfqRecord } from '../records/rfqs.js';
import type { StoredMarket } from '../contract/markets.js';
import type { Preferences } from '../contract/preferences.js';
import type { UserRecord } from '../records/users.js';
import type { OneSidedBalance } from '../records/ledger.js';

/**
 * 'meta' is a bag of single values, each fixed by its key's owner: counters, the layout and index
 * versions (number), the login nonce key (string), one-time migration marks (boolean).
 */
export type MetaValue = number | string | boolean;

/** An index entry: the key is the data, the value only says "present". */
type IndexEntry = true;

/** Database name -> the type of its values (db.ts DB_NAMES says what the keys are). */
export interface RecordTypes {
  users: UserRecord;
  usersByWallet: string; // userId
  sessions: SessionRecord;
  makerSessions: MakerSessionIndexRecord;
  balances: OneSidedBalance; // before schema 5, read only by the migration
  journal: unknown; // before schema 5, only deleted by the migration: never read, so never typed
  accounts: AccountRecord;
  transfers: TransferRecord;
  transferHalves: IndexEntry;
  accountJournal: JournalRow;
  holds: HoldRecord;
  credits: CreditRecord | LegacyCreditRecord;
  withdrawals: WithdrawalRecord;
  withdrawalKeys: WithdrawalKeyRecord;
  accountWithdrawals: IndexEntry;
  withdrawalsByStatus: IndexEntry;
  preferences: Preferences;
  markets: StoredMarket;
  marketWindows: number; // marketId
  mentionMarkets: IndexEntry;
  loginNonces: UsedNonceRecord;
  makers: MakerRecord;
  makerProtection: ProtectionLimits;
  meta: MetaValue;
  rfqs: RfqRecord;
  rfqKeys: RfqKeyRecord;
  rfqActive: IndexEntry;
  userRfqs: IndexEntry;
  fills: FillRecord;
  makerTakerFills: IndexEntry;
  openPositions: IndexEntry;
  contests: ContestRecord;
  contestEntries: EntryRecord;
  userEntries: IndexEntry;
  entryKeys: EntryKeyRecord;
  contestImages: ImageRecord;
  contestDoubts: ContestDoubtRecord;
  marketsDue: IndexEntry;
  oraclePrices: PriceReportRecord;
}

// Fails to compile when DB_NAMES and RecordTypes disagree, in either direction.
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const namesMatch: Exact<DbName, keyof RecordTypes> = true;
void namesMatch;

/** The named database with its value type: the one cast from store.db's unchecked generic. */
export function table<N extends DbName>(store: Store, name: N): Db<RecordTypes[N]> {
  return store.db<RecordTypes[N]>(name);
}

/**
 * 'meta' read as the type its key's owner fixes (see MetaValue): the one place a caller still names the
 * value type, because the database holds several, one per key.
 */
export function metaTable<V extends MetaValue>(store: Store): Db<V> {
  return store.db<V>('meta');
}

/** A record write decided by one owner and committed by another (rfq/messages.ts RecordWrite), typed by its database. */
export type TypedWrite<N extends DbName> = { [K in N]: { db: K; key: string; value: RecordTypes[K] } }[N];

/** A blind put (a value) or remove (`value: undefined`) of one key of a named database, typed by its database. */
export type BlindWrite = { [K in DbName]: { db: K; key: string; value: RecordTypes[K] | undefined } }[DbName];

/** Puts or removes, inside the caller's write transaction (or on its own): the records a module decided as data. */
export function applyWrites(store: Store, writes: readonly BlindWrite[]): void {
  for (const { db, key, value } of writes) {
    if (value === undefined) void store.db(db).remove(key);
    else void store.db(db).put(key, value);
  }
}

/** Puts a decided write; `write.db` and `write.value` agree by TypedWrite's construction. */
export function putRecord<N extends DbName>(store: Store, write: TypedWrite<N>): void {
  void table(store, write.db as N).put(write.key, write.value as RecordTypes[N]);
}
