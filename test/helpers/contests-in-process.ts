// BYPASSES THE HTTP API. The contest parts in this test's process: the real Store (LMDB in a temp dir),
// Ledger, Markets, Contests and shard actors, called directly, without HTTP, for tests that need thousands of
// entries or a crash at an exact point of a settlement. What the API checks is not checked here: a test that
// is about the API's answers uses helpers/contests.ts against a started server instead.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/lib/clock.js';
import { Contests, type ContestsOptions } from '../../src/contests/contests.js';
import { Ledger, NO_USERS, readAccount, readJournal, readUserBalance, type UserBalance } from '../../src/ledger/ledger.js';
import { PROTOCOL, userAccount, type JournalRow } from '../../src/records/ledger.js';
import type { ShardPool } from '../../src/rfq/shard-pool.js';
import { createLogger } from '../../src/lib/log.js';
import { Markets } from '../../src/markets/markets.js';
import type { ContestPick, CreateContest } from '../../src/contract/contests.js';
import { openStore, type Store } from '../../src/store/db.js';
import { startInProcessShards } from './shards.js';

const HOUR_MS = 3_600_000;
/** What an in-process harness funds the protocol with: more than every prize pool of a test file. */
const HARNESS_PROTOCOL_FUNDS_MICROS = 1_000_000_000_000_000n;

/** One "process" of the contest parts over a data directory; `reopen` is a restart on the same LMDB. */
export interface ContestsHarness {
  dataDir: string;
  store: Store;
  /** The balances' owners: real shard actors on this thread (helpers/shards.ts). */
  shards: ShardPool;
  balanceOf(userId: string): UserBalance;
  journalOf(userId: string): JournalRow[];
  /** Funds the protocol account (prize pools) directly through the main thread's ledger. */
  fundProtocol(amountMicros: bigint): Promise<void>;
  markets: Markets;
  contests: Contests;
  /** Closes this instance's store (what a crash leaves is what LMDB committed) and opens a new instance. */
  reopen(options?: ContestsOptions): Promise<ContestsHarness>;
  /** Closes the store and removes the data directory. */
  destroy(): Promise<void>;
}

export async function openContestsHarness(
  options: ContestsOptions = {},
  dataDir = mkdtempSync(join(tmpdir(), 'parlayd-contests-')),
): Promise<ContestsHarness> {
  const store = openStore(dataDir);
  const shards = await startInProcessShards(dataDir, () => store.root.resetReadTxn());
  const markets = new Markets(store, systemClock, { priceAssets: [], priceDurationsSecs: [] });
  const ledger = new Ledger(store, NO_USERS);
  const contests = new Contests(store, systemClock, shards, markets, createLogger('silent'), ledger, options);
  let fundings = 0;
  const fundProtocol = (amountMicros: bigint) =>
    store.transact(() => ledger.credit(PROTOCOL, amountMicros, `credit:harness-${randomUUID()}-${fundings++}`, Date.now()));
  // Prize pools come from the protocol account (contract section 11): fund it once, beyond any test's pools.
  if (readAccount(store, PROTOCOL).available === 0n) await fundProtocol(HARNESS_PROTOCOL_FUNDS_MICROS);
  const close = async () => {
    await shards.close();
    await store.close();
  };
  return {
    dataDir,
    store,
    shards,
    balanceOf: (userId) => readUserBalance(store, userId),
    journalOf: (userId) => readJournal(store, userAccount(userId)),
    fundProtocol,
    markets,
    contests,
    reopen: async (next = {}) => {
      await close();
      return openContestsHarness(next, dataDir);
    },
    destroy: async () => {
      await close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Counts the contest records read from LMDB from now on: each `get` of the `contests` database and each row a
 * range read over it yields (the two ways a record is read). Replaces those methods on the harness's handle,
 * which Contests and the settler share (Store.db hands out one handle per database).
 */
export function countContestReads(h: ContestsHarness): { readonly count: number; reset(): void } {
  const db = h.store.db<unknown>('contests') as unknown as {
    get: (key: string) => unknown;
    getRange: (options?: unknown) => Iterable<unknown> & { map: (f: (row: unknown) => unknown) => Iterable<unknown> };
  };
  const get = db.get.bind(db);
  const getRange = db.getRange.bind(db);
  let count = 0;
  db.get = (key) => {
    count++;
    return get(key);
  };
  db.getRange = (options) => {
    const rows = getRange(options);
    // Contests maps the range lazily (lmdb-js RangeIterable.map): count what the mapped range yields too.
    const counted = rows.map((row) => {
      count++;
      return row;
    });
    return counted as typeof rows;
  };
  return {
    get count() {
      return count;
    },
    reset: () => {
      count = 0;
    },
  };
}

/** `count` OPEN mention markets whose betting closes in an hour. */
export async function createMarketsInProcess(h: ContestsHarness, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const market = await h.markets.createMention({
      name: `market ${i}`,
      source_kind: 'test',
      source_event_id: 'event-1',
      source_market_id: `m-${i}`,
      betting_closes_at_ms: Date.now() + HOUR_MS,
    });
    ids.push(market.market_id);
  }
  return ids;
}

/** Users with `amountMicros` credited by their shards (ids only: no HTTP session is needed). */
/** `count` users credited `amountMicros` each: random ids, or `userIds` when given (a test that needs their order). */
export async function fundUsersInProcess(
  h: ContestsHarness,
  count: number,
  amountMicros: bigint,
  userIds: readonly string[] = Array.from({ length: count }, () => randomUUID()),
): Promise<string[]> {
  assert.equal(userIds.length, count);
  await Promise.all(
    userIds.map((userId) =>
      h.shards.moveMoney(h.shards.shardOfUser(userId), {
        op: 'credit',
        userId,
        wallet: `0x${userId.replaceAll('-', '').padEnd(40, '0')}`,
        amountMicros: amountMicros.toString(),
        idempotencyKey: `test:${userId}`,
        atMs: Date.now(),
      }),
    ),
  );
  return [...userIds];
}

/**
 * A contest with `entryCount` entries made through Contests.enter one after another, so that entry `seq` i
 * is the i-th: made by `userIds[i % userIds.length]`, with picks `picksOf(i)`.
 */
export async function seedContestInProcess(
  h: ContestsHarness,
  config: CreateContest,
  userIds: readonly string[],
  entryCount: number,
  picksOf: (seq: number) => ContestPick[],
): Promise<string> {
  const contest = await h.contests.create(config);
  for (let seq = 0; seq < entryCount; seq++) {
    const accepted = await h.contests.enter(userIds[seq % userIds.length]!, { contest_id: contest.contest_id, bets: picksOf(seq) });
    assert.equal(accepted.status, 201);
  }
  return contest.contest_id;
}
