// Arrange helpers for contest tests: mention markets and contests created through the admin routes, entries
// through the user route, and a money book that knows what every test user's balance must be. At the end, an
// in-process harness: the real Store (LMDB in a temp dir), Ledger, Markets and Contests without HTTP, for
// tests that need thousands of entries or a crash at an exact point of a settlement.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/clock.js';
import { Contests, type ContestsOptions } from '../../src/contests/contests.js';
import { Ledger, NO_USERS, readAccount, readJournal, readUserBalance, type UserBalance } from '../../src/ledger/ledger.js';
import { PROTOCOL, userAccount, type JournalRow } from '../../src/ledger/accounts.js';
import type { ShardPool } from '../../src/rfq/shard-pool.js';
import { createLogger } from '../../src/log.js';
import { marketKey, Markets } from '../../src/markets/markets.js';
import { dueAtMsOf, dueKey } from '../../src/markets/due-index.js';
import type { Market } from '../../src/schemas/markets.js';
import type { CreateContest } from '../../src/schemas/contests.js';
import { openStore, type Store } from '../../src/store/db.js';
import { client, type HttpResult } from './http.js';
import type { TestServer } from './server.js';
import { startInProcessShards } from './shards.js';
import { fundedUser, type TestUser } from './users.js';

const HOUR_MS = 3_600_000;
/** What an in-process harness funds the protocol with: more than every prize pool of a test file. */
const HARNESS_PROTOCOL_FUNDS_MICROS = 1_000_000_000_000_000n;

/** The leading bytes of each accepted image type (enough for magic-byte detection). */
export const PNG_BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
export const JPEG_BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0]);
export const WEBP_BYTES = Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1');

export function admin(server: TestServer) {
  return client(server.baseUrl, server.adminToken);
}

