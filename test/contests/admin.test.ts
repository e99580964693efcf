// Contest administration, listing, detail and images against the real server (contract section 8,
// interface.md "Contest detail"): every configuration field is validated, the detail has exactly the
// interface's fields, and the caller section follows the optional bearer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ContestDetail, ContestList } from '../../src/contract/contests.js';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';
import {
  contestConfig,
  createContest,
  enter,
  getDetail,
  JPEG_BYTES,
  MoneyBook,
  PNG_BYTES,
  postContest,
  up,
  WEBP_BYTES,
  type ContestConfig,
} from '../helpers/contests.js';
import { assertApiError } from '../helpers/errors.js';
import { createMarket, createMarkets, resolveMarket } from '../helpers/markets.js';

// interface.md, "Contest detail", "markets[] item" and "caller object": the exact field lists.
const DETAIL_FIELDS = [
  'contest_id',
  'title',
  'category',
  'status',
  'bet_amount_micros',
  'protocol_prize_pool_micros',
  'total_pot_micros',
  'entries_filled',
  'entry_cap',
  'entry_opens_at_ms',
  'betting_closes_ms',
  'live_ends_at_ms',
  'resolved_at_ms',
  'created_at_ms',
  'image_url',
  'description',
  'bet_type',
  'game_type',
  'winning_split_bps',
  'markets',
  'caller',
];
const MARKET_FIELDS = [
  'market_id',
  'category',
  'name',
  'description',
  'status',
  'outcome',
  'source_kind',
  'source_event_id',
  'source_market_id',
  'betting_closes_at_ms',
  'live_ends_at_ms',
  'resolution_time_ms',
];
const ENTRY_FIELDS = [
  'entry_index',
  'created_at_ms',
  'picks',
  'open_leg_count',
  'resolved_win_count',
  'payout_micros',
  'net_payout_micros',
  'rank',
];
const SUMMARY_FIELDS = [
  'contest_id',
  'title',
  'category',
  'status',
  'game_type',
  'bet_type',
  'bet_amount_micros',
  'total_pot_micros',
  'entries_filled',
  'entry_cap',
  'betting_closes_ms',
  'image_url',
  'created_at_ms',
];
const sorted = (keys: string[]) => [...keys].sort();
const detailSchema = TypeCompiler.Compile(ContestDetail);
const listSchema = TypeCompiler.Compile(ContestList);
function assertDetailShape(body: unknown): void {
  assert.ok(detailSchema.Check(body), JSON.stringify([...detailSchema.Errors(body)].slice(0, 3)));
}

let server: TestServer;
let book: MoneyBook;
let marketIds: number[];

before(async () => {
  server = await startServer();
  book = new MoneyBook(server);
  marketIds = await createMarkets(server, 4);
});
after(async () => {
  await book.check();
  await server.stop();
});

