// GET /v1/contests (contract section 8, docs/contests.md "The list"): every game_type, newest first, filtered by
// status and category, with summaries as last committed. The list walks an in-memory index of every contest
// and reads only the records it answers with, so the index must follow each creation and status change
// (resolution, void by the operator, void by the markets), a restart, and a settlement's final batch.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { ContestRecord } from '../../src/records/contests.js';
import type { CreateContest } from '../../src/contract/contests.js';
import type { SettleProgress } from '../../src/contests/settlement.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { contestConfig, type ContestConfig, createContest, enter, listContests, listedIds, MoneyBook, up } from '../helpers/contests.js';
import {
  type ContestsHarness,
  countContestReads,
  createMarketsInProcess,
  fundUsersInProcess,
  openContestsHarness,
  seedContestInProcess,
} from '../helpers/contests-in-process.js';
import { admin } from '../helpers/http.js';
import { createMarkets, resolveMarket } from '../helpers/markets.js';
import { resolveMarketsWhileStopped } from '../helpers/store-writes.js';
import { waitFor } from '../helpers/wait.js';

const BET = 1_000_000;
const servers: TestServer[] = [];
const harnesses: ContestsHarness[] = [];

after(async () => {
  for (const s of servers) {
    await s.kill();
    removeDataDir(s);
  }
  for (const h of harnesses) await h.destroy();
});

async function start(previous?: TestServer): Promise<TestServer> {
  const server = previous === undefined ? await startServer() : await restartServer(previous);
  servers.push(server);
  return server;
}

async function voidContest(server: TestServer, contestId: string): Promise<void> {
  const res = await admin(server).post(`/v1/admin/contests/${contestId}/void`, {});
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.status, 'voided');
}

/** Every query the tests compare, and the ids each must list, newest first. */
function expectations(c: Record<'open1' | 'resolved' | 'voidedByAdmin' | 'open2' | 'open3' | 'voidedByMarkets', string>) {
  return {
    '': [c.voidedByMarkets, c.open3, c.open2, c.voidedByAdmin, c.resolved, c.open1],
    'status=open': [c.open3, c.open2, c.open1],
    'status=resolved': [c.resolved],
    'status=voided': [c.voidedByMarkets, c.voidedByAdmin],
    'category=sports': [c.voidedByMarkets, c.voidedByAdmin, c.open1],
    'category=culture': [c.open3, c.resolved],
    'category=mentions': [c.open2],
    'category=sports&status=open': [c.open1],
    'category=sports&status=voided': [c.voidedByMarkets, c.voidedByAdmin],
    'category=culture&status=resolved': [c.resolved],
    'category=mentions&status=resolved': [],
    'limit=2': [c.voidedByMarkets, c.open3],
    'status=open&limit=2': [c.open3, c.open2],
    'status=voided&limit=1': [c.voidedByMarkets],
  } as Record<string, string[]>;
}

async function assertListed(server: TestServer, expected: Record<string, string[]>): Promise<void> {
  for (const [query, ids] of Object.entries(expected)) {
    const listed = await listContests(server, query);
    assert.deepEqual(
      listed.map((c) => c.contest_id),
      ids,
      `GET /v1/contests?${query}`,
    );
    const status = new URLSearchParams(query).get('status');
    if (status !== null) for (const c of listed) assert.equal(c.status, status, `GET /v1/contests?${query}`);
  }
}

/**
 * Six contests, created in this order (so newest first is the reverse): two stay open, one resolves (its
 * market resolves), one is voided by the operator, one is voided because its only market voided, and one
 * stays open although one of its two markets resolved.
 */
async function arrange(server: TestServer) {
  const m = await createMarkets(server, 7);
  const make = async (category: ContestConfig['category'], markets: number[], extra: Partial<ContestConfig> = {}) =>
    (await createContest(server, contestConfig(markets, { category, ...extra }))).contest_id;
  const c = {
    open1: await make('sports', [m[0]!]),
    resolved: await make('culture', [m[1]!]),
    voidedByAdmin: await make('sports', [m[2]!]),
    open2: await make('mentions', [m[3]!, m[4]!], { game_type: 'survivor', winning_split_bps: [] }),
    open3: await make('culture', [m[0]!], { game_type: 'streak', winning_split_bps: [] }),
    voidedByMarkets: await make('sports', [m[5]!]),
  };
  return { markets: m, contests: c };
}

