// GET /v1/contests serves repeated pages from a cache of serialized pages (http/page-cache.ts), valid while
// the contests' list version stays: every change of a contest (creation, entry, void, resolution) ends a
// task on its lane, which moves the version before the change's caller is answered. So a page asked for
// after any answered change shows it, however often the same page was served before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_CACHED_PAGES, PageCache } from '../../src/http/page-cache.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { contestConfig, createContest, enter, listContests, up } from '../helpers/contests.js';
import { admin } from '../helpers/http.js';
import { createMarkets, resolveMarket } from '../helpers/markets.js';
import { fundedUser } from '../helpers/users.js';

const BET = 1_000_000;

describe('PageCache', () => {
  it('serves a page only under the version it was made at, and holds at most MAX_CACHED_PAGES', () => {
    const cache = new PageCache();
    cache.set(1, 'a', 'A1');
    assert.equal(cache.get(1, 'a'), 'A1');
    assert.equal(cache.get(2, 'a'), null);
    cache.set(2, 'b', 'B2');
    assert.equal(cache.get(2, 'a'), null, 'a new version drops every older page');
    for (let i = 0; i < MAX_CACHED_PAGES + 10; i++) cache.set(2, `k${i}`, String(i));
    assert.equal(cache.size, MAX_CACHED_PAGES);
    assert.equal(cache.get(2, 'k0'), null, 'the oldest went first');
    assert.equal(cache.get(2, `k${MAX_CACHED_PAGES + 9}`), String(MAX_CACHED_PAGES + 9));
  });
});

describe('GET /v1/contests after each kind of change', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  /** The same page, asked twice (the second from the cache when nothing changed). */
  async function listTwice(query = '') {
    const first = await listContests(server, query);
    const second = await listContests(server, query);
    assert.deepEqual(second, first, 'nothing changed in between');
    return first;
  }

  it('creation, entry, void and resolution each show on the next ask of the same page', async () => {
    const markets = await createMarkets(server, 2);
    const user = await fundedUser(server, 10 * BET);
    assert.deepEqual(await listTwice(), []);

    const a = (await createContest(server, contestConfig([markets[0]!]))).contest_id;
    assert.deepEqual(
      (await listTwice()).map((c) => c.contest_id),
      [a],
    );

    const entered = await enter(server, user, a, [up(markets[0]!)]);
    assert.equal(entered.status, 201, JSON.stringify(entered.body));
    assert.equal((await listTwice())[0]!.entries_filled, 1);
    assert.equal((await listTwice('status=open'))[0]!.entries_filled, 1);

    const b = (await createContest(server, contestConfig([markets[1]!]))).contest_id;
    assert.deepEqual(
      (await listTwice('status=open')).map((c) => c.contest_id),
      [b, a],
    );
    const voided = await admin(server).post(`/v1/admin/contests/${b}/void`, {});
    assert.equal(voided.status, 200);
    assert.deepEqual(
      (await listTwice('status=open')).map((c) => c.contest_id),
      [a],
    );
    assert.deepEqual(
      (await listTwice('status=voided')).map((c) => c.contest_id),
      [b],
    );

    await resolveMarket(server, markets[0]!, 'YES');
    const resolved = await listTwice('status=resolved');
    assert.deepEqual(
      resolved.map((c) => [c.contest_id, c.status]),
      [[a, 'resolved']],
    );
    assert.deepEqual(await listTwice('status=open'), []);
  });
});
