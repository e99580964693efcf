// GET /v1/admin/contests/{id}/entries against the real server (docs/contests.md, the route table): pages of
// at most `limit` entries in entry key order (user_id, then entry_index), followed by an opaque next_cursor
// that is null on the last page. A contest can hold entry_cap = 1,000,000 entries, so no request may read or
// answer all of them at once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { admin, client, type HttpResult } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { loginWallet, type TestUser } from '../helpers/users.js';
import {
  adminEntries,
  adminEntriesPage,
  contestConfig,
  createContest,
  enter,
  MoneyBook,
  up,
  type AdminEntry,
} from '../helpers/contests.js';
import { createMarketsInProcess, fundUsersInProcess, openContestsHarness, seedContestInProcess } from '../helpers/contests-in-process.js';
import { assertApiError } from '../helpers/errors.js';
import { createMarkets } from '../helpers/markets.js';

const BET = 1_000_000;
const USERS = 5;
const ENTRIES = 25;

let server: TestServer;
let book: MoneyBook;
let marketIds: number[];
/** A contest with ENTRIES entries from USERS users (round robin), and `user:entry_index` of each. */
let contestId: string;
let made: Set<string>;
/** A second contest with 2 entries: its cursors must not work on the first one. */
let otherContestId: string;

const keyOf = (e: Pick<AdminEntry, 'user_id' | 'entry_index'>) => `${e.user_id}:${e.entry_index}`;
const entriesPath = (id: string, query: string) => `/v1/admin/contests/${id}/entries?${query}`;

async function enterAs(user: TestUser, id: string): Promise<number> {
  const res = await enter(server, user, id, [up(marketIds[0]!)]);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  book.staked(user, BET);
  return res.body.entry_index as number;
}

