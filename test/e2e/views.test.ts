// The money views of contract section 11: a user's positions and journal, a maker's fills, each paged by the
// one convention (section 13). Against the real server with two RFQ shards, so a maker's fills come from
// takers of both shards; the merge order and the scan bound of the fills page run in process on a real store.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makerFillsPage } from '../../src/rfq/maker-fills-view.js';
import { fillKey, type FillRecord } from '../../src/records/fills.js';
import { newRequestId, shardOfUser } from '../../src/rfq/ids.js';
import { VIEWS_SCAN_MAX } from '../../src/contract/views.js';
import { openStore } from '../../src/store/db.js';
import { client, type HttpResult } from '../helpers/http.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { createMarket, resolveMarket } from '../helpers/markets.js';
import { autoQuote, unsignedBody, type LegBody } from '../helpers/rfq.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet, type TestUser } from '../helpers/users.js';

const SHARDS = 2;
const WAGER = 4_000_000;
const ODDS = 2.5;
const PAYOUT = 10_000_000; // floor(4 USDC × 2.5)
const FUNDS = 100_000_000;

type Api = ReturnType<typeof client>;
type Row = Record<string, unknown>;

/** Every page of `path`, following next_cursor until null. */
async function walk(api: Api, path: string, key: string): Promise<Row[]> {
  const items: Row[] = [];
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 100, 'next_cursor never became null');
    const sep = path.includes('?') ? '&' : '?';
    const res: HttpResult = await api.get(`${path}${cursor === null ? '' : `${sep}cursor=${cursor}`}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const rows = res.body[key] as Row[];
    // Contract section 13: next_cursor is null on the last page, so a page it leads to is never empty here
    // (these walks are far below the views' scan bound, which may end a filtered page early).
    if (pages > 0) assert.ok(rows.length > 0, `${path}: the page before this empty one had a next_cursor`);
    items.push(...rows);
    cursor = res.body.next_cursor as string | null;
    if (cursor === null) return items;
  }
}

/** A logged-in user owned by RFQ shard `shard` of SHARDS, funded. */
async function takerOfShard(server: TestServer, shard: number): Promise<TestUser> {
  for (let tries = 0; tries < 64; tries++) {
    const user = await loginWallet(server);
    if (shardOfUser(user.userId, SHARDS) !== shard) continue;
    await credit(server, user.address, FUNDS);
    return user;
  }
  throw new Error(`no user of shard ${shard} in 64 logins`);
}

describe('the money views (contract section 11), end to end', () => {
  let server: TestServer;
  let maker: ConnectedMaker;
  let idle: ConnectedMaker;
  let takers: [TestUser, TestUser];
  // Markets: a resolves YES (up wins), b NO (up loses), c is voided, d stays open.
  let m: { a: number; b: number; c: number; d: number };
  /** Every filled RFQ in creation order, with its taker. */
  const filled: Array<{ requestId: string; taker: TestUser; legs: LegBody[] }> = [];
  let unfilled: string;

  before(async () => {
    server = await startServer({ env: { PARLAYD_SHARDS: String(SHARDS), PARLAYD_QUOTE_WINDOW_MS: '200' } });
    maker = await connectNewMaker(server);
    idle = await connectNewMaker(server); // registered and connected, quotes nothing: no fills of its own
    autoQuote(maker, { odds: ODDS });
    takers = [await takerOfShard(server, 0), await takerOfShard(server, 1)];
    const [a, b, c, d] = [
      (await createMarket(server)).market_id,
      (await createMarket(server)).market_id,
      (await createMarket(server)).market_id,
      (await createMarket(server)).market_id,
    ];
    m = { a: a!, b: b!, c: c!, d: d! };
    const up = (market: number): LegBody => ({ market_id: market, direction: 'up' });
    // Interleaved between the shards, so that newest first across the maker's fills is not key order.
    const plan: Array<[TestUser, LegBody[]]> = [
      [takers[0], [up(m.a)]],
      [takers[1], [up(m.a), up(m.b)]],
      [takers[0], [up(m.b)]],
      [takers[1], [up(m.c)]],
      [takers[0], [up(m.c), up(m.a)]],
      [takers[1], [up(m.d)]],
      [takers[0], [up(m.d)]],
    ];
    for (const [taker, legs] of plan) {
      const res = await client(server.baseUrl, taker.token).post(
        '/v1/rfq/unsigned?wait_ms=5000',
        unsignedBody(legs, { wager_micros: WAGER }),
      );
      assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
      filled.push({ requestId: res.body.request_id as string, taker, legs });
    }
    // Not filled: the maker's odds are below its minimum. Not a position.
    const refused = await client(server.baseUrl, takers[0].token).post(
      '/v1/rfq/unsigned?wait_ms=5000',
      unsignedBody([up(m.d)], { wager_micros: WAGER, min_odds: 3 }),
    );
    assert.equal(refused.body.status, 'failed', JSON.stringify(refused.body));
    unfilled = refused.body.request_id as string;
    await resolveMarket(server, m.a, 'YES');
    await resolveMarket(server, m.b, 'NO');
    await resolveMarket(server, m.c, 'VOID');
  });
  after(async () => {
    await maker.close();
    await idle.close();
    await server.stop(); // and the ledger audit of what the test moved (helpers/server.ts)
  });

  /** What each filled RFQ of the plan became: [status, paid] from the taker's side. */
  const expectedEnd = (legs: LegBody[]): ['won' | 'lost' | 'voided' | 'open', string | null] => {
    const ids = legs.map((l) => l.market_id);
    if (ids.includes(m.b)) return ['lost', '0'];
    if (ids.includes(m.d)) return ['open', null];
    if (ids.includes(m.c)) return ['voided', String(WAGER)];
    return ['won', String(PAYOUT)];
  };
  const legView = (leg: LegBody) => {
    const market = { [m.a]: ['RESOLVED', 'YES'], [m.b]: ['RESOLVED', 'NO'], [m.c]: ['VOIDED', 'VOID'], [m.d]: ['OPEN', null] }[
      leg.market_id
    ]!;
    return { ...leg, market_status: market[0], outcome: market[1] };
  };

  it("lists the caller's filled RFQs only, newest first, each as it stands; open and settled filter them; a page walk of 2 loses nothing", async () => {
    const taker = takers[0];
    const api = client(server.baseUrl, taker.token);
    const positions = await walk(api, '/v1/user/positions?limit=2', 'positions');
    const own = filled.filter((f) => f.taker === taker).reverse();
    assert.deepEqual(
      positions.map((p) => p.request_id),
      own.map((f) => f.requestId),
      'own filled RFQs, newest first',
    );
    assert.ok(!positions.some((p) => p.request_id === unfilled));
    for (const [i, position] of positions.entries()) {
      const [status, paid] = expectedEnd(own[i]!.legs);
      const settledAt = position.settled_at_ms;
      if (status === 'open') assert.equal(settledAt, null);
      else
        assert.ok(typeof settledAt === 'number' && settledAt >= (position.created_at_ms as number), `settled_at_ms ${String(settledAt)}`);
      assert.deepEqual(position, {
        request_id: own[i]!.requestId,
        created_at_ms: position.created_at_ms,
        legs: own[i]!.legs.map(legView),
        filled_wager_micros: String(WAGER),
        odds: ODDS,
        payout_micros: String(PAYOUT),
        status,
        paid_micros: paid,
        settled_at_ms: settledAt,
      });
    }
    const open = await walk(api, '/v1/user/positions?status=open&limit=1', 'positions');
    assert.deepEqual(
      open.map((p) => p.status),
      ['open'],
    );
    const settled = await walk(api, '/v1/user/positions?status=settled&limit=1', 'positions');
    assert.deepEqual(
      settled.map((p) => p.status),
      ['voided', 'lost', 'won'],
    );
  });

  it("lists the caller's journal newest first, one entry per transfer and bucket; the entries add up to the balance, bucket by bucket", async () => {
    const taker = takers[0];
    const api = client(server.baseUrl, taker.token);
    const entries = await walk(api, '/v1/user/journal?limit=3', 'entries');
    // A page of 3 splits two-sided rows (reserve: available and reserved): the walk is the same as one page.
    const onePage = await api.get('/v1/user/journal?limit=100');
    assert.deepEqual(entries, onePage.body.entries);
    assert.equal(onePage.body.next_cursor, null);
    const keys = entries.map((e) => `${e.transfer_id as string} ${e.bucket as string}`);
    assert.equal(new Set(keys).size, keys.length, 'no entry twice');
    const times = entries.map((e) => e.at_ms as number);
    assert.deepEqual(
      times,
      [...times].sort((x, y) => y - x),
      'newest first',
    );
    const oldest = entries.at(-1)!;
    assert.deepEqual(
      { ...oldest, transfer_id: 'x', at_ms: 0, ref: 'credit' },
      { transfer_id: 'x', kind: 'credit', bucket: 'available', delta_micros: String(FUNDS), ref: 'credit', at_ms: 0 },
    );
    const own = new Set(
      filled
        .filter((f) => f.taker === taker)
        .map((f) => `rfq:${f.requestId}`)
        .concat(`rfq:${unfilled}`),
    );
    assert.ok(
      entries.every((e) => own.has(e.ref as string) || (e.ref as string).startsWith('credit:')),
      "only the caller's own movements",
    );
    const sums: Record<string, bigint> = {};
    for (const e of entries) sums[e.bucket as string] = (sums[e.bucket as string] ?? 0n) + BigInt(e.delta_micros as string);
    const balance = (await api.get('/v1/user/balance')).body;
    // One filled RFQ won (+10 − 4), one lost (−4), one voided (0), one open (4 at risk).
    assert.deepEqual(balance, {
      available_micros: String(FUNDS + 6_000_000 - 4_000_000 - WAGER),
      reserved_micros: '0',
      at_risk_micros: String(WAGER),
      pending_withdrawal_micros: '0',
    });
    assert.deepEqual(
      {
        available: sums['available'],
        reserved: sums['reserved'] ?? 0n,
        at_risk: sums['at_risk'],
        pending: sums['pending_withdrawal'] ?? 0n,
      },
      { available: BigInt(balance.available_micros), reserved: 0n, at_risk: BigInt(WAGER), pending: 0n },
    );
    const kinds = new Set(entries.map((e) => e.kind));
    assert.deepEqual([...kinds].sort(), ['credit', 'fill', 'release', 'reserve', 'settle_liability', 'settle_stake']);
  });

  it("lists the maker's fills from both shards newest first, each with its result for the maker; the settled results mirror taker_pnl's", async () => {
    const api = client(server.baseUrl, maker.sessionToken);
    const fills = await walk(api, '/v1/mm/fills?limit=2', 'fills');
    assert.deepEqual(
      fills.map((f) => f.request_id),
      [...filled].reverse().map((f) => f.requestId),
      'every fill, newest first across shards',
    );
    const pnlOfMaker: Record<string, bigint> = {};
    for (const fill of fills) {
      const planned = filled.find((f) => f.requestId === fill.request_id)!;
      const [status, paid] = expectedEnd(planned.legs);
      const makerPnl = paid === null ? null : String(WAGER - Number(paid));
      assert.deepEqual(fill, {
        request_id: planned.requestId,
        quote_id: `q-${planned.requestId.slice(0, 8)}`, // autoQuote's
        taker: planned.taker.address,
        legs: planned.legs.map(legView),
        filled_wager_micros: String(WAGER),
        odds: ODDS,
        payout_micros: String(PAYOUT),
        liability_micros: String(PAYOUT - WAGER),
        status: status === 'open' || status === 'voided' ? status : `taker_${status}`,
        maker_pnl_micros: makerPnl,
        settled_at_ms: fill.settled_at_ms,
      });
      assert.equal(fill.settled_at_ms === null, status === 'open');
      if (makerPnl !== null) pnlOfMaker[planned.taker.address] = (pnlOfMaker[planned.taker.address] ?? 0n) + BigInt(makerPnl);
    }
    // The same money from the other side: taker_pnl's pnl_micros is the taker's result, paid − wagered.
    const takerPnl = (await api.get('/v1/mm/taker_pnl')).body.takers as Row[];
    assert.deepEqual(
      Object.fromEntries(takerPnl.map((t) => [t.taker, BigInt(t.pnl_micros as string)])),
      Object.fromEntries(Object.entries(pnlOfMaker).map(([taker, pnl]) => [taker, -pnl])),
    );
    // Taker 0: won +6, lost −4, voided 0 (its open fill counts later).
    assert.equal(takerPnl.find((t) => t.taker === takers[0].address)!.pnl_micros, '2000000');

    const open = await walk(api, '/v1/mm/fills?status=open&limit=1', 'fills');
    assert.deepEqual(
      open.map((f) => f.request_id),
      filled
        .filter((f) => expectedEnd(f.legs)[0] === 'open')
        .reverse()
        .map((f) => f.requestId),
    );
    const settled = await walk(api, '/v1/mm/fills?status=settled&limit=3', 'fills');
    assert.equal(settled.length, filled.length - open.length);
    assert.ok(settled.every((f) => f.status !== 'open'));
    assert.deepEqual(
      (await client(server.baseUrl, idle.sessionToken).get('/v1/mm/fills')).body,
      { fills: [], next_cursor: null },
      'another maker sees none',
    );
  });

  it('refuses a cursor of another route or filter at /cursor, and a token of the other kind', async () => {
    const user = client(server.baseUrl, takers[0].token);
    const mm = client(server.baseUrl, maker.sessionToken);
    const positionsCursor = (await user.get('/v1/user/positions?status=settled&limit=1')).body.next_cursor as string;
    const journalCursor = (await user.get('/v1/user/journal?limit=1')).body.next_cursor as string;
    const fillsCursor = (await mm.get('/v1/mm/fills?limit=1')).body.next_cursor as string;
    for (const [api, path] of [
      [user, `/v1/user/positions?status=open&cursor=${positionsCursor}`], // another filter
      [user, `/v1/user/journal?cursor=${positionsCursor}`], // another route
      [user, `/v1/user/positions?cursor=${journalCursor}`],
      [mm, `/v1/mm/fills?status=settled&cursor=${fillsCursor}`],
      [mm, `/v1/mm/fills?cursor=${Buffer.from(JSON.stringify(['mm-fills', 'x', 'not-an-id'])).toString('base64url')}`], // forged
    ] as const) {
      const res = await api.get(path);
      assert.deepEqual([res.status, res.body.code, res.body.details?.[0]?.path], [400, 'VALIDATION_FAILED', '/cursor'], path);
    }
    assert.deepEqual([(await user.get('/v1/mm/fills')).status, (await mm.get('/v1/user/positions')).status], [403, 403]);
    assert.equal((await client(server.baseUrl).get('/v1/user/journal')).status, 401);
  });
});

describe("a maker's fills page (in process, on a real store)", () => {
  it('merges the shard bytes newest first, equal times included, and walks every fill once; a filtered page reads at most the scan bound', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parlayd-fills-view-'));
    const store = openStore(dir);
    try {
      const maker = `0x${'ab'.repeat(20)}`;
      const made: Array<{ requestId: string; atMs: number }> = [];
      // Three shard bytes, times interleaved, and pairs of ids of one millisecond on different shards.
      for (let i = 0; i < VIEWS_SCAN_MAX + 200; i++)
        made.push({ requestId: newRequestId(i % 3, 1_700_000_000_000 + Math.floor(i / 2)), atMs: i });
      const fillOf = (makerAddress: string, requestId: string, atMs: number): FillRecord => ({
        requestId,
        makerAddress,
        taker: '0x01',
        userId: 'u',
        legs: [],
        filledWagerMicros: '1',
        payoutMicros: '2',
        oddsE4: 20_000,
        atMs,
        settledPaidMicros: null,
      });
      await store.transact(() => {
        for (const { requestId, atMs } of made)
          void store.db<FillRecord>('fills').put(fillKey(maker, requestId), fillOf(maker, requestId, atMs));
        // Another maker's fill right after the maker's in key order: never listed.
        const other = `0x${'ac'.repeat(20)}`;
        void store.db<FillRecord>('fills').put(fillKey(other, made[0]!.requestId), fillOf(other, made[0]!.requestId, 0));
      });
      const order = (id: string) => id.slice(2) + id.slice(0, 2);
      const want = made.map((f) => f.requestId).sort((x, y) => (order(x) < order(y) ? 1 : -1));
      const seen: string[] = [];
      let after: string | null = null;
      for (let pages = 0; ; pages++) {
        assert.ok(pages < 100);
        const page = makerFillsPage(store, () => undefined, maker, { status: undefined, limit: 37, afterRequestId: after });
        seen.push(...page.fills.map((f) => f.request_id));
        if (page.next === null) break;
        after = page.next;
      }
      assert.deepEqual(seen, want, "every fill once, newest first (time, then the id's random bits, then the shard byte)");
      // The newest millisecond holds the last two ids made (on two shards): either may come first.
      assert.ok(
        made.slice(-2).some((f) => f.requestId === seen[0]),
        'the newest first',
      );

      const fills = store.db<FillRecord>('fills') as unknown as { get: (key: string) => unknown };
      const get = fills.get.bind(fills);
      let reads = 0;
      fills.get = (key) => {
        reads++;
        return get(key);
      };
      const settled = makerFillsPage(store, () => undefined, maker, { status: 'settled', limit: 10, afterRequestId: null });
      assert.deepEqual([settled.fills.length, reads], [0, VIEWS_SCAN_MAX], 'a filtered page stops at the scan bound');
      assert.equal(settled.next, want[VIEWS_SCAN_MAX - 1], 'and goes on from the last fill it read');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
