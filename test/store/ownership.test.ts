// Each named LMDB database has one owning module, which writes it and says what its records are
// (src/store/records.ts maps every name to its type). Other modules may open it only where this table says
// so and why. The owner is the family's record module (rfq-records.ts, contest-records.ts, ledger.ts, ...),
// which everything else reads through; what is left outside it is by design (the audit and the ledger check
// read every money record in one snapshot, migrations rewrite old layouts before any owner runs, meta keys
// and the due index belong to their modules). The test reads the source: a module that opens a database by name
// (`table(store, 'x')`, `store.db('x')`, `metaTable(store)`, an ExpirySweep of 'x', a decided write
// `{ db: 'x', ... }`) must be listed, and a listed opener that no longer opens it must leave the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DB_NAMES, type DbName } from '../../src/store/db.js';

const ROOT = new URL('../../..', import.meta.url).pathname;

interface Openers {
  owner: string;
  /** Other modules that open it, each with why (the debt to pay, or a reason it stays). */
  also?: Record<string, string>;
}

const LEDGER_AUDIT =
  "the ledger check's holds half (admin route, tests, chaos, fuzz; reads only) cross-checks every money record in one snapshot";
const MIGRATION = 'the one-time layout migrations rewrite old records in place, at start, before any owner runs';
const ENGINE_START =
  "the engine's owners take their first snapshots from today's money records once, at start, refusing while RFQs are active or a contest settles (reads only)";
const READ_MODEL =
  "the engine's read model: each owner's journal records written behind as this same layout (store/write-behind.ts), the owner their one writer";

const WITHDRAWAL_WRITES =
  "decides the records a request and an end write with their money, for the account's owner to commit (the lmdb engine: itself, checking the key and the record inside its transaction)";