describe('POST /v1/admin/contests', () => {
  it('creates a contest: 201 with the whole detail, caller null', async () => {
    const closesMs = Date.now() + 3_600_000;
    const config = contestConfig(marketIds.slice(0, 3), {
      title: 'Mentions night',
      description: 'Pick two',
      protocol_prize_pool_micros: 5_000_000,
      entry_cap: 25,
      entry_opens_at_ms: closesMs - 7_200_000,
      betting_closes_ms: closesMs,
      live_ends_at_ms: closesMs + 60_000,
      bet_type: { kind: 'num_bets', value: 2 },
      winning_split_bps: [6000, 3000],
      markets: marketIds.slice(0, 3).map((market_id, i) => ({ market_id, category: i === 0 ? 'politics' : 'tech' })),
    });
    const created = await postContest(server, config);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const detail = created.body;
    assert.deepEqual(sorted(Object.keys(detail)), sorted(DETAIL_FIELDS));
    assert.match(detail.contest_id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.ok(Math.abs(detail.created_at_ms - Date.now()) < 60_000);
    assert.deepEqual(
      { ...detail, markets: undefined, created_at_ms: undefined },
      {
        contest_id: detail.contest_id,
        title: 'Mentions night',
        category: 'mentions',
        status: 'open',
        bet_amount_micros: 1_000_000,
        protocol_prize_pool_micros: 5_000_000,
        total_pot_micros: 5_000_000,
        entries_filled: 0,
        entry_cap: 25,
        entry_opens_at_ms: closesMs - 7_200_000,
        betting_closes_ms: closesMs,
        live_ends_at_ms: closesMs + 60_000,
        resolved_at_ms: null,
        created_at_ms: undefined,
        image_url: `/v1/contests/${detail.contest_id}/image`,
        description: 'Pick two',
        bet_type: { kind: 'num_bets', value: 2 },
        game_type: 'lineups',
        winning_split_bps: [6000, 3000],
        markets: undefined,
        caller: null,
      },
    );
    assert.equal(detail.markets.length, 3);
    for (const market of detail.markets) assert.deepEqual(sorted(Object.keys(market)), sorted(MARKET_FIELDS));
    assert.deepEqual(detail.markets[0], {
      market_id: marketIds[0],
      category: 'politics',
      name: 'market 0',
      description: null,
      status: 'OPEN',
      outcome: null,
      source_kind: 'test',
      source_event_id: 'event-1',
      source_market_id: 'm-market 0',
      betting_closes_at_ms: detail.markets[0].betting_closes_at_ms,
      live_ends_at_ms: null,
      resolution_time_ms: null,
    });
    assert.equal(typeof detail.markets[0].betting_closes_at_ms, 'number');
    assert.deepEqual(
      detail.markets.map((m: { category: string }) => m.category),
      ['politics', 'tech', 'tech'],
    );

    assertDetailShape(detail);
    const fetched = await getDetail(server, detail.contest_id);
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.body, detail);
  });

  const invalid: Array<[string, (c: ContestConfig) => unknown, string]> = [
    ['bet_type kind outside num_bets | bets_per_category', (c) => ({ ...c, bet_type: { kind: 'parlay', value: 1 } }), '/bet_type/kind'],
    ['bet_type value 0', (c) => ({ ...c, bet_type: { kind: 'num_bets', value: 0 } }), '/bet_type/value'],
    ['num_bets larger than the number of markets', (c) => ({ ...c, bet_type: { kind: 'num_bets', value: 3 } }), '/bet_type/value'],
    [
      'a category with fewer markets than bets_per_category',
      (c) => ({
        ...c,
        bet_type: { kind: 'bets_per_category', value: 2 },
        markets: [
          { ...c.markets[0]!, category: 'a' },
          { ...c.markets[1]!, category: 'b' },
        ],
      }),
      '/bet_type/value',
    ],
    ['game_type outside the four', (c) => ({ ...c, game_type: 'bingo' }), '/game_type'],
    ['winning_split_bps summing over 10000', (c) => ({ ...c, winning_split_bps: [6000, 4001] }), '/winning_split_bps'],
    ['a split share above 10000', (c) => ({ ...c, winning_split_bps: [10_001] }), '/winning_split_bps/0'],
    ['a negative split share', (c) => ({ ...c, winning_split_bps: [-1, 5000] }), '/winning_split_bps/0'],
    ['lineups without a winning split', (c) => ({ ...c, winning_split_bps: [] }), '/winning_split_bps'],
    ['outcast with a winning split', (c) => ({ ...c, game_type: 'outcast', winning_split_bps: [10_000] }), '/winning_split_bps'],
    ['the same market twice', (c) => ({ ...c, markets: [c.markets[0], c.markets[0]] }), '/markets/1/market_id'],
    ['no markets', (c) => ({ ...c, markets: [] }), '/markets'],
    ['an empty category label', (c) => ({ ...c, markets: [{ ...c.markets[0]!, category: '' }] }), '/markets/0/category'],
    [
      'a category label with surrounding spaces',
      (c) => ({ ...c, markets: [{ ...c.markets[0]!, category: ' a ' }] }),
      '/markets/0/category',
    ],
    ['category outside mentions | sports | culture', (c) => ({ ...c, category: 'finance' }), '/category'],
    ['betting_closes_ms in the past', (c) => ({ ...c, betting_closes_ms: Date.now() - 1000 }), '/betting_closes_ms'],
    ['entry_opens_at_ms not before betting_closes_ms', (c) => ({ ...c, entry_opens_at_ms: c.betting_closes_ms }), '/entry_opens_at_ms'],
    ['live_ends_at_ms before betting_closes_ms', (c) => ({ ...c, live_ends_at_ms: c.betting_closes_ms - 1 }), '/live_ends_at_ms'],
    ['entry_cap 0', (c) => ({ ...c, entry_cap: 0 }), '/entry_cap'],
    ['bet_amount_micros 0', (c) => ({ ...c, bet_amount_micros: 0 }), '/bet_amount_micros'],
    ['a negative protocol_prize_pool_micros', (c) => ({ ...c, protocol_prize_pool_micros: -1 }), '/protocol_prize_pool_micros'],
    ['an unsafe integer amount', (c) => ({ ...c, bet_amount_micros: 2 ** 53 }), '/bet_amount_micros'],
    ['a pot that could exceed 2^53-1', (c) => ({ ...c, bet_amount_micros: 2 ** 52, entry_cap: 4 }), '/entry_cap'],
    ['an unknown field', (c) => ({ ...c, prize: 1 }), '/prize'],
    ['a missing title', (c) => ({ ...c, title: undefined }), '/title'],
  ];
  for (const [what, mutate, path] of invalid) {
    it(`refuses ${what}: 400 VALIDATION_FAILED at ${path}`, async () => {
      const res = await postContest(server, mutate(contestConfig(marketIds.slice(0, 2))));
      assertApiError(res, 400, 'VALIDATION_FAILED');
      assert.ok(
        res.body.details.some((d: { path: string }) => d.path === path),
        `expected a detail at ${path}: ${JSON.stringify(res.body.details)}`,
      );
    });
  }

  it('refuses an unknown market: 404 MARKET_NOT_FOUND', async () => {
    assertApiError(await postContest(server, contestConfig([marketIds[0]!, 999_999])), 404, 'MARKET_NOT_FOUND');
  });

  it('refuses a market that is no longer open: 422 MARKET_NOT_OPEN', async () => {
    const resolved = await createMarket(server, 'resolved before the contest');
    await resolveMarket(server, resolved.market_id, 'YES');
    assertApiError(await postContest(server, contestConfig([marketIds[0]!, resolved.market_id])), 422, 'MARKET_NOT_OPEN');
  });

  it('is for admins only: 401 without a bearer, 403 with a user token', async () => {
    const user = await loginWallet(server);
    const config = contestConfig(marketIds.slice(0, 1));
    assertApiError(await client(server.baseUrl).post('/v1/admin/contests', config), 401, 'UNAUTHENTICATED');
    assertApiError(await client(server.baseUrl, user.token).post('/v1/admin/contests', config), 403, 'FORBIDDEN');
  });
});

