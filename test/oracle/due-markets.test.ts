// GET /v1/admin/markets?due=true (contract sections 12 and 13): the unresolved markets whose resolution time
// has passed, oldest first, paged with an opaque cursor; and a data directory written before the oracle
// fields and the due index existed still works.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { validationFailed } from '../helpers/errors.js';
import { client } from '../helpers/http.js';
import { getMarket, postAdminReports, waitForMarket, windowMarket } from '../helpers/oracle.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { openStore } from '../../src/store/db.js';
import { marketKey } from '../../src/records/markets.js';

describe('the admin list of due markets', () => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;
  const dueIds: number[] = []; // oldest due first

  async function mention(dueAtMs: number): Promise<number> {
    const res = await admin.post('/v1/admin/mention-markets', {
      name: 'm',
      source_kind: 'test',
      source_event_id: 'e',
      source_market_id: String(dueAtMs),
      betting_closes_at_ms: dueAtMs - 1,
      resolution_time_ms: dueAtMs,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.market_id as number;
  }

  before(async () => {
    server = await startServer({ env: { PARLAYD_PRICE_DURATIONS_SECS: '60' } });
    admin = client(server.baseUrl, server.adminToken);
    const nowMs = Date.now();
    // Created in another order than their due times.
    const offsets = [5, 1, 7, 3, 2, 6, 4];
    const byOffset = new Map<number, number>();
    for (const k of offsets) byOffset.set(k, await mention(nowMs - k * 60_000));
    for (const k of [7, 6, 5, 4, 3, 2, 1]) dueIds.push(byOffset.get(k)!);
    await mention(nowMs + 3_600_000); // not due yet
    const resolved = await mention(nowMs - 10 * 60_000);
    assert.equal((await admin.post(`/v1/admin/markets/${resolved}/resolve`, { outcome: 'NO' })).status, 200);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('pages the due, unresolved markets oldest first until next_cursor is null', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: any } = await admin.get(
        `/v1/admin/markets?due=true&limit=3${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body), ['markets', 'next_cursor']);
      assert.ok(res.body.markets.length <= 3);
      for (const m of res.body.markets) assert.equal(m.status, 'OPEN');
      seen.push(...res.body.markets.map((m: { market_id: number }) => m.market_id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor !== null);
    assert.deepEqual(seen, dueIds);
    assert.equal(pages, 3);
    const all = await admin.get('/v1/admin/markets?due=true');
    assert.deepEqual(
      all.body.markets.map((m: { market_id: number }) => m.market_id),
      dueIds,
    );
    assert.equal(all.body.next_cursor, null);
  });

  it('a market resolved since leaves the list', async () => {
    const first = dueIds[0]!;
    assert.equal((await admin.post(`/v1/admin/markets/${first}/resolve`, { outcome: 'YES' })).status, 200);
    const res = await admin.get('/v1/admin/markets?due=true&limit=1');
    assert.deepEqual(
      res.body.markets.map((m: { market_id: number }) => m.market_id),
      [dueIds[1]],
    );
    dueIds.shift();
  });

  it('a cursor this route did not issue is 400 VALIDATION_FAILED at /cursor; limits are 1..1000; due=true is required; admin only', async () => {
    const badCursor = validationFailed('/cursor', 'cursor is not a next_cursor of this route');
    for (const cursor of ['abc', Buffer.from('0000000000000001:x').toString('base64url'), Buffer.from('1:1').toString('base64url')]) {
      const res = await admin.get(`/v1/admin/markets?due=true&cursor=${cursor}`);
      assert.deepEqual({ status: res.status, body: res.body }, badCursor);
    }
    assert.equal((await admin.get('/v1/admin/markets?due=true&limit=0')).status, 400);
    assert.equal((await admin.get('/v1/admin/markets?due=true&limit=1001')).status, 400);
    assert.equal((await admin.get('/v1/admin/markets?due=true&limit=1000')).status, 200);
    assert.equal((await admin.get('/v1/admin/markets')).status, 400);
    assert.equal((await client(server.baseUrl).get('/v1/admin/markets?due=true')).status, 401);
  });
});

describe('a data directory written before the oracle', () => {
  it('reads old markets with null oracle fields, lists them when due, and resolves their windows', async () => {
    let server = await startServer({ env: { PARLAYD_PRICE_ASSETS: 'BTC', PARLAYD_PRICE_DURATIONS_SECS: '60' } });
    try {
      const admin = client(server.baseUrl, server.adminToken);
      const pastMs = Math.floor((Date.now() - 600_000) / 60_000) * 60_000;
      const window = await windowMarket(server, 'BTC', 60, pastMs);
      const created = await admin.post('/v1/admin/mention-markets', {
        name: 'old',
        source_kind: 'test',
        source_event_id: 'e',
        source_market_id: 'old',
        betting_closes_at_ms: Date.now() - 1_000,
      });
      const mentionId = created.body.market_id as number;
      await server.stop();
      // Back to what the previous version wrote: records without the three fields, no due index.
      const store = openStore(server.dataDir);
      await store.transact(() => {
        for (const id of [window.market_id, mentionId]) {
          const {
            resolved_by: _a,
            start_price_e8: _b,
            end_price_e8: _c,
            ...old
          } = store.db<Record<string, unknown>>('markets').get(marketKey(id))!;
          void store.db('markets').put(marketKey(id), old);
        }
        for (const key of store.db<true>('marketsDue').getKeys()) void store.db('marketsDue').remove(key);
        void store.db('meta').remove('index:marketsDue');
      });
      assert.equal(store.db<Record<string, unknown>>('markets').get(marketKey(mentionId))!['resolved_by'], undefined);
      await store.close();

      server = await restartServer(server);
      const mentionRes = await getMarket(server, mentionId);
      assert.deepEqual(
        [mentionRes.body.market.resolved_by, mentionRes.body.market.start_price_e8, mentionRes.body.market.end_price_e8],
        [null, null, null],
      );
      const due = await client(server.baseUrl, server.adminToken).get('/v1/admin/markets?due=true');
      assert.deepEqual(
        due.body.markets.map((m: { market_id: number }) => m.market_id),
        [window.market_id, mentionId],
      );
      const reports = [
        { asset: 'BTC', ts_ms: window.window_start_ms, price_e8: 10 },
        { asset: 'BTC', ts_ms: window.window_end_ms, price_e8: 9 },
      ];
      assert.equal((await postAdminReports(server, reports)).body.accepted, 2);
      const resolved = await waitForMarket(server, window.market_id, (m) => m['status'] !== 'OPEN');
      assert.deepEqual([resolved['outcome'], resolved['resolved_by']], ['NO', 'oracle']);
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });
});