const DB_OPENERS: Record<DbName, Openers> = {
  users: { owner: 'src/users/users.ts' },
  usersByWallet: { owner: 'src/users/users.ts' },
  sessions: { owner: 'src/auth/sessions.ts' },
  makerSessions: { owner: 'src/auth/sessions.ts' },
  balances: { owner: 'src/boot/migrations.ts' },
  journal: { owner: 'src/boot/migrations.ts' },
  accounts: {
    owner: 'src/ledger/ledger.ts',
    also: {
      'src/ledger/check.ts': 'the ledger check recomputes every account from the transfers (any thread, reads only)',
      'src/ledger/holds-audit.ts': LEDGER_AUDIT,
      'src/engine/from-store.ts': ENGINE_START,
      'src/engine/read-model.ts': READ_MODEL,
    },
  },
  transfers: {
    owner: 'src/ledger/ledger.ts',
    also: {
      'src/ledger/check.ts': 'the ledger check recomputes every account from the transfers (any thread, reads only)',
      'src/engine/read-model.ts': READ_MODEL,
    },
  },
  transferHalves: {
    owner: 'src/engine/read-model.ts',
    also: { 'src/ledger/check.ts': 'the ledger check counts the sides of a transfer between owners that LMDB holds' },
  },
  accountJournal: { owner: 'src/ledger/ledger.ts', also: { 'src/engine/read-model.ts': READ_MODEL } },
  holds: {
    owner: 'src/ledger/ledger.ts',
    also: {
      'src/ledger/holds-audit.ts': LEDGER_AUDIT,
      'src/boot/migrations.ts': MIGRATION,
      'src/engine/from-store.ts': ENGINE_START,
      'src/engine/read-model.ts': READ_MODEL,
    },
  },
  credits: {
    owner: 'src/ledger/credit-keys.ts',
    also: { 'src/engine/read-model.ts': READ_MODEL },
  },
  withdrawals: {
    owner: 'src/ledger/withdrawal-records.ts',
    also: { 'src/ledger/withdrawals.ts': WITHDRAWAL_WRITES, 'src/ledger/holds-audit.ts': LEDGER_AUDIT },
  },
  withdrawalKeys: { owner: 'src/ledger/withdrawal-records.ts', also: { 'src/ledger/withdrawals.ts': WITHDRAWAL_WRITES } },
  accountWithdrawals: { owner: 'src/ledger/withdrawal-records.ts', also: { 'src/ledger/withdrawals.ts': WITHDRAWAL_WRITES } },
  withdrawalsByStatus: {
    owner: 'src/ledger/withdrawal-records.ts',
    also: { 'src/ledger/withdrawals.ts': WITHDRAWAL_WRITES, 'src/ledger/holds-audit.ts': LEDGER_AUDIT },
  },
  preferences: { owner: 'src/preferences/preferences.ts' },
  markets: {
    owner: 'src/markets/market-table.ts',
    also: {
      'src/markets/due-index.ts': 'builds its index from every market once, at start, when its version is missing',
    },
  },
  marketWindows: { owner: 'src/markets/price-windows.ts' },
  mentionMarkets: { owner: 'src/markets/mentions.ts' },
  loginNonces: { owner: 'src/auth/wallet-login.ts' },
  makers: { owner: 'src/mm/registry.ts' },
  makerProtection: { owner: 'src/mm/protection.ts' },
  meta: {
    owner: 'src/store/counters.ts',
    also: {
      'src/boot/migrations.ts': 'owns the layout version key',
      'src/store/data-key.ts': "owns the data directory's keys (the login nonce MAC key, the cursor MAC key)",
      'src/auth/sessions.ts': 'owns the maker session index mark',
      'src/markets/due-index.ts': 'owns the due index version key',
      'src/store/write-behind.ts': "owns each read-model writer's appliedSeq key",
    },
  },
  rfqs: {
    owner: 'src/rfq/rfq-records.ts',
    also: {
      'src/ledger/holds-audit.ts': LEDGER_AUDIT,
      'src/boot/migrations.ts': MIGRATION,
    },
  },
  rfqKeys: { owner: 'src/rfq/rfq-records.ts' },
  rfqActive: {
    owner: 'src/rfq/rfq-records.ts',
    also: { 'src/ledger/holds-audit.ts': LEDGER_AUDIT, 'src/engine/from-store.ts': ENGINE_START },
  },
  userRfqs: {
    owner: 'src/rfq/rfq-records.ts',
    also: { 'src/boot/migrations.ts': MIGRATION },
  },
  fills: {
    owner: 'src/rfq/rfq-records.ts',
    also: { 'src/ledger/holds-audit.ts': LEDGER_AUDIT, 'src/boot/migrations.ts': MIGRATION },
  },
  makerTakerFills: {
    owner: 'src/rfq/rfq-records.ts',
    also: { 'src/boot/migrations.ts': MIGRATION },
  },
  openPositions: { owner: 'src/rfq/rfq-records.ts' },
  contests: {
    owner: 'src/contests/contest-records.ts',
    also: { 'src/ledger/holds-audit.ts': LEDGER_AUDIT, 'src/boot/migrations.ts': MIGRATION, 'src/engine/from-store.ts': ENGINE_START },
  },
  contestEntries: {
    owner: 'src/contests/contest-records.ts',
    also: { 'src/ledger/holds-audit.ts': LEDGER_AUDIT, 'src/boot/migrations.ts': MIGRATION },
  },
  userEntries: { owner: 'src/contests/contest-records.ts', also: { 'src/boot/migrations.ts': MIGRATION } },
  entryKeys: { owner: 'src/contests/contest-records.ts' },
  contestImages: { owner: 'src/contests/contest-records.ts' },
  contestDoubts: { owner: 'src/contests/contest-owners.ts' },
  marketsDue: {
    owner: 'src/markets/due-index.ts',
    also: {
      'src/markets/market-table.ts': 'writes the entry in the transaction that creates or resolves the market',
      'src/markets/resolution.ts': "reads the due lists (the auto-void sweep, the admin's due page, the oracle's open windows at start)",
    },
  },
  oraclePrices: { owner: 'src/oracle/prices.ts' },
};

/**
 * Modules that open a database by a name held in a variable, on another module's behalf: the scan cannot
 * see which, so each is listed with the names it may be handed.
 */
