// One paging convention for every list (contract section 13, src/contract/paging.ts): `limit` (1..max), an opaque
// `cursor`, `next_cursor` null on the last page; a cursor this route did not issue, or issued for another
// filter or to another caller, or altered, is 400 VALIDATION_FAILED at /cursor. Walking every page while new items arrive repeats nothing and
// skips nothing that existed when the walk began, and a page reads a bounded number of records however
// large the table is.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { isApiError } from '../../src/lib/errors.js';
import { CursorBinding, CursorCodec, isSafeIntegers, routeFilter } from '../../src/contract/paging.js';
import { MENTION_SCAN_MAX } from '../../src/markets/mentions.js';
import type { Market } from '../../src/contract/markets.js';
import { admin, client, type HttpResult } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { adminEntriesPage, contestConfig, createContest, up } from '../helpers/contests.js';
import {
  type ContestsHarness,
  createMarketsInProcess,
  fundUsersInProcess,
  openContestsHarness,
  seedContestInProcess,
} from '../helpers/contests-in-process.js';
import { assertApiError } from '../helpers/errors.js';
import { createMarket, createMarkets } from '../helpers/markets.js';

function assertCursorRefused(res: HttpResult, message: RegExp): void {
  assertApiError(res, 400, 'VALIDATION_FAILED');
  assert.equal(res.body.details?.[0]?.path, '/cursor', JSON.stringify(res.body));
  assert.match(res.body.details[0].message, message);
}

describe('cursors (pure)', () => {
  const codec = new CursorCodec(randomBytes(32));
  const ROUTE = 'GET /v1/contests';
  const bound = (route: string, caller: string, query: Record<string, unknown>) => new CursorBinding(route, caller, routeFilter({}, query));
  const binding = bound(ROUTE, 'anonymous', { status: 'open', limit: 3 });
  const isPair = isSafeIntegers(2);
  const refusal = (run: () => unknown, message: RegExp) =>
    assert.throws(
      run,
      (err: unknown) =>
        isApiError(err) && err.code === 'VALIDATION_FAILED' && err.details?.[0]?.path === '/cursor' && message.test(err.details[0].message),
    );

  it('a cursor decodes to the position it was made from, for its own route, filter and caller only', () => {
    const cursor = codec.encode(binding, [1_700_000_000_000, 42]);
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(codec.decode(binding, cursor, isPair), [1_700_000_000_000, 42]);
    assert.equal(codec.decode(binding, undefined, isPair), null);
    // limit is not a filter: a walk may change it between pages.
    assert.deepEqual(codec.decode(bound(ROUTE, 'anonymous', { status: 'open', cursor }), cursor, isPair), [1_700_000_000_000, 42]);
    refusal(() => codec.decode(bound(ROUTE, 'anonymous', { status: 'resolved' }), cursor, isPair), /another filter/);
    refusal(() => codec.decode(bound(ROUTE, 'anonymous', { category: 'open' }), cursor, isPair), /another filter/);
    refusal(
      () => codec.decode(bound('GET /v1/mention-markets', 'anonymous', { status: 'open' }), cursor, isPair),
      /not a next_cursor of this route/,
    );
    refusal(() => codec.decode(bound(ROUTE, 'user:x', { status: 'open' }), cursor, isPair), /another caller, or altered/);
    // Another data directory's key: not issued here.
    refusal(() => new CursorCodec(randomBytes(32)).decode(binding, cursor, isPair), /another caller, or altered/);
  });

  it('the filter is every path parameter and query value but limit and cursor, in name order; empty is absent', () => {
    assert.equal(
      routeFilter({ id: 'c' }, { b: 2, a: 'x', limit: 5, cursor: 'q', e: '', u: undefined }),
      '[["params.id","c"],["query.a","x"],["query.b",2]]',
    );
    assert.equal(routeFilter({}, { status: '' }), routeFilter(undefined, {}));
  });

  it('truncated, padded, altered, re-encoded or forged text is refused', () => {
    const cursor = codec.encode(binding, [1_700_000_000_000, 42]);
    const bytes = Buffer.from(cursor, 'base64url');
    const tag = bytes.subarray(0, 16);
    const body = JSON.parse(bytes.subarray(16).toString('utf8')) as unknown[];
    const withBody = (value: unknown, spacing?: number) =>
      Buffer.concat([tag, Buffer.from(JSON.stringify(value, null, spacing), 'utf8')]).toString('base64url');
    const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
    const route = /not a next_cursor of this route/;
    const altered = /another caller, or altered/;
    for (const text of [
      cursor.slice(0, -1),
      cursor.slice(0, 10),
      `${cursor}==`,
      `${cursor}A`,
      b64('[]'),
      b64('"contests"'),
      'x'.repeat(600),
    ]) {
      refusal(() => codec.decode(binding, text, isPair), route);
    }
    for (let i = 0; i < bytes.length; i++) {
      const flipped = Buffer.from(bytes);
      flipped[i] = flipped[i]! ^ 0x01;
      refusal(() => codec.decode(binding, flipped.toString('base64url'), isPair), /./);
    }
    refusal(() => codec.decode(binding, withBody(body, 1), isPair), altered); // same JSON, other bytes
    refusal(() => codec.decode(binding, withBody([...body.slice(0, 3), 41]), isPair), altered); // another position
    refusal(() => codec.decode(binding, withBody(body.slice(0, 3)), isPair), altered); // one value short
    // The old format (issue 33): the position in the clear, no tag.
    refusal(() => codec.decode(binding, b64(JSON.stringify(['contests', 'x', 1_700_000_000_000, 41])), isPair), route);
  });
});