/** An OPEN mention market whose betting closes in an hour (or at `bettingClosesAtMs`). */
export async function createMarket(server: TestServer, name = 'mention', bettingClosesAtMs = Date.now() + HOUR_MS) {
  const res = await admin(server).post('/v1/admin/mention-markets', {
    name,
    source_kind: 'test',
    source_event_id: 'event-1',
    source_market_id: `m-${name}`,
    betting_closes_at_ms: bettingClosesAtMs,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { market_id: number; name: string; status: string };
}

export async function createMarkets(server: TestServer, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push((await createMarket(server, `market ${i}`)).market_id);
  return ids;
}

export async function resolveMarket(server: TestServer, marketId: number, outcome: 'YES' | 'NO' | 'VOID') {
  const res = await admin(server).post(`/v1/admin/markets/${marketId}/resolve`, { outcome });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

export interface ContestConfig {
  title: string;
  category: 'mentions' | 'sports' | 'culture';
  bet_amount_micros: number;
  protocol_prize_pool_micros: number;
  entry_cap: number;
  entry_opens_at_ms?: number;
  betting_closes_ms: number;
  live_ends_at_ms?: number;
  description?: string;
  bet_type: { kind: 'num_bets' | 'bets_per_category'; value: number };
  game_type: 'lineups' | 'outcast' | 'survivor' | 'streak';
  winning_split_bps?: number[];
  markets: { market_id: number; category: string }[];
  image?: { content_type?: string; base64: string };
}

/** A valid lineups configuration over `marketIds` (category "main"), with `overrides` applied. */
export function contestConfig(marketIds: readonly number[], overrides: Partial<ContestConfig> = {}): ContestConfig {
  return {
    title: 'Test contest',
    category: 'mentions',
    bet_amount_micros: 1_000_000,
    protocol_prize_pool_micros: 0,
    entry_cap: 100,
    betting_closes_ms: Date.now() + HOUR_MS,
    bet_type: { kind: 'num_bets', value: 1 },
    game_type: 'lineups',
    winning_split_bps: [10_000],
    markets: marketIds.map((market_id) => ({ market_id, category: 'main' })),
    ...overrides,
  };
}

/**
 * Creates a contest through the admin route. Its prize pool comes from the protocol account (contract
 * section 11), so a valid pool is credited to the protocol first, unless `isFunded` is false.
 */
export async function postContest(server: TestServer, config: unknown, isFunded = true): Promise<HttpResult> {
  const pool = (config as { protocol_prize_pool_micros?: unknown } | null)?.protocol_prize_pool_micros;
  if (isFunded && Number.isSafeInteger(pool) && (pool as number) > 0) {
    const funded = await admin(server).post('/v1/admin/protocol/credit', { amount_micros: pool, idempotency_key: `pool:${randomUUID()}` });
    assert.equal(funded.status, 200, JSON.stringify(funded.body));
  }
  return admin(server).post('/v1/admin/contests', config);
}

export async function createContest(server: TestServer, config: ContestConfig) {
  const res = await postContest(server, config);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { contest_id: string } & Record<string, unknown>;
}

export type Pick = { market_id: number; direction: 'up' | 'down' };
export const up = (market_id: number): Pick => ({ market_id, direction: 'up' });
export const down = (market_id: number): Pick => ({ market_id, direction: 'down' });

export function enter(server: TestServer, user: TestUser, contestId: string, bets: Pick[], entryIndex?: number) {
  return client(server.baseUrl, user.token).post('/v1/user/contest_bet', {
    contest_id: contestId,
    bets,
    ...(entryIndex === undefined ? {} : { entry_index: entryIndex }),
  });
}

export function getDetail(server: TestServer, contestId: string, token?: string) {
  return client(server.baseUrl, token).get(`/v1/contests/${contestId}`);
}

/** A summary of GET /v1/contests (interface.md "Contest summary"), the fields these tests look at. */
export interface ListedContest {
  contest_id: string;
  category: string;
  status: string;
  entries_filled: number;
  total_pot_micros: number;
  created_at_ms: number;
}

/** GET /v1/contests?`query` (as sent, e.g. `status=open&limit=10`), anonymous: the summaries, newest first. */
export async function listContests(server: TestServer, query = ''): Promise<ListedContest[]> {
  const res = await client(server.baseUrl).get(`/v1/contests${query === '' ? '' : `?${query}`}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.contests as ListedContest[];
}

/** The contest ids of GET /v1/contests?`query`, in the order listed. */
export async function listedIds(server: TestServer, query = ''): Promise<string[]> {
  return (await listContests(server, query)).map((c) => c.contest_id);
}

export interface AdminEntry {
  user_id: string;
  entry_index: number;
  created_at_ms: number;
  payout_micros: number | null;
  net_payout_micros: number | null;
  rank: number | null;
  resolved_win_count: number;
  open_leg_count: number;
  picks: Array<Pick & { outcome: string }>;
}

/** One page of GET /v1/admin/contests/{id}/entries (`query` as sent, e.g. `limit=10&cursor=...`). */
export async function adminEntriesPage(server: TestServer, contestId: string, query = '') {
  const res = await admin(server).get(`/v1/admin/contests/${contestId}/entries${query === '' ? '' : `?${query}`}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { entries: AdminEntry[]; next_cursor: string | null };
}

/** Every entry of a contest, following next_cursor page by page: in key order (user_id, then entry_index). */
export async function adminEntries(server: TestServer, contestId: string): Promise<AdminEntry[]> {
  const entries: AdminEntry[] = [];
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    assert.ok(pages <= 1000, 'adminEntries: more than 1000 pages');
    const page = await adminEntriesPage(server, contestId, cursor === null ? '' : `cursor=${cursor}`);
    entries.push(...page.entries);
    if (page.next_cursor === null) return entries;
    cursor = page.next_cursor;
  }
}

/** Expects the contract error body with `code` (and the status the contract gives it). */
export function assertError(res: HttpResult, status: number, code: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.code, code, JSON.stringify(res.body));
  assert.equal(typeof res.body.message, 'string');
}

interface Account {
  user: TestUser;
  creditedMicros: bigint;
  /** Payouts − stakes of settled entries. */
  pnlMicros: bigint;
  reservedMicros: bigint;
}

/**
 * What every user's balance must be (contract section 4): reserved = stakes of unsettled entries; available
 * = credits + payouts − stakes − reserved; and available + reserved + at_risk = credits + payouts − stakes.
 */
export class MoneyBook {
  private readonly accounts = new Map<string, Account>();

  constructor(private readonly server: TestServer) {}

  async fundedUser(amountMicros: number): Promise<TestUser> {
    const user = await fundedUser(this.server, amountMicros);
    this.accounts.set(user.userId, { user, creditedMicros: BigInt(amountMicros), pnlMicros: 0n, reservedMicros: 0n });
    return user;
  }

  async fundedUsers(count: number, amountMicros: number): Promise<TestUser[]> {
    return Promise.all(Array.from({ length: count }, () => this.fundedUser(amountMicros)));
  }

  /** An entry was accepted: its bet amount is reserved. */
  staked(user: TestUser, stakeMicros: number): void {
    this.account(user).reservedMicros += BigInt(stakeMicros);
  }

  /** The contest resolved: the stake is taken and the payout credited. */
  settled(user: TestUser, stakeMicros: number, payoutMicros: number): void {
    const account = this.account(user);
    account.reservedMicros -= BigInt(stakeMicros);
    account.pnlMicros += BigInt(payoutMicros) - BigInt(stakeMicros);
  }

  /** The contest was voided: the stake is released. */
  refunded(user: TestUser, stakeMicros: number): void {
    this.account(user).reservedMicros -= BigInt(stakeMicros);
  }

  /** Checks every known user's balance through GET /v1/user/balance. */
  async check(): Promise<void> {
    for (const account of this.accounts.values()) {
      const res = await client(this.server.baseUrl, account.user.token).get('/v1/user/balance');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const available = BigInt(res.body.available_micros);
      const reserved = BigInt(res.body.reserved_micros);
      const atRisk = BigInt(res.body.at_risk_micros);
      assert.equal(available + reserved + atRisk, account.creditedMicros + account.pnlMicros, `identity of ${account.user.userId}`);
      assert.equal(reserved, account.reservedMicros, `reserved of ${account.user.userId}`);
      assert.equal(atRisk, 0n, `at risk of ${account.user.userId}`);
      assert.equal(available, account.creditedMicros + account.pnlMicros - account.reservedMicros);
    }
  }

  /** Total payouts − stakes over every user: what the users won from the pot's protocol part, or lost. */
  totalPnlMicros(): bigint {
    let sum = 0n;
    for (const a of this.accounts.values()) sum += a.pnlMicros;
    return sum;
  }

  /** Re-binds users to a restarted server (tokens live in LMDB, so they stay valid). */
  rebind(server: TestServer): MoneyBook {
    const book = new MoneyBook(server);
    for (const [id, account] of this.accounts) book.accounts.set(id, { ...account });
    return book;
  }

  private account(user: TestUser): Account {
    const account = this.accounts.get(user.userId);
    assert.ok(account !== undefined, 'user not funded through this book');
    return account;
  }
}

/** Waits until `check` passes (for effects that follow a response, e.g. resolution after a restart). */
export async function eventually(check: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

// ---- in process ----

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

export async function openContestsHarness(options: ContestsOptions = {}, dataDir = mkdtempSync(join(tmpdir(), 'parlayd-contests-'))): Promise<ContestsHarness> {
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
export async function fundUsersInProcess(h: ContestsHarness, count: number, amountMicros: bigint): Promise<string[]> {
  const userIds = Array.from({ length: count }, () => randomUUID());
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
  return userIds;
}

/**
 * A contest with `entryCount` entries made through Contests.enter one after another, so that entry `seq` i
 * is the i-th: made by `userIds[i % userIds.length]`, with picks `picksOf(i)`.
 */
export async function seedContestInProcess(
  h: ContestsHarness,
  config: ContestConfig,
  userIds: readonly string[],
  entryCount: number,
  picksOf: (seq: number) => Pick[],
): Promise<string> {
  const contest = await h.contests.create(config as CreateContest);
  for (let seq = 0; seq < entryCount; seq++) {
    const accepted = await h.contests.enter(userIds[seq % userIds.length]!, { contest_id: contest.contest_id, bets: picksOf(seq) });
    assert.equal(accepted.status, 201);
  }
  return contest.contest_id;
}

/**
 * Writes markets RESOLVED with `outcome` straight into `store`, without running any resolution listener: the
 * state a crash leaves between a market's durable resolution and its contests' (the next start's recover()
 * finishes them).
 */
export async function resolveMarketsInStore(store: Store, marketIds: readonly number[], outcome: 'YES' | 'NO'): Promise<void> {
  await store.transact(() => {
    for (const marketId of marketIds) {
      const market = store.db<Market>('markets').get(marketKey(marketId));
      assert.ok(market !== undefined, `market ${marketId}`);
      void store.db<Market>('markets').put(marketKey(marketId), { ...market, status: 'RESOLVED', outcome, resolution_time_ms: Date.now() });
      // As Markets.resolve does in the same transaction: a resolved market leaves the due index.
      void store.db<true>('marketsDue').remove(dueKey(dueAtMsOf(market), marketId));
    }
  });
}

/** resolveMarketsInStore on the LMDB of a stopped server. */
export async function resolveMarketsWhileStopped(dataDir: string, marketIds: readonly number[], outcome: 'YES' | 'NO'): Promise<void> {
  const store = openStore(dataDir);
  try {
    await resolveMarketsInStore(store, marketIds, outcome);
  } finally {
    await store.close();
  }
}
