// Contract section 13, issue 33 item 6: a cursor is bound to its route, its filter and its caller. For EVERY
// paged route (a route whose query has `cursor`, read from the OpenAPI document, which is generated from the
// route table), with two pages of rows for two callers: an altered cursor, a forged one (the old format: a
// position in the clear; or one cursor's tag on another's position), another caller's, another filter's
// and another route's are each 400 VALIDATION_FAILED at /cursor and show no row, while the caller's own
// cursor still walks its own rows. A paged route added without a case here fails the first test; and the
// cursors of a data directory still work after a restart.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { assertApiError } from '../helpers/errors.js';
import { admin, client, type HttpResult } from '../helpers/http.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { contestConfig, createContest, enter, up } from '../helpers/contests.js';
import { autoQuote, unsignedBody } from '../helpers/rfq.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet, type TestUser } from '../helpers/users.js';

const USDC = 1_000_000;
const TAG_BYTES = 16; // src/contract/paging.ts
const DESTINATION = `0x${'5a'.repeat(20)}`;

type Api = ReturnType<typeof client>;
type CallerKind = 'user' | 'maker' | 'admin' | 'anonymous';

/** How one paged route is exercised: where its rows are and what another filter of it is. */
interface PagedCase {
  caller: CallerKind;
  /** The list's path and filter (no limit or cursor), e.g. `/v1/user/rfqs`. */
  path: () => string;
  /** The same route with another filter; null for a route with none to vary (say why beside it). */
  otherFilterPath: (() => string) | null;
  /** The answer's property that holds the rows. */
  items: string;
}

/** The world the cases read: two of each caller that has an identity, each with at least two rows per list. */
interface World {
  users: [TestUser, TestUser];
  makers: [ConnectedMaker, ConnectedMaker];
  contests: [string, string];
}
let world: World;
/** The makers' sockets are open until the restart test stops the server under them. */
let areMakersOpen = true;

/** Every paged route, by `METHOD path` as the OpenAPI document names it. */
const CASES: Record<string, PagedCase> = {
  'GET /v1/user/rfqs': {
    caller: 'user',
    path: () => '/v1/user/rfqs',
    otherFilterPath: () => '/v1/user/rfqs?status=cancelled',
    items: 'rfqs',
  },
  'GET /v1/user/contest_entries': {
    caller: 'user',
    path: () => '/v1/user/contest_entries',
    otherFilterPath: () => `/v1/user/contest_entries?contest_id=${world.contests[0]}`,
    items: 'entries',
  },
  'GET /v1/user/positions': {
    caller: 'user',
    path: () => '/v1/user/positions',
    otherFilterPath: () => '/v1/user/positions?status=open',
    items: 'positions',
  },
  'GET /v1/user/journal': { caller: 'user', path: () => '/v1/user/journal', otherFilterPath: null /* no filter */, items: 'entries' },
  'GET /v1/user/withdrawals': {
    caller: 'user',
    path: () => '/v1/user/withdrawals',
    otherFilterPath: null /* no filter */,
    items: 'withdrawals',
  },
  'GET /v1/mm/withdrawals': {
    caller: 'maker',
    path: () => '/v1/mm/withdrawals',
    otherFilterPath: null /* no filter */,
    items: 'withdrawals',
  },
  'GET /v1/mm/fills': { caller: 'maker', path: () => '/v1/mm/fills', otherFilterPath: () => '/v1/mm/fills?status=open', items: 'fills' },
  'GET /v1/mm/taker_pnl': {
    caller: 'maker',
    path: () => '/v1/mm/taker_pnl',
    otherFilterPath: () => '/v1/mm/taker_pnl?since_ms=1',
    items: 'takers',
  },
  'GET /v1/admin/withdrawals': {
    caller: 'admin',
    path: () => '/v1/admin/withdrawals',
    otherFilterPath: () => '/v1/admin/withdrawals?status=completed',
    items: 'withdrawals',
  },
  'GET /v1/admin/markets': {
    caller: 'admin',
    path: () => '/v1/admin/markets?due=true',
    otherFilterPath: null /* due=true is required: no other value */,
    items: 'markets',
  },
  'GET /v1/admin/contests/{id}/entries': {
    caller: 'admin',
    path: () => `/v1/admin/contests/${world.contests[0]}/entries`,
    otherFilterPath: () => `/v1/admin/contests/${world.contests[1]}/entries`,
    items: 'entries',
  },
  'GET /v1/contests': {
    caller: 'anonymous',
    path: () => '/v1/contests',
    otherFilterPath: () => '/v1/contests?status=open',
    items: 'contests',
  },
  'GET /v1/mention-markets': {
    caller: 'anonymous',
    path: () => '/v1/mention-markets',
    otherFilterPath: () => '/v1/mention-markets?status=OPEN',
    items: 'markets',
  },
};

let server: TestServer;

