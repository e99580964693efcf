// History and idempotent entries (contract section 13; issue 20): a taker's RFQs and contest entries of every
// game type, newest first, paged by the one convention; entries with an idempotency key made once however
// they are retried. Against the real server; the read-count check runs in process on a real store.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { userRfqsPage, USER_RFQS_SCAN_MAX } from '../../src/rfq/history.js';
import { userRfqKey, type RfqRecord } from '../../src/records/rfqs.js';
import { openStore } from '../../src/store/db.js';
import { contestConfig, createContest, enter, up } from '../helpers/contests.js';
import { client, type HttpResult } from '../helpers/http.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { balanceOf, fundedTaker, unsignedBody } from '../helpers/rfq.js';
import { restartServer, startServer, type TestServer } from '../helpers/server.js';
import { fundedUser } from '../helpers/users.js';

const WAGER = 1_000_000;

/** Every page of `path` (with `query`), following next_cursor; `between` runs after each page. */
async function walk(
  api: ReturnType<typeof client>,
  path: string,
  key: string,
  query: string,
  between: () => Promise<void> = async () => {},
) {
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 100, 'next_cursor never became null');
    const res: HttpResult = await api.get(`${path}?${query}${cursor === null ? '' : `&cursor=${cursor}`}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    items.push(...(res.body[key] as Array<Record<string, unknown>>));
    cursor = res.body.next_cursor as string | null;
    if (cursor === null) return items;
    await between();
  }
}

describe('GET /v1/user/rfqs', () => {
  let server: TestServer;
  let maker: ConnectedMaker;
  before(async () => {
    server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '10000' } });
    maker = await connectNewMaker(server); // silent: RFQs stay pending until cancelled
  });
  after(async () => {
    await maker.close();
    await server.stop();
  });

  it("lists the caller's RFQs newest first; a walk while new ones arrive repeats nothing and skips nothing that existed", async () => {
    const { market, api } = await fundedTaker(server, 100 * WAGER);
    const other = await fundedTaker(server, 10 * WAGER);
    const leg = { market_id: market, direction: 'up' as const };
    const made: string[] = [];
    for (let i = 0; i < 7; i++)
      made.push((await api.post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: WAGER }))).body.request_id as string);
    await other.api.post('/v1/rfq/unsigned', unsignedBody([{ market_id: other.market, direction: 'up' }], { wager_micros: WAGER }));
    const arrived: string[] = [];
    const listed = await walk(api, '/v1/user/rfqs', 'rfqs', 'limit=3', async () => {
      arrived.push((await api.post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: WAGER }))).body.request_id as string);
    });
    const ids = listed.map((r) => r.request_id as string);
    assert.equal(new Set(ids).size, ids.length, 'nothing repeated');
    assert.deepEqual(
      ids.filter((id) => made.includes(id)),
      [...made].reverse(),
      'every RFQ that existed, newest first',
    );
    assert.ok(
      ids.every((id) => made.includes(id) || arrived.includes(id)),
      "only the caller's own",
    );
    const first = listed.find((r) => r.request_id === made[0])!;
    assert.deepEqual(
      { status: first.status, legs: first.legs, wager_micros: first.wager_micros, quotes_received: first.quotes_received },
      { status: 'pending', legs: [leg], wager_micros: String(WAGER), quotes_received: 0 },
    );
    assert.equal(typeof first.created_at_ms, 'number');
    for (const id of [...made, ...arrived]) await api.post(`/v1/rfq/${id}/cancel`);
  });

  it('filters by status, and refuses a cursor of another filter or another route at /cursor', async () => {
    const { market, api } = await fundedTaker(server, 100 * WAGER);
    const leg = { market_id: market, direction: 'up' as const };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await api.post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: WAGER }))).body.request_id as string);
    for (const id of ids.slice(0, 3)) await api.post(`/v1/rfq/${id}/cancel`);
    const cancelled = await walk(api, '/v1/user/rfqs', 'rfqs', 'status=cancelled&limit=2');
    assert.deepEqual(
      cancelled.map((r) => r.request_id),
      ids.slice(0, 3).reverse(),
    );
    const pending = await walk(api, '/v1/user/rfqs', 'rfqs', 'status=pending&limit=2');
    assert.deepEqual(
      pending.map((r) => r.request_id),
      ids.slice(3).reverse(),
    );

    const page = await api.get('/v1/user/rfqs?status=cancelled&limit=1');
    const cursor = page.body.next_cursor as string;
    for (const wrong of [
      `/v1/user/rfqs?status=pending&cursor=${cursor}`, // another filter
      `/v1/user/contest_entries?cursor=${cursor}`, // another route
      `/v1/user/rfqs?cursor=${cursor.slice(0, -2)}`, // truncated
      `/v1/user/rfqs?cursor=${Buffer.from('["user-rfqs","x",1,"a"]').toString('base64url')}`, // forged
    ]) {
      const res = await api.get(wrong);
      assert.deepEqual([res.status, res.body.code, res.body.details?.[0]?.path], [400, 'VALIDATION_FAILED', '/cursor'], wrong);
    }
    for (const id of ids.slice(3)) await api.post(`/v1/rfq/${id}/cancel`);
  });
});

describe('the cost of a page of RFQ history (in process)', () => {
  it('an unfiltered page reads its own rows only, and a filtered one at most the scan bound, whatever the history holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parlayd-history-'));
    const store = openStore(dir);
    try {
      const userId = randomUUID();
      const total = USER_RFQS_SCAN_MAX + 500;
      await store.transact(() => {
        for (let i = 0; i < total; i++) {
          const requestId = randomUUID();
          // Whole records: the view checks what it reads (rfq-records.ts).
          const record: RfqRecord = {
            requestId,
            userId,
            wallet: '0x' + '1'.repeat(40),
            kind: 'unsigned',
            legs: [],
            wagerMicros: '1',
            minOddsE4: 10_000,
            toleranceBps: 0,
            orderType: 2,
            isShielded: false,
            createdAtMs: 1_000 + i,
            expiresAtMs: 2_000 + i,
            status: 'timeout',
            quotesReceived: 0,
            fill: null,
            error: null,
            terminalAtMs: 2_000 + i,
          };
          void store.db<RfqRecord>('rfqs').put(requestId, record);
          void store.db<true>('userRfqs').put(userRfqKey(userId, 1_000 + i, requestId), true);
        }
      });
      const rfqs = store.db<RfqRecord>('rfqs') as unknown as { get: (key: string) => unknown };
      const get = rfqs.get.bind(rfqs);
      let reads = 0;
      rfqs.get = (key) => {
        reads++;
        return get(key);
      };
      const page = userRfqsPage(store, userId, { status: undefined, limit: 10, after: null });
      assert.deepEqual([page.rfqs.length, reads], [10, 10]);
      assert.equal(page.rfqs[0]!.created_at_ms, 1_000 + total - 1, 'newest first');
      reads = 0;
      const filtered = userRfqsPage(store, userId, { status: 'completed', limit: 10, after: null });
      assert.deepEqual([filtered.rfqs.length, reads], [0, USER_RFQS_SCAN_MAX], 'a filtered page stops at the scan bound');
      assert.ok(filtered.next !== null, 'and says where the walk goes on');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('GET /v1/user/contest_entries and idempotent entries', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { PARLAYD_SHARDS: '2' } });
  });
  after(async () => {
    await server.stop();
  });

  it("lists entries of every game type, survivor and streak included, newest first, and one contest's alone", async () => {
    const user = await fundedUser(server, 100 * WAGER);
    const api = client(server.baseUrl, user.token);
    const markets = await Promise.all([1, 2].map((i) => createMarket(server, `h${i}`)));
    const pick = [up(markets[0]!.market_id)];
    const contests: string[] = [];
    for (const gameType of ['lineups', 'survivor', 'streak'] as const) {
      const config = contestConfig([markets[0]!.market_id, markets[1]!.market_id], {
        bet_amount_micros: WAGER,
        game_type: gameType,
        ...(gameType === 'lineups' ? {} : { winning_split_bps: [] }),
      });
      const contest = await createContest(server, config);
      contests.push(contest.contest_id);
      for (let i = 0; i < 2; i++) assert.equal((await enter(server, user, contest.contest_id, pick)).status, 201);
    }
    const all = await walk(api, '/v1/user/contest_entries', 'entries', 'limit=4');
    assert.deepEqual(
      all.map((e) => [e.contest_id, e.entry_index]),
      [
        [contests[2], 1],
        [contests[2], 0],
        [contests[1], 1],
        [contests[1], 0],
        [contests[0], 1],
        [contests[0], 0],
      ],
    );
    const survivor = all.find((e) => e.contest_id === contests[1])!;
    // The list is the contract's own: its money is decimal integer strings (contract section 1).
    assert.deepEqual(
      {
        game_type: survivor.game_type,
        state: survivor.state,
        stake_micros: survivor.stake_micros,
        payout_micros: survivor.payout_micros,
        net_payout_micros: survivor.net_payout_micros,
        picks: survivor.picks,
      },
      {
        game_type: 'survivor',
        state: 'open',
        stake_micros: String(WAGER),
        payout_micros: null,
        net_payout_micros: null,
        picks: [{ ...pick[0], outcome: 'pending' }],
      },
    );
    const one = await walk(api, '/v1/user/contest_entries', 'entries', `contest_id=${contests[1]}&limit=1`);
    assert.deepEqual(
      one.map((e) => e.entry_index),
      [1, 0],
    );
    const cursor = (await api.get(`/v1/user/contest_entries?contest_id=${contests[1]}&limit=1`)).body.next_cursor as string;
    const foreign = await api.get(`/v1/user/contest_entries?contest_id=${contests[0]}&cursor=${cursor}`);
    assert.deepEqual([foreign.status, foreign.body.details?.[0]?.path], [400, '/cursor']);
  });

  it('20 racing retries of one idempotency key make one entry, reserved once; other content is 409; a restart keeps the key', async () => {
    const user = await fundedUser(server, 10 * WAGER);
    const api = client(server.baseUrl, user.token);
    const market = await createMarket(server, 'idem');
    const other = await createMarket(server, 'idem-2');
    const contest = await createContest(
      server,
      contestConfig([market.market_id, other.market_id], { bet_amount_micros: WAGER, entry_cap: 100 }),
    );
    const body = { contest_id: contest.contest_id, bets: [up(market.market_id)], idempotency_key: randomUUID() };
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.post('/v1/user/contest_bet', body)));
    assert.deepEqual(
      answers.map((a) => a.status).sort((a, b) => a - b),
      [...Array<number>(19).fill(200), 201],
    );
    for (const a of answers) assert.deepEqual(a.body, { contest_id: contest.contest_id, entry_index: 0, reserved_micros: String(WAGER) });
    assert.equal((await balanceOf(server, user)).reserved, BigInt(WAGER), 'reserved once');
    // The key's hex digits in upper case are the same UUID, so the same key.
    const upper = await api.post('/v1/user/contest_bet', { ...body, idempotency_key: body.idempotency_key.toUpperCase() });
    assert.deepEqual([upper.status, upper.body.entry_index], [200, 0]);
    assert.equal((await balanceOf(server, user)).reserved, BigInt(WAGER), 'reserved once');

    const otherPicks = await api.post('/v1/user/contest_bet', { ...body, bets: [up(other.market_id)] });
    assert.deepEqual([otherPicks.status, otherPicks.body.code], [409, 'IDEMPOTENCY_CONFLICT']);
    const second = await createContest(server, contestConfig([market.market_id], { bet_amount_micros: WAGER }));
    const otherContest = await api.post('/v1/user/contest_bet', { ...body, contest_id: second.contest_id });
    assert.deepEqual([otherContest.status, otherContest.body.code], [409, 'IDEMPOTENCY_CONFLICT']);

    await server.stop();
    server = await restartServer(server);
    const restartedApi = client(server.baseUrl, user.token);
    const replay = await restartedApi.post('/v1/user/contest_bet', body);
    assert.deepEqual([replay.status, replay.body.entry_index], [200, 0]);
    assert.equal((await balanceOf(server, user)).reserved, BigInt(WAGER));
    const listed = await walk(restartedApi, '/v1/user/contest_entries', 'entries', 'limit=10');
    assert.equal(listed.length, 1);
  });
});