describe('contest images', () => {
  for (const [contentType, bytes] of [
    ['image/png', PNG_BYTES],
    ['image/jpeg', JPEG_BYTES],
    ['image/webp', WEBP_BYTES],
  ] as const) {
    it(`serves an uploaded ${contentType} at image_url with its type`, async () => {
      const detail = await createContest(server, contestConfig(marketIds.slice(0, 1), { image: { base64: bytes.toString('base64') } }));
      const res = await fetch(server.baseUrl + String(detail['image_url']));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), contentType);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes);
    });
  }

  it('serves a default image per category when none was uploaded', async () => {
    const bodies = new Set<string>();
    for (const category of ['mentions', 'sports', 'culture'] as const) {
      const detail = await createContest(server, contestConfig(marketIds.slice(0, 1), { category }));
      const res = await fetch(server.baseUrl + String(detail['image_url']));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/svg+xml');
      const text = await res.text();
      assert.match(text, /^<svg /);
      bodies.add(text);
    }
    assert.equal(bodies.size, 3);
  });

  it('refuses an upload whose bytes are not PNG, JPEG or WebP, or contradict content_type', async () => {
    const gif = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1').toString('base64');
    assertApiError(await postContest(server, contestConfig(marketIds.slice(0, 1), { image: { base64: gif } })), 400, 'VALIDATION_FAILED');
    const claimed = { base64: PNG_BYTES.toString('base64'), content_type: 'image/jpeg' as const };
    assertApiError(await postContest(server, contestConfig(marketIds.slice(0, 1), { image: claimed })), 400, 'VALIDATION_FAILED');
  });

  it('accepts a 1 MiB image and refuses a larger one', async () => {
    const exact = Buffer.alloc(1024 * 1024, 7);
    PNG_BYTES.copy(exact);
    const detail = await createContest(server, contestConfig(marketIds.slice(0, 1), { image: { base64: exact.toString('base64') } }));
    const served = await fetch(server.baseUrl + String(detail['image_url']));
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), exact);
    const over = Buffer.alloc(1024 * 1024 + 3, 7);
    PNG_BYTES.copy(over);
    const res = await postContest(server, contestConfig(marketIds.slice(0, 1), { image: { base64: over.toString('base64') } }));
    assertApiError(res, 400, 'VALIDATION_FAILED');
  });

  it('is 404 CONTEST_NOT_FOUND for an unknown contest', async () => {
    const res = await client(server.baseUrl).get('/v1/contests/00000000-0000-4000-8000-000000000000/image');
    assertApiError(res, 404, 'CONTEST_NOT_FOUND');
  });
});