/** The two callers of a kind; the admin and anonymous callers are one each (nobody else can be them). */
function callersOf(kind: CallerKind): Api[] {
  if (kind === 'user') return world.users.map((u) => client(server.baseUrl, u.token));
  if (kind === 'maker') return world.makers.map((m) => client(server.baseUrl, m.sessionToken));
  if (kind === 'admin') return [admin(server)];
  return [client(server.baseUrl)];
}

const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;

async function pageOf(api: Api, path: string, query: string, items: string): Promise<{ rows: string[]; next: string | null }> {
  const res = await api.get(withQuery(path, query));
  assert.equal(res.status, 200, `${path} ${query}: ${JSON.stringify(res.body)}`);
  return { rows: (res.body[items] as unknown[]).map((row) => JSON.stringify(row)), next: res.body.next_cursor as string | null };
}

/** 400 VALIDATION_FAILED at /cursor (with `message` when given), and not one row. */
function assertCursorRefused(res: HttpResult, what: string, message?: string): void {
  const body = assertApiError(res, 400, 'VALIDATION_FAILED');
  assert.equal(body.details?.length, 1, `${what}: ${JSON.stringify(body)}`);
  assert.equal(body.details[0]!.path, '/cursor', `${what}: ${JSON.stringify(body)}`);
  if (message !== undefined) assert.equal(body.details[0]!.message, message, what);
}

const NOT_OF_ROUTE = 'cursor is not a next_cursor of this route';
const OTHER_FILTER = 'cursor was issued for another filter of this route';
const OTHER_CALLER = 'cursor was issued to another caller, or altered';