describe('public and admin lists over HTTP', () => {
  let server: TestServer;
  let marketIds: number[];
  const anonymous = () => client(server.baseUrl);

  before(async () => {
    server = await startServer();
    marketIds = await createMarkets(server, 1);
  });
  after(async () => {
    await server.stop();
  });

  async function page<T>(path: string): Promise<{ items: T[]; next_cursor: string | null; body: Record<string, unknown> }> {
    const res = await anonymous().get(path);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const items = (res.body.contests ?? res.body.markets) as T[];
    return { items, next_cursor: res.body.next_cursor, body: res.body };
  }

  it('GET /v1/contests: every page while contests are created lists each contest that existed once, newest first', async () => {
    for (let i = 0; i < 7; i++) await createContest(server, contestConfig(marketIds));
    const existing = (await page<{ contest_id: string }>('/v1/contests?limit=100')).items.map((c) => c.contest_id);
    assert.ok(existing.length >= 7 && existing.length < 100);
    const walked: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; ; pages++) {
      assert.ok(pages <= 10, 'next_cursor never became null');
      const p: Awaited<ReturnType<typeof page<{ contest_id: string }>>> = await page(
        `/v1/contests?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      assert.ok(p.items.length <= 3);
      walked.push(...p.items.map((c) => c.contest_id));
      // New contests arrive between pages (newer than every cursor: they belong before the walk's start).
      await createContest(server, contestConfig(marketIds));
      await createContest(server, contestConfig(marketIds));
      if (p.next_cursor === null) break;
      cursor = p.next_cursor;
    }
    // Every contest that existed, newest first, once; those made during the walk are newer than its start.
    assert.deepEqual(walked, existing);
  });

  it('GET /v1/contests: limit is 1..100, default 100; next_cursor is null on the last page', async () => {
    for (const limit of ['0', '101', '1000', '1.5', 'x']) {
      const res = await anonymous().get(`/v1/contests?limit=${limit}`);
      assertApiError(res, 400, 'VALIDATION_FAILED');
      assert.equal(res.body.details[0].path, '/limit');
    }
    const all = await page<{ contest_id: string }>('/v1/contests');
    assert.ok(all.items.length <= 100);
    assert.deepEqual(Object.keys(all.body).sort(), ['contests', 'next_cursor']);
    if (all.items.length < 100) assert.equal(all.next_cursor, null);
    const one = await page<{ contest_id: string }>('/v1/contests?limit=1');
    assert.equal(one.items.length, 1);
    assert.equal(typeof one.next_cursor, 'string');
  });

  it('GET /v1/mention-markets: every page while markets are created lists each market that existed once, by id', async () => {
    const existing = (await page<Market>('/v1/mention-markets?limit=100')).items.map((m) => m.market_id);
    for (let i = 0; i < 6; i++) existing.push((await createMarket(server, `walk ${i}`)).market_id);
    const walked: number[] = [];
    const madeDuring: number[] = [];
    let cursor: string | null = null;
    for (let pages = 0; ; pages++) {
      assert.ok(pages <= 20, 'next_cursor never became null');
      const p: Awaited<ReturnType<typeof page<Market>>> = await page(
        `/v1/mention-markets?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      assert.ok(p.items.length <= 2);
      walked.push(...p.items.map((m) => m.market_id));
      if (p.next_cursor === null) break;
      madeDuring.push((await createMarket(server, `during ${pages}`)).market_id);
      cursor = p.next_cursor;
    }
    assert.deepEqual(walked.slice(0, existing.length), existing, 'every market that existed, in id order, once');
    assert.deepEqual(walked.slice(existing.length), madeDuring, 'then the ones made during the walk (larger ids), once each');
  });

  it('GET /v1/mention-markets: limit is 1..100; a status filter pages too', async () => {
    for (const limit of ['0', '101']) {
      const res = await anonymous().get(`/v1/mention-markets?limit=${limit}`);
      assertApiError(res, 400, 'VALIDATION_FAILED');
      assert.equal(res.body.details[0].path, '/limit');
    }
    const voided = (await createMarket(server, 'to void')).market_id;
    const res = await admin(server).post(`/v1/admin/markets/${voided}/resolve`, { outcome: 'VOID' });
    assert.equal(res.status, 200);
    const first = await page<Market>('/v1/mention-markets?status=VOIDED&limit=1');
    assert.deepEqual([first.items.map((m) => m.market_id), first.next_cursor], [[voided], null]);
  });

  it('a cursor of another route, another filter or another contest, or a truncated one, is 400 at /cursor', async () => {
    const contests = (await page<unknown>('/v1/contests?limit=1')).next_cursor!;
    const openContests = (await page<unknown>('/v1/contests?status=open&limit=1')).next_cursor!;
    const mentions = (await page<unknown>('/v1/mention-markets?limit=1')).next_cursor!;
    const openMentions = (await page<unknown>('/v1/mention-markets?status=OPEN&limit=1')).next_cursor!;
    for (const cursor of [contests, openContests, mentions, openMentions]) assert.equal(typeof cursor, 'string');

    const route = /not a next_cursor of this route/;
    const filter = /another filter/;
    assertCursorRefused(await anonymous().get(`/v1/mention-markets?cursor=${contests}`), route);
    assertCursorRefused(await anonymous().get(`/v1/contests?cursor=${mentions}`), route);
    assertCursorRefused(await anonymous().get(`/v1/contests?status=resolved&cursor=${openContests}`), filter);
    assertCursorRefused(await anonymous().get(`/v1/contests?cursor=${openContests}`), filter);
    assertCursorRefused(await anonymous().get(`/v1/contests?category=sports&cursor=${contests}`), filter);
    assertCursorRefused(await anonymous().get(`/v1/mention-markets?status=RESOLVED&cursor=${openMentions}`), filter);
    assertCursorRefused(await anonymous().get(`/v1/contests?cursor=${contests.slice(0, -2)}`), route);
    assertCursorRefused(await anonymous().get(`/v1/mention-markets?cursor=${mentions.slice(0, -2)}`), route);
    // The empty status filter is the absent one (contract section 8), so its cursors are the same list's.
    assert.equal((await anonymous().get(`/v1/contests?status=&cursor=${contests}`)).status, 200);

    const contestId = (await createContest(server, contestConfig(marketIds))).contest_id;
    assertCursorRefused(await admin(server).get(`/v1/admin/contests/${contestId}/entries?cursor=${contests}`), route);
    assertCursorRefused(await admin(server).get(`/v1/admin/contests/${contestId}/entries?cursor=${mentions}`), route);
    const empty = await adminEntriesPage(server, contestId, 'limit=1');
    assert.deepEqual(empty, { entries: [], next_cursor: null });
  });

  it('the OpenAPI document shows limit, cursor and next_cursor on each list', async () => {
    const doc = (await anonymous().get('/v1/openapi.json')).body;
    for (const [path, max] of [
      ['/v1/contests', 100],
      ['/v1/mention-markets', 100],
      ['/v1/admin/contests/{id}/entries', 1000],
    ] as const) {
      const operation = doc.paths[path].get;
      const query = operation.parameters.filter((p: { in: string }) => p.in === 'query');
      const names = query.map((p: { name: string }) => p.name);
      assert.ok(names.includes('limit') && names.includes('cursor'), `${path}: ${names}`);
      assert.equal(query.find((p: { name: string }) => p.name === 'limit').schema.maximum, max, path);
      assert.match(JSON.stringify(operation.responses['200']), /next_cursor/, path);
    }
  });
});