describe('GET /v1/contests follows status changes', () => {
  it('?status= and ?category= list exactly the contests in that state, newest first, after resolution and voids', async () => {
    const server = await start();
    const book = new MoneyBook(server);
    const { markets: m, contests: c } = await arrange(server);
    // Before any change every contest is open.
    assert.deepEqual(await listedIds(server, 'status=open'), [c.voidedByMarkets, c.open3, c.open2, c.voidedByAdmin, c.resolved, c.open1]);
    assert.deepEqual(await listedIds(server, 'status=resolved'), []);

    await resolveMarket(server, m[1]!, 'YES');
    await voidContest(server, c.voidedByAdmin);
    await resolveMarket(server, m[5]!, 'VOID');
    await resolveMarket(server, m[3]!, 'NO'); // open2 keeps an OPEN market: it stays open
    await assertListed(server, expectations(c));

    // Summaries are read from the records: an entry shows at once in entries_filled and the pot.
    const user = await book.fundedUser(10 * BET);
    assert.equal((await enter(server, user, c.open1, [up(m[0]!)])).status, 201);
    const [summary] = await listContests(server, 'category=sports&status=open');
    assert.equal(summary!.contest_id, c.open1);
    assert.deepEqual([summary!.entries_filled, summary!.total_pot_micros], [1, BET]);
  });
});

describe('GET /v1/contests across restarts', () => {
  it('the list is the same after a kill -9 and a restart, and follows creations and resolutions after it, also those recover() finishes', async () => {
    let server = await start();
    const { markets: m, contests: c } = await arrange(server);
    await resolveMarket(server, m[1]!, 'YES');
    await voidContest(server, c.voidedByAdmin);
    await resolveMarket(server, m[5]!, 'VOID');
    await resolveMarket(server, m[3]!, 'NO');
    const expected = expectations(c);
    await assertListed(server, expected);
    const before = await listContests(server);
    await server.kill();

    server = await start(server);
    await assertListed(server, expected);
    assert.deepEqual(await listContests(server), before, 'the same summaries, field for field');

    // After the restart: a new contest is the newest, and a resolution moves a contest out of ?status=open.
    const newest = (await createContest(server, contestConfig([m[6]!], { category: 'mentions' }))).contest_id;
    await resolveMarket(server, m[0]!, 'YES'); // open1 and open3
    assert.deepEqual(await listedIds(server, 'status=open'), [newest, c.open2]);
    assert.deepEqual(await listedIds(server, 'status=resolved'), [c.open3, c.resolved, c.open1]);
    assert.deepEqual(await listedIds(server, 'category=mentions'), [newest, c.open2]);

    // open2's last market resolves while the process is down (as a crash between the market's durable
    // resolution and the contest's leaves it): the next start's recover() resolves it, and the list follows.
    assert.equal(await server.stop(), 0);
    await resolveMarketsWhileStopped(server.dataDir, [m[4]!], 'YES');
    server = await start(server);
    const s = server;
    await waitFor(async () => assert.deepEqual(await listedIds(s, 'status=open'), [newest]), {
      timeoutMs: 10_000,
      what: 'only the newest contest listed open',
    });
    assert.deepEqual(await listedIds(server, 'status=resolved'), [c.open3, c.open2, c.resolved, c.open1]);
    assert.deepEqual(await listedIds(server, 'category=mentions&status=resolved'), [c.open2]);
  });
});

