// Arrange helpers for contest tests, all through the routes of a started server: contests created through the
// admin routes, entries through the user route, the lists and the admin entries view, and a money book that
// knows what every test user's balance must be. Markets: helpers/markets.ts. Without HTTP (thousands of
// entries, a crash at an exact point): helpers/contests-in-process.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { CallerEntry, ContestDetail, ContestPick, ContestSummary, CreateContest } from '../../src/contract/contests.js';
import type { BalanceResponse } from '../../src/contract/users.js';
import { admin, client, type HttpResult } from './http.js';
import type { TestServer } from './server.js';
import { fundedUser, type TestUser } from './users.js';

const HOUR_MS = 3_600_000;

/** The leading bytes of each accepted image type (enough for magic-byte detection). */
export const PNG_BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
export const JPEG_BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0]);
export const WEBP_BYTES = Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1');

/** The body of POST /v1/admin/contests (src/contract/contests.ts). */
export type ContestConfig = CreateContest;

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

/** postContest, expecting 201: the created contest's detail. */
export async function createContest(server: TestServer, config: ContestConfig): Promise<ContestDetail> {
  const res = await postContest(server, config);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as ContestDetail;
}

export type Pick = ContestPick;
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

/** GET /v1/contests?`query` (as sent, e.g. `status=open&limit=10`), anonymous: the summaries, newest first. */
export async function listContests(server: TestServer, query = ''): Promise<ContestSummary[]> {
  const res = await client(server.baseUrl).get<{ contests: ContestSummary[] }>(`/v1/contests${query === '' ? '' : `?${query}`}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.contests;
}

/** The contest ids of GET /v1/contests?`query`, in the order listed. */
export async function listedIds(server: TestServer, query = ''): Promise<string[]> {
  return (await listContests(server, query)).map((c) => c.contest_id);
}

/** An entry of the admin entries view: a CallerEntry with its user_id (the route's AdminEntries schema). */
export type AdminEntry = CallerEntry & { user_id: string };

/** One page of GET /v1/admin/contests/{id}/entries (`query` as sent, e.g. `limit=10&cursor=...`). */
export async function adminEntriesPage(server: TestServer, contestId: string, query = '') {
  const res = await admin(server).get<{ entries: AdminEntry[]; next_cursor: string | null }>(
    `/v1/admin/contests/${contestId}/entries${query === '' ? '' : `?${query}`}`,
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
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
      const res = await client(this.server.baseUrl, account.user.token).get<Static<typeof BalanceResponse>>('/v1/user/balance');
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