describe('GET /v1/contests and GET /v1/contests/{id}', () => {
  it('lists every game_type newest first, filtered by status and category, with summary fields only', async () => {
    const sports = await createContest(server, contestConfig(marketIds.slice(0, 1), { category: 'sports', title: 'S1' }));
    const survivor = await createContest(
      server,
      contestConfig(marketIds.slice(0, 1), {
        category: 'sports',
        title: 'S2',
        game_type: 'survivor',
        winning_split_bps: [],
      }),
    );
    const streak = await createContest(
      server,
      contestConfig(marketIds.slice(0, 1), {
        category: 'sports',
        title: 'S3',
        game_type: 'streak',
        winning_split_bps: [],
      }),
    );
    const res = await client(server.baseUrl).get('/v1/contests?category=sports&status=open');
    assert.equal(res.status, 200);
    const ids = res.body.contests.map((c: { contest_id: string }) => c.contest_id);
    assert.deepEqual(ids.slice(0, 3), [streak.contest_id, survivor.contest_id, sports.contest_id]);
    for (const summary of res.body.contests) {
      assert.deepEqual(sorted(Object.keys(summary)), sorted(SUMMARY_FIELDS));
      assert.equal(summary.category, 'sports');
      assert.equal(summary.status, 'open');
    }
    assert.deepEqual(
      res.body.contests.find((c: { contest_id: string }) => c.contest_id === sports.contest_id),
      {
        contest_id: sports.contest_id,
        title: 'S1',
        category: 'sports',
        status: 'open',
        game_type: 'lineups',
        bet_type: { kind: 'num_bets', value: 1 },
        bet_amount_micros: 1_000_000,
        total_pot_micros: 0,
        entries_filled: 0,
        entry_cap: 100,
        betting_closes_ms: sports['betting_closes_ms'],
        image_url: `/v1/contests/${sports.contest_id}/image`,
        created_at_ms: sports['created_at_ms'],
      },
    );
    assert.ok(listSchema.Check(res.body));
    const limited = await client(server.baseUrl).get('/v1/contests?category=sports&limit=2');
    assert.deepEqual(
      limited.body.contests.map((c: { contest_id: string }) => c.contest_id),
      [streak.contest_id, survivor.contest_id],
    );
    const culture = await client(server.baseUrl).get('/v1/contests?category=culture');
    assert.ok(culture.body.contests.every((c: { category: string }) => c.category === 'culture'));
    assertApiError(await client(server.baseUrl).get('/v1/contests?status=closed'), 400, 'VALIDATION_FAILED');
    // The contract's own form: empty values filter nothing.
    const unfiltered = await client(server.baseUrl).get('/v1/contests?status=&category=');
    const all = await client(server.baseUrl).get('/v1/contests');
    assert.equal(unfiltered.status, 200);
    assert.deepEqual(unfiltered.body, all.body);
    assert.ok(unfiltered.body.contests.some((c: { category: string }) => c.category === 'sports'));
  });

  it('serves lineups and outcast details; survivor and streak are 404 CONTEST_NOT_FOUND', async () => {
    const outcast = await createContest(server, contestConfig(marketIds.slice(0, 1), { game_type: 'outcast', winning_split_bps: [] }));
    assert.equal((await getDetail(server, outcast.contest_id)).status, 200);
    for (const gameType of ['survivor', 'streak'] as const) {
      const contest = await createContest(server, contestConfig(marketIds.slice(0, 1), { game_type: gameType, winning_split_bps: [] }));
      assertApiError(await getDetail(server, contest.contest_id), 404, 'CONTEST_NOT_FOUND');
      const listed = await client(server.baseUrl).get(`/v1/contests?status=open`);
      assert.ok(listed.body.contests.some((c: { contest_id: string }) => c.contest_id === contest.contest_id));
    }
    assertApiError(await getDetail(server, '00000000-0000-4000-8000-000000000000'), 404, 'CONTEST_NOT_FOUND');
    assertApiError(await getDetail(server, 'not-a-uuid'), 400, 'VALIDATION_FAILED');
  });

  it('caller is null without a bearer, and {joined, entries} with one', async () => {
    const contest = await createContest(server, contestConfig(marketIds.slice(0, 2), { protocol_prize_pool_micros: 1_000 }));
    const user = await book.fundedUser(10_000_000);
    const other = await loginWallet(server);

    assert.equal((await getDetail(server, contest.contest_id)).body.caller, null);
    assert.deepEqual((await getDetail(server, contest.contest_id, other.token)).body.caller, { joined: false, entries: [] });

    const entered = await enter(server, user, contest.contest_id, [up(marketIds[1]!)]);
    assert.equal(entered.status, 201, JSON.stringify(entered.body));
    book.staked(user, 1_000_000);
    const detail = (await getDetail(server, contest.contest_id, user.token)).body;
    assertDetailShape(detail);
    assert.equal(detail.entries_filled, 1);
    assert.equal(detail.total_pot_micros, 1_001_000);
    assert.equal(detail.caller.joined, true);
    assert.equal(detail.caller.entries.length, 1);
    const entry = detail.caller.entries[0];
    assert.deepEqual(sorted(Object.keys(entry)), sorted(ENTRY_FIELDS));
    assert.ok(Math.abs(entry.created_at_ms - Date.now()) < 60_000);
    assert.deepEqual(
      { ...entry, created_at_ms: 0 },
      {
        entry_index: 0,
        created_at_ms: 0,
        picks: [{ market_id: marketIds[1], direction: 'up', outcome: 'pending' }],
        open_leg_count: 1,
        resolved_win_count: 0,
        payout_micros: null,
        net_payout_micros: null,
        rank: null,
      },
    );
    // Another user's view never shows this entry.
    assert.deepEqual((await getDetail(server, contest.contest_id, other.token)).body.caller, { joined: false, entries: [] });
    assert.equal((await getDetail(server, contest.contest_id)).body.caller, null);
  });

  it('a bad bearer on the optional-auth detail is 401, a non-user token 403, never a silent null', async () => {
    const contest = await createContest(server, contestConfig(marketIds.slice(0, 1)));
    assertApiError(await getDetail(server, contest.contest_id, 'not-a-real-session-token'), 401, 'UNAUTHENTICATED');
    const malformed = await client(server.baseUrl).get(`/v1/contests/${contest.contest_id}`, { headers: { authorization: 'Basic abc' } });
    assertApiError(malformed, 401, 'UNAUTHENTICATED');
    const user = await loginWallet(server);
    assert.equal((await client(server.baseUrl, user.token).post('/v1/auth/logout')).status, 200);
    assertApiError(await getDetail(server, contest.contest_id, user.token), 401, 'UNAUTHENTICATED');
    assertApiError(await getDetail(server, contest.contest_id, server.adminToken), 403, 'FORBIDDEN');
  });
});