describe('Contests.list in process (real LMDB)', () => {
  it('reads at most `limit` contest records, whatever the number of contests (it read all 300 before)', async () => {
    const h = await openContestsHarness();
    harnesses.push(h);
    const [market] = await createMarketsInProcess(h, 1);
    const categories = ['mentions', 'sports', 'culture'] as const;
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      const config = contestConfig([market!], { category: categories[i % 3]!, title: `contest ${i}` });
      ids.push((await h.contests.create(config as CreateContest)).contest_id);
    }
    // The ten oldest are voided: a ?status=voided list has to walk past 290 newer open ones to find them.
    for (const id of ids.slice(0, 10)) await h.contests.voidContest(id);

    // What the list must answer: every record, sorted as the contract's "newest first" (ties by seq).
    const records = [...h.store.db<ContestRecord>('contests').getRange()].map(({ value }) => value);
    const newestFirst = records.sort((a, b) => b.createdAtMs - a.createdAtMs || b.seq - a.seq).map((r) => r.contestId);
    assert.deepEqual(newestFirst, [...ids].reverse(), 'created one after another: newest first is the reverse');

    const reads = countContestReads(h);
    const cases: Array<[Parameters<typeof h.contests.list>[0], number | undefined, string[]]> = [
      [{}, 10, newestFirst.slice(0, 10)],
      [{}, undefined, newestFirst.slice(0, 100)],
      [{ status: 'open' }, 10, newestFirst.slice(0, 10)],
      [
        { category: 'sports' },
        10,
        ids
          .filter((_, i) => categories[i % 3] === 'sports')
          .reverse()
          .slice(0, 10),
      ],
      [{ status: 'voided' }, 10, ids.slice(0, 10).reverse()],
      [
        { status: 'voided', category: 'mentions' },
        undefined,
        ids
          .slice(0, 10)
          .filter((_, i) => categories[i % 3] === 'mentions')
          .reverse(),
      ],
      [{ status: 'resolved' }, undefined, []],
    ];
    for (const [filter, limit, expected] of cases) {
      reads.reset();
      const listed = h.contests.list(filter, { limit }).contests;
      assert.deepEqual(
        listed.map((c) => c.contest_id),
        expected,
        JSON.stringify(filter),
      );
      // One read per contest listed, none for those the index filtered out.
      assert.equal(
        reads.count,
        expected.length,
        `${JSON.stringify(filter)} read ${reads.count} contest records for ${expected.length} listed`,
      );
    }

    // Every page after the first, wherever its cursor points, reads only the records it returns too.
    for (const filter of [{}, { category: 'sports' as const }, { status: 'voided' as const }]) {
      const walked: string[] = [];
      let after: ReturnType<typeof h.contests.list>['next'] = null;
      for (let pages = 0; ; pages++) {
        assert.ok(pages <= 300, 'next never became null');
        reads.reset();
        const page = h.contests.list(filter, { limit: 7, after });
        assert.equal(reads.count, page.contests.length, `a page of ${page.contests.length} read ${reads.count} records`);
        walked.push(...page.contests.map((c) => c.contest_id));
        if (page.next === null) break;
        after = page.next;
      }
      const all = h.contests.list(filter, { limit: 100 });
      assert.deepEqual(
        walked.slice(0, 100),
        all.contests.map((c) => c.contest_id),
        JSON.stringify(filter),
      );
      assert.equal(new Set(walked).size, walked.length, 'no contest twice');
    }
    assert.equal(
      h.contests.list({}, { limit: 100, after: { createdAtMs: 0, seq: 0 } }).contests.length,
      0,
      'nothing is older than the start of time',
    );
  });

  it("a settlement's final batch: the list shows the status LMDB holds, also before the settlement's continuation ran, and after it failed", async () => {
    const seen: Array<Record<string, string[]>> = [];
    let h: ContestsHarness | null = null;
    let isCrashing = false;
    const listNow = () => ({
      open: h!.contests.list({ status: 'open' }).contests.map((c) => c.contest_id),
      resolved: h!.contests.list({ status: 'resolved' }).contests.map((c) => c.contest_id),
      all: h!.contests.list({}).contests.map((c) => `${c.contest_id}:${c.status}`),
    });
    h = await openContestsHarness({
      settlement: {
        batchEntries: 2,
        afterBatch: (p: SettleProgress) => {
          // Right after a batch committed, before the settlement's continuation (the window in which another
          // request may read the committed record while the index has not followed yet).
          if (p.isFinished) seen.push(listNow());
          if (p.isFinished && isCrashing) throw new Error('simulated crash after the final batch');
        },
      },
    });
    harnesses.push(h);
    const markets = await createMarketsInProcess(h, 2);
    const users = await fundUsersInProcess(h, 3, 100n * BigInt(BET));
    const first = await seedContestInProcess(h, contestConfig([markets[0]!]), users, 5, () => [up(markets[0]!)]);
    const second = await seedContestInProcess(h, contestConfig([markets[1]!]), users, 5, () => [up(markets[1]!)]);

    await h.markets.resolve(markets[0]!, 'YES');
    assert.deepEqual(seen[0], { open: [second], resolved: [first], all: [`${second}:open`, `${first}:resolved`] });
    assert.deepEqual(listNow(), seen[0]);

    // The settlement fails after its final batch committed: the contest is resolved in LMDB, and so in the list.
    isCrashing = true;
    await assert.rejects(h.markets.resolve(markets[1]!, 'YES'));
    assert.deepEqual(seen[1], { open: [], resolved: [second, first], all: [`${second}:resolved`, `${first}:resolved`] });
    assert.deepEqual(listNow(), seen[1]);
  });
});