/** The paged routes of the running service: every operation whose query has `cursor`. */
async function pagedRoutes(): Promise<string[]> {
  const doc = (await client(server.baseUrl).get('/v1/openapi.json')).body as {
    paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
  };
  const paged: string[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if ((operation.parameters ?? []).some((p) => p.in === 'query' && p.name === 'cursor')) paged.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return paged.sort();
}

async function buildWorld(): Promise<World> {
  const api = admin(server);
  const users: [TestUser, TestUser] = [await loginWallet(server), await loginWallet(server)];
  for (const user of users) await credit(server, user.address, 100 * USDC);
  const markets = [(await createMarket(server)).market_id, (await createMarket(server)).market_id];
  // Fills for both makers: the first quotes alone, then the second joins with better odds and wins the rest.
  const first = await connectNewMaker(server);
  const firstQuotes = autoQuote(first, { odds: 2.5 });
  const fill = async (user: TestUser) => {
    const res = await client(server.baseUrl, user.token).post(
      '/v1/rfq/unsigned?wait_ms=5000',
      unsignedBody([up(markets[0]!)], { wager_micros: 2 * USDC }),
    );
    assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
  };
  for (const user of users) for (let i = 0; i < 2; i++) await fill(user);
  const second = await connectNewMaker(server);
  const secondQuotes = autoQuote(second, { odds: 3 });
  for (const user of users) for (let i = 0; i < 2; i++) await fill(user);
  firstQuotes.stop();
  secondQuotes.stop();
  const makers: [ConnectedMaker, ConnectedMaker] = [first, second];
  // Withdrawals: two per user and per maker (the operator's queue holds them all, pending).
  const withdrawal = () => ({ amount_micros: USDC, destination: DESTINATION, idempotency_key: randomUUID() });
  const owners = [...users.map((u) => [u.token, '/v1/user/withdrawals']), ...makers.map((m) => [m.sessionToken, '/v1/mm/withdrawals'])];
  for (const [token, path] of owners) {
    for (let i = 0; i < 2; i++) {
      const res = await client(server.baseUrl, token).post(path!, withdrawal());
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
  }
  // Contests: two, each entered by both users (two entries per user, two per contest).
  const contests: [string, string] = [
    (await createContest(server, contestConfig(markets))).contest_id,
    (await createContest(server, contestConfig(markets))).contest_id,
  ];
  for (const contestId of contests) {
    for (const user of users) {
      const res = await enter(server, user, contestId, [up(markets[0]!)]);
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
  }
  // Due markets: two mention markets whose resolution time has passed.
  for (const agoMs of [120_000, 60_000]) {
    const res = await api.post('/v1/admin/mention-markets', {
      name: `due ${agoMs}`,
      source_kind: 'test',
      source_event_id: 'e',
      source_market_id: `due-${agoMs}`,
      betting_closes_at_ms: Date.now() - agoMs - 1,
      resolution_time_ms: Date.now() - agoMs,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
  return { users, makers, contests };
}

describe('every cursor is bound to its route, filter and caller (every paged route)', () => {
  before(async () => {
    server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '200' } });
    world = await buildWorld();
  });
  after(async () => {
    if (areMakersOpen) for (const maker of world.makers) await maker.close();
    await server.stop();
    removeDataDir(server);
  });

  it('the cases are exactly the paged routes of the route table', async () => {
    // A new paged route fails here until it has a case (its rows, its callers, another filter).
    assert.deepEqual(await pagedRoutes(), Object.keys(CASES).sort());
  });

  for (const [route, c] of Object.entries(CASES)) {
    it(`${route}: altered, forged, foreign, other-filter and other-route cursors are 400 at /cursor; its own walk goes on`, async () => {
      const callers = callersOf(c.caller);
      const pages = [];
      for (const api of callers) {
        const first = await pageOf(api, c.path(), 'limit=1', c.items);
        assert.equal(first.rows.length, 1, `${route}: the world has no rows for this caller`);
        assert.notEqual(first.next, null, `${route}: the world has one row only for this caller`);
        const all = await pageOf(api, c.path(), '', c.items);
        // The caller's own cursor walks its own rows: the second page is its next row.
        const second = await pageOf(api, c.path(), `limit=1&cursor=${first.next}`, c.items);
        assert.deepEqual(second.rows, all.rows.slice(1, 2), `${route}: the second page`);
        pages.push({ api, first, second, all });
      }
      const [a, b] = pages;
      const own = a!.first.next!;
      const get = (api: Api, path: string, cursor: string) => api.get(withQuery(path, `limit=1&cursor=${cursor}`));
      const bytes = Buffer.from(own, 'base64url');

      // (a) Altered: one byte flipped, in the tag, in the position, in the clear tags.
      for (const at of [0, TAG_BYTES - 1, TAG_BYTES + 3, bytes.length - 2]) {
        const altered = Buffer.from(bytes);
        altered[at] = altered[at]! ^ 0x01;
        assertCursorRefused(await get(a!.api, c.path(), altered.toString('base64url')), `${route}: byte ${at} flipped`);
      }
      // (b) Forged. Another position under this cursor's tag: the other caller's, or this caller's next one
      // (one that differs: two makers' first takers may be the same taker).
      const body = bytes.subarray(TAG_BYTES);
      const otherBodies = [b?.first.next, a!.second.next]
        .filter((text): text is string => typeof text === 'string')
        .map((text) => Buffer.from(text, 'base64url').subarray(TAG_BYTES))
        .filter((other) => !other.equals(body));
      for (const other of otherBodies) {
        const spliced = Buffer.concat([bytes.subarray(0, TAG_BYTES), other]).toString('base64url');
        assertCursorRefused(await get(a!.api, c.path(), spliced), `${route}: a tag on another position`, OTHER_CALLER);
      }
      // ...and the old format: the position in the clear, no tag (the exploit of issue 33).
      const oldFormat = Buffer.from(b?.first.next ?? own, 'base64url')
        .subarray(TAG_BYTES)
        .toString('base64url');
      assertCursorRefused(await get(a!.api, c.path(), oldFormat), `${route}: the old format`);

      // (c) Foreign: the other caller's valid cursor (routes with one caller have no other to try).
      if (b !== undefined) {
        const res = await get(a!.api, c.path(), b.first.next!);
        assertCursorRefused(res, `${route}: another caller's cursor`, OTHER_CALLER);
        // ...which still walks the other caller's own rows.
        assert.deepEqual((await pageOf(b.api, c.path(), `limit=1&cursor=${b.first.next}`, c.items)).rows, b.second.rows);
      }
      // (d) Another filter of the same route.
      if (c.otherFilterPath !== null) {
        assertCursorRefused(await get(a!.api, c.otherFilterPath(), own), `${route}: another filter`, OTHER_FILTER);
      }
      // (e) Another route's cursor, of the same caller kind where there is one.
      const others = Object.entries(CASES).filter(([r]) => r !== route);
      const [otherRoute, other] = others.find(([, o]) => o.caller === c.caller) ?? others[0]!;
      const foreignRoute = (await pageOf(callersOf(other.caller)[0]!, other.path(), 'limit=1', other.items)).next;
      assert.notEqual(foreignRoute, null, otherRoute);
      assertCursorRefused(await get(a!.api, c.path(), foreignRoute!), `${route}: a cursor of ${otherRoute}`, NOT_OF_ROUTE);

      // The caller's own cursor still works after all that.
      assert.deepEqual((await pageOf(a!.api, c.path(), `limit=1&cursor=${own}`, c.items)).rows, a!.second.rows);
    });
  }

  it('cursors survive a restart (the key is kept in the data directory)', async () => {
    const user = client(server.baseUrl, world.users[0].token);
    const own = (await pageOf(user, '/v1/user/rfqs', 'limit=1', 'rfqs')).next!;
    const anonymous = (await pageOf(client(server.baseUrl), '/v1/contests', 'limit=1', 'contests')).next!;
    const before = await pageOf(user, '/v1/user/rfqs', `limit=1&cursor=${own}`, 'rfqs');
    for (const maker of world.makers) await maker.close();
    areMakersOpen = false;
    await server.stop();
    server = await restartServer(server);
    const again = client(server.baseUrl, world.users[0].token);
    assert.deepEqual(await pageOf(again, '/v1/user/rfqs', `limit=1&cursor=${own}`, 'rfqs'), before);
    assert.equal((await client(server.baseUrl).get(`/v1/contests?limit=1&cursor=${anonymous}`)).status, 200);
  });
});