describe('POST /v1/admin/contests/{id}/void', () => {
  it('refunds every entry, closes entry, and is idempotent', async () => {
    const contest = await createContest(server, contestConfig(marketIds.slice(0, 2), { protocol_prize_pool_micros: 7 }));
    const [a, b] = [await book.fundedUser(5_000_000), await book.fundedUser(5_000_000)];
    for (const user of [a!, b!, a!]) {
      assert.equal((await enter(server, user, contest.contest_id, [up(marketIds[0]!)])).status, 201);
      book.staked(user, 1_000_000);
    }
    await book.check();
    const voided = await client(server.baseUrl, server.adminToken).post(`/v1/admin/contests/${contest.contest_id}/void`);
    assert.equal(voided.status, 200, JSON.stringify(voided.body));
    assert.equal(voided.body.status, 'voided');
    assert.equal(typeof voided.body.resolved_at_ms, 'number');
    book.refunded(a!, 2_000_000);
    book.refunded(b!, 1_000_000);
    await book.check();

    const detail = (await getDetail(server, contest.contest_id, a!.token)).body;
    assert.equal(detail.status, 'voided');
    assert.deepEqual(
      detail.caller.entries.map((e: Record<string, unknown>) => [
        e['entry_index'],
        e['payout_micros'],
        e['net_payout_micros'],
        e['rank'],
        e['open_leg_count'],
      ]),
      [
        [0, 1_000_000, 0, null, 0],
        [1, 1_000_000, 0, null, 0],
      ],
    );
    assert.equal(detail.caller.entries[0].picks[0].outcome, 'voided');

    const again = await client(server.baseUrl, server.adminToken).post(`/v1/admin/contests/${contest.contest_id}/void`);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, voided.body);
    await book.check();
    assertApiError(await enter(server, a!, contest.contest_id, [up(marketIds[0]!)]), 422, 'CONTEST_CLOSED');
    assertApiError(
      await client(server.baseUrl, server.adminToken).post('/v1/admin/contests/00000000-0000-4000-8000-000000000000/void'),
      404,
      'CONTEST_NOT_FOUND',
    );
  });

  it('cannot void a resolved contest: 422 CONTEST_CLOSED', async () => {
    const market = await createMarket(server, 'void-after-resolve');
    const contest = await createContest(server, contestConfig([market.market_id]));
    await resolveMarket(server, market.market_id, 'NO');
    assert.equal((await getDetail(server, contest.contest_id)).body.status, 'resolved');
    const res = await client(server.baseUrl, server.adminToken).post(`/v1/admin/contests/${contest.contest_id}/void`);
    assertApiError(res, 422, 'CONTEST_CLOSED');
  });
});