describe('Markets.listMentions in process (real LMDB)', () => {
  let h: ContestsHarness;
  after(async () => h.destroy());

  it('a page reads at most `limit` records unfiltered, and at most MENTION_SCAN_MAX filtered, whatever the table holds', async () => {
    h = await openContestsHarness();
    const total = MENTION_SCAN_MAX + 200;
    // In parallel: lmdb-js commits them in a few group commits instead of one fsync each.
    const ids = (await Promise.all(Array.from({ length: total }, (_, i) => createMarketsInProcess(h, 1).then(([id]) => id!)))).sort(
      (a, b) => a - b,
    );
    const voided = [...ids.slice(0, 5), ...ids.slice(-5)];
    for (const id of voided) await h.markets.resolve(id, 'VOID');

    const db = h.store.db<unknown>('markets') as unknown as { get: (key: string) => unknown };
    const get = db.get.bind(db);
    let reads = 0;
    db.get = (key) => {
      reads++;
      return get(key);
    };
    const walk = (status: Market['status'] | undefined, limit: number, bound: number) => {
      const seen: number[] = [];
      const sizes: number[] = [];
      let afterId: number | null = null;
      for (let pages = 0; ; pages++) {
        assert.ok(pages <= total, 'nextId never became null');
        reads = 0;
        const p = h.markets.listMentions(status, { limit, afterId });
        assert.ok(reads <= bound, `a page of ${p.markets.length} read ${reads} records (bound ${bound})`);
        seen.push(...p.markets.map((m) => m.market_id));
        sizes.push(p.markets.length);
        if (p.nextId === null) return { seen, sizes };
        afterId = p.nextId;
      }
    };
    const all = walk(undefined, 100, 100);
    assert.deepEqual(all.seen, ids);
    assert.equal(all.sizes.length, Math.ceil(total / 100));
    // VOIDED: the first page runs out of its scan budget after the first five (a short page, and a cursor
    // to go on); the second finds the last five.
    const filtered = walk('VOIDED', 100, MENTION_SCAN_MAX);
    assert.deepEqual(filtered.seen, voided);
    assert.deepEqual(filtered.sizes, [5, 5]);
    const small = walk('VOIDED', 5, MENTION_SCAN_MAX);
    assert.deepEqual(small.seen, voided);
  });

  it('contest entries in process: pages stay good (no entry twice) whatever limit', async () => {
    const markets = await createMarketsInProcess(h, 1);
    const users = await fundUsersInProcess(h, 3, 100_000_000n);
    const id = await seedContestInProcess(h, contestConfig(markets), users, 9, () => [up(markets[0]!)]);
    let afterKey: string | null = null;
    const seen: string[] = [];
    do {
      const p = h.contests.adminEntries(id, { limit: 4, afterKey: () => afterKey });
      seen.push(...p.entries.map((e) => `${e.user_id}:${e.entry_index}`));
      afterKey = p.nextKey;
    } while (afterKey !== null);
    assert.equal(new Set(seen).size, 9);
  });
});