const BY_VARIABLE: Record<string, string> = {
  'src/auth/expiry-sweep.ts': "sweeps 'sessions', 'makerSessions', 'loginNonces' for their owners (ExpiringDbName)",
  'src/rfq/shard-money.ts': 'commits the RecordWrites (contests, entries, withdrawals) their owners decided, with the money',
  'src/ledger/withdrawals.ts': 'puts its own decided writes when the main thread commits them',
  'src/store/write-behind.ts': 'commits the read-model writes their owners decided, behind their journal',
};

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return path.endsWith('.ts') ? [path] : [];
  return readdirSync(path).flatMap((name) => sourceFiles(join(path, name)));
}

const BY_NAME = [
  /\btable\(\s*[\w.]+,\s*'(\w+)'\)/g,
  /\.db(?:<(?:[^<>()]|<[^<>]*>)*>)?\('(\w+)'\)/g,
  /\bmetaTable\b(?:<[^>]*>)?\(()/g,
  /new ExpirySweep\(\s*[\w.]+,\s*'(\w+)'/g,
  /\bdb: '(\w+)'/g,
];
const BY_VARIABLE_RE = [/\btable\(\s*[\w.]+,\s*(?!')[\w.]+\)/, /\.db(?:<(?:[^<>()]|<[^<>]*>)*>)?\((?!')[\w.]+\)/, /\bputRecord\(/];

/** The store itself and the accessor: they name every database, and are the mechanism, not an opener. */
const MECHANISM = new Set(['src/store/db.ts', 'src/store/records.ts']);

function scan(): { opened: Map<string, Set<string>>; byVariable: Set<string> } {
  const opened = new Map<string, Set<string>>();
  const byVariable = new Set<string>();
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const module = relative(ROOT, file);
    if (MECHANISM.has(module)) continue;
    const text = readFileSync(file, 'utf8');
    for (const re of BY_NAME) {
      for (const match of text.matchAll(re)) {
        const name = match[1] === '' || match[1] === undefined ? 'meta' : match[1];
        let modules = opened.get(name);
        if (modules === undefined) opened.set(name, (modules = new Set()));
        modules.add(module);
      }
    }
    if (BY_VARIABLE_RE.some((re) => re.test(text))) byVariable.add(module);
  }
  return { opened, byVariable };
}

test('every named database is opened only by its owner and the modules listed with a reason', () => {
  const { opened } = scan();
  const found: Record<string, string[]> = {};
  const expected: Record<string, string[]> = {};
  for (const name of [...opened.keys()].sort()) found[name] = [...opened.get(name)!].sort();
  for (const name of [...DB_NAMES].sort()) {
    const openers = DB_OPENERS[name];
    if (!opened.has(name)) continue; // a database nothing opens by name (none today) needs no entry checked
    expected[name] = [openers.owner, ...Object.keys(openers.also ?? {})].sort();
  }
  assert.deepEqual(found, expected);
});

test('every database named in DB_NAMES has an owner, and the table names no other', () => {
  assert.deepEqual(Object.keys(DB_OPENERS).sort(), [...DB_NAMES].sort());
});

test('only the listed modules open a database by a name held in a variable', () => {
  assert.deepEqual([...scan().byVariable].sort(), Object.keys(BY_VARIABLE).sort());
});

test('the scan sees each way of opening a database', () => {
  const probe = [
    "table(this.store, 'rfqs')",
    "store.db<Map<string, number>>('fills')",
    'metaTable<number>(store)',
    "new ExpirySweep(store, 'sessions', clock)",
    "{ db: 'contests', key, value }",
  ].join('\n');
  const names = BY_NAME.flatMap((re) => [...probe.matchAll(re)].map((m) => m[1] || 'meta'));
  assert.deepEqual(names, ['rfqs', 'fills', 'meta', 'sessions', 'contests']);
  assert.ok(BY_VARIABLE_RE.some((re) => re.test('table(this.store, this.dbName)')));
  assert.ok(!BY_VARIABLE_RE.some((re) => re.test("table(this.store, 'rfqs')")));
});