/** Every page of the contest at `limit`, following next_cursor. */
async function walk(id: string, limit: number) {
  const pages: Array<{ entries: AdminEntry[]; next_cursor: string | null }> = [];
  let cursor: string | null = null;
  do {
    const page = await adminEntriesPage(server, id, `limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    assert.ok(page.entries.length <= limit, `a page of ${page.entries.length} entries at limit=${limit}`);
    assert.ok(page.next_cursor === null || typeof page.next_cursor === 'string', `next_cursor ${page.next_cursor} is a string or null`);
    pages.push(page);
    cursor = page.next_cursor;
    assert.ok(pages.length <= ENTRIES + 1, 'next_cursor never became null');
  } while (cursor !== null);
  return pages;
}

function assertValidation(res: HttpResult, path: string): void {
  assertApiError(res, 400, 'VALIDATION_FAILED');
  assert.equal(res.body.details?.[0]?.path, path, JSON.stringify(res.body));
}

before(async () => {
  server = await startServer();
  book = new MoneyBook(server);
  marketIds = await createMarkets(server, 1);
  const users = await book.fundedUsers(USERS, (ENTRIES / USERS + 1) * BET);
  contestId = (await createContest(server, contestConfig(marketIds))).contest_id;
  made = new Set();
  for (let i = 0; i < ENTRIES; i++) {
    const user = users[i % USERS]!;
    made.add(`${user.userId}:${await enterAs(user, contestId)}`);
  }
  assert.equal(made.size, ENTRIES);
  otherContestId = (await createContest(server, contestConfig(marketIds))).contest_id;
  await enterAs(users[0]!, otherContestId);
  await enterAs(users[1]!, otherContestId);
});
after(async () => {
  await book.check();
  await server.stop();
});

describe('GET /v1/admin/contests/{id}/entries pages', () => {
  it('limit=10 over 25 entries: pages of 10, 10 and 5, every entry once, next_cursor null on the last', async () => {
    const pages = await walk(contestId, 10);
    assert.deepEqual(
      pages.map((p) => p.entries.length),
      [10, 10, 5],
    );
    assert.equal(typeof pages[0]!.next_cursor, 'string');
    assert.equal(typeof pages[1]!.next_cursor, 'string');
    assert.equal(pages[2]!.next_cursor, null);
    const seen = pages.flatMap((p) => p.entries.map(keyOf));
    assert.equal(new Set(seen).size, seen.length, 'no entry twice');
    assert.deepEqual(new Set(seen), made, 'exactly the entries made');
    // Key order: user_id (string order), then entry_index.
    const all = pages.flatMap((p) => p.entries);
    const inKeyOrder = [...all].sort((a, b) => (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : a.entry_index - b.entry_index));
    assert.deepEqual(all.map(keyOf), inKeyOrder.map(keyOf));
    // The helper follows the cursors to the same entries.
    assert.deepEqual((await adminEntries(server, contestId)).map(keyOf), all.map(keyOf));
  });

  it('a limit that divides the count ends with a full page whose next_cursor is null (no empty page)', async () => {
    const pages = await walk(contestId, 5);
    assert.deepEqual(
      pages.map((p) => p.entries.length),
      [5, 5, 5, 5, 5],
    );
    assert.equal(pages[4]!.next_cursor, null);
    assert.deepEqual(new Set(pages.flatMap((p) => p.entries.map(keyOf))), made);
    const single = await adminEntriesPage(server, contestId, `limit=${ENTRIES}`);
    assert.deepEqual([single.entries.length, single.next_cursor], [ENTRIES, null]);
  });

  it('without limit the page is up to 1000 entries: all 25 here, next_cursor null', async () => {
    const page = await adminEntriesPage(server, contestId);
    assert.equal(page.entries.length, ENTRIES);
    assert.equal(page.next_cursor, null);
    assert.deepEqual(Object.keys(page).sort(), ['entries', 'next_cursor']);
  });

  it('a contest without entries is one empty page', async () => {
    const empty = (await createContest(server, contestConfig(marketIds))).contest_id;
    assert.deepEqual(await adminEntriesPage(server, empty, 'limit=3'), { entries: [], next_cursor: null });
  });

  it('limit outside 1..1000 or not an integer is 400 VALIDATION_FAILED at /limit', async () => {
    for (const limit of ['0', '1001', '-1', 'abc', '1.5', '1e3', '']) {
      assertValidation(await admin(server).get(entriesPath(contestId, `limit=${limit}`)), '/limit');
    }
    assert.equal((await admin(server).get(entriesPath(contestId, 'limit=1000'))).status, 200);
    assert.equal((await admin(server).get(entriesPath(contestId, 'limit=1'))).status, 200);
  });

  it('a garbage cursor, or one of another contest, is 400 VALIDATION_FAILED at /cursor', async () => {
    const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
    const garbage = [
      'not base64!', // outside the base64url alphabet
      'abc', // decodes to bytes that are no entry key
      `${b64(`${contestId}:${randomUUID()}:0000000001`)}==`, // padded: not the canonical form
      b64(`${contestId}:`), // the contest's prefix only
      b64(`${contestId}:${randomUUID()}:1`), // entry_index not padded to 10 digits
      b64('~'),
      'x'.repeat(513), // longer than any cursor
    ];
    for (const cursor of garbage) {
      assertValidation(await admin(server).get(entriesPath(contestId, `cursor=${encodeURIComponent(cursor)}`)), '/cursor');
    }
    // A real cursor of the other contest.
    const otherPage = await adminEntriesPage(server, otherContestId, 'limit=1');
    assert.equal(otherPage.entries.length, 1);
    assert.equal(typeof otherPage.next_cursor, 'string');
    const foreign = await admin(server).get(entriesPath(contestId, `cursor=${otherPage.next_cursor}`));
    assertValidation(foreign, '/cursor');
    assert.match(foreign.body.details[0].message, /another filter/);
    // ...which still works on its own contest.
    const rest = await adminEntriesPage(server, otherContestId, `limit=1&cursor=${otherPage.next_cursor}`);
    assert.equal(rest.entries.length, 1);
    assert.equal(rest.next_cursor, null);
    assert.notEqual(keyOf(rest.entries[0]!), keyOf(otherPage.entries[0]!));
  });

  it('an unknown query parameter is 400 VALIDATION_FAILED', async () => {
    assertApiError(await admin(server).get(entriesPath(contestId, 'offset=10')), 400, 'VALIDATION_FAILED');
  });

  it('an unknown contest is 404 CONTEST_NOT_FOUND, with or without paging', async () => {
    const unknown = randomUUID();
    assertApiError(await admin(server).get(`/v1/admin/contests/${unknown}/entries`), 404, 'CONTEST_NOT_FOUND');
    assertApiError(await admin(server).get(entriesPath(unknown, 'limit=10')), 404, 'CONTEST_NOT_FOUND');
    const cursor = (await adminEntriesPage(server, contestId, 'limit=1')).next_cursor!;
    assertApiError(await admin(server).get(entriesPath(unknown, `limit=10&cursor=${cursor}`)), 404, 'CONTEST_NOT_FOUND');
  });

  it('is for admins only: 401 without a bearer, 403 with a user token', async () => {
    const user = await loginWallet(server);
    assertApiError(await client(server.baseUrl).get(entriesPath(contestId, 'limit=1')), 401, 'UNAUTHENTICATED');
    assertApiError(await client(server.baseUrl, user.token).get(entriesPath(contestId, 'limit=1')), 403, 'FORBIDDEN');
  });

  it('the OpenAPI document shows limit, cursor and next_cursor', async () => {
    const doc = (await client(server.baseUrl).get('/v1/openapi.json')).body;
    const operation = doc.paths['/v1/admin/contests/{id}/entries'].get;
    const query = operation.parameters.filter((p: { in: string }) => p.in === 'query');
    assert.deepEqual(query.map((p: { name: string; required: boolean }) => [p.name, p.required]).sort(), [
      ['cursor', false],
      ['limit', false],
    ]);
    const limit = query.find((p: { name: string }) => p.name === 'limit').schema;
    assert.deepEqual([limit.type, limit.minimum, limit.maximum], ['integer', 1, 1000]);
    const body = JSON.stringify(operation.responses['200']);
    assert.match(body, /next_cursor/);
  });
});

describe('Contests.adminEntries in process (real LMDB)', () => {
  it('each page reads at most limit + 2 entry records, whatever the contest holds', async () => {
    const h = await openContestsHarness();
    try {
      const markets = await createMarketsInProcess(h, 1);
      const users = await fundUsersInProcess(h, 7, 1_000n * BigInt(BET));
      const count = 400;
      const id = await seedContestInProcess(h, contestConfig(markets, { entry_cap: count }), users, count, () => [up(markets[0]!)]);
      // Count the records every range read over the entries yields.
      const db = h.store.db<unknown>('contestEntries') as unknown as { getRange: (options: unknown) => Iterable<unknown> };
      const getRange = db.getRange.bind(db);
      let rowsRead = 0;
      db.getRange = (options) =>
        (function* () {
          for (const row of getRange(options)) {
            rowsRead++;
            yield row;
          }
        })();
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; ; pages++) {
        assert.ok(pages <= count, 'next_cursor never became null');
        rowsRead = 0;
        const page = h.contests.adminEntries(id, { limit: 7, afterKey: () => cursor });
        assert.ok(rowsRead >= page.entries.length && rowsRead <= 7 + 2, `a page of 7 read ${rowsRead} records`);
        seen.push(...page.entries.map(keyOf));
        if (page.nextKey === null) break;
        cursor = page.nextKey;
      }
      assert.equal(seen.length, count);
      assert.equal(new Set(seen).size, count);
      // Once every entry is in, a walk sees them all in key order (user_id, then entry_index).
      const sorted = [...seen].sort((a, b) => {
        const [ua, ia] = a.split(':') as [string, string];
        const [ub, ib] = b.split(':') as [string, string];
        return ua < ub ? -1 : ua > ub ? 1 : Number(ia) - Number(ib);
      });
      assert.deepEqual(seen, sorted);
    } finally {
      await h.destroy();
    }
  });
});
