// Issue 33 item 6, the second wall: a withdrawals or journal page is one range read from a cursor's key, and
// that read is held inside the caller's own keys at both ends (store/key-range.ts). Cursors are authenticated over HTTP
// (test/http/cursor-binding.test.ts); here the ledger is called directly with the keys a forged cursor held,
// so the wall is seen on its own. In process, on a real store and real shards.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/lib/clock.js';
import { makerAccount, userAccount } from '../../src/records/ledger.js';
import { journalNewestFirst, Ledger, NO_USERS } from '../../src/ledger/ledger.js';
import { Withdrawals } from '../../src/ledger/withdrawals.js';
import { localWithdrawalReads } from '../../src/ledger/withdrawal-records.js';
import { fundUsersInProcess, openContestsHarness, type ContestsHarness } from '../helpers/contests-in-process.js';

const USDC = 1_000_000n;
const DESTINATION = `0x${'5a'.repeat(20)}`;

describe("a withdrawals page never leaves its account's keys, whatever key it starts from", () => {
  let h: ContestsHarness;
  let withdrawals: Withdrawals;
  let low: string; // the user whose keys sort first
  let high: string;
  const made = new Map<string, string[]>(); // user id -> withdrawal ids, oldest first

  before(async () => {
    h = await openContestsHarness();
    withdrawals = new Withdrawals(h.store, systemClock, h.shards, new Ledger(h.store, NO_USERS), localWithdrawalReads(h.store));
    const users = (await fundUsersInProcess(h, 2, 10n * USDC)).sort();
    [low, high] = [users[0]!, users[1]!];
    for (const userId of users) {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { record } = await withdrawals.request({
          account: userAccount(userId),
          userId,
          amountMicros: USDC,
          destination: DESTINATION,
          idempotencyKey: `k${i}`,
        });
        ids.push(record.withdrawalId);
      }
      made.set(userId, ids);
    }
  });
  after(async () => h.destroy());

  const idsOf = (page: { items: { withdrawalId: string }[] }) => page.items.map((r) => r.withdrawalId);

  it("the keys of the exploit: above, inside and below another account's keys", async () => {
    // Newest first, as the keys sort: an id starts with its creation time, so two made in the same
    // millisecond sort by their random tails, not by the order they were made in.
    const newestFirst = (ids: readonly string[]) => [...ids].sort().reverse();
    const lowOwn = newestFirst(made.get(low)!);
    const highOwn = newestFirst(made.get(high)!);
    const forged = [
      `${userAccount(high)}|~`, // above the other's keys: the read went down through them (the exploit)
      `${userAccount(high)}|`,
      `${userAccount(high)}|0000000000000000|x`,
      '~',
      '\uffff',
      `${userAccount(low)}|~~`, // past its own end
    ];
    for (const before of forged) {
      assert.deepEqual(idsOf(await withdrawals.pageOfAccount(userAccount(low), 10, before)), lowOwn, JSON.stringify(before));
    }
    for (const before of [`${userAccount(low)}|~`, '', '!', 'maker:']) {
      const page = await withdrawals.pageOfAccount(userAccount(high), 10, before);
      assert.deepEqual(idsOf(page), [], `${JSON.stringify(before)}: ${idsOf(page)}`);
    }
    // A maker's account sorts below every user's: its list started at a user's key read users' withdrawals.
    const maker = makerAccount(`0x${'ab'.repeat(20)}`);
    for (const before of [`${userAccount(high)}|~`, `${userAccount(low)}|~`, '~']) {
      assert.deepEqual(idsOf(await withdrawals.pageOfAccount(maker, 10, before)), [], JSON.stringify(before));
    }
    // Its own pages still walk: newest first, each once.
    const first = await withdrawals.pageOfAccount(userAccount(high), 2, null);
    assert.deepEqual(idsOf(first), highOwn.slice(0, 2));
    assert.deepEqual(idsOf(await withdrawals.pageOfAccount(userAccount(high), 2, first.next)), highOwn.slice(2));
  });

  it("the operator's queue of one status never reads another status's keys", async () => {
    const pending = await withdrawals.pageOfStatus('pending', 100, null);
    assert.equal(pending.items.length, 6);
    // Below the status's keys (another status's, or nothing): its queue from the start; above them: nothing.
    for (const after of ['completed|~', 'failed|', '']) {
      assert.deepEqual(idsOf(await withdrawals.pageOfStatus('pending', 100, after)), idsOf(pending), after);
    }
    for (const after of ['~', 'rejected|', 'pending|~~'])
      assert.deepEqual(idsOf(await withdrawals.pageOfStatus('pending', 100, after)), [], after);
    assert.deepEqual(idsOf(await withdrawals.pageOfStatus('completed', 100, 'a')), []);
    assert.deepEqual(idsOf(await withdrawals.pageOfStatus('failed', 100, 'a')), []);
  });

  it("a journal page started at another account's key reads its own rows only", () => {
    const rowsOf = (userId: string, fromKey: string | null) =>
      [...journalNewestFirst(h.store, userAccount(userId), fromKey)].map((r) => r.key);
    const lowOwn = rowsOf(low, null);
    assert.ok(lowOwn.length >= 4, `${lowOwn.length} rows`); // the credit and three withdrawals
    for (const fromKey of [`${userAccount(high)}|~`, `${userAccount(high)}|`, '~', `${userAccount(low)}|~~`]) {
      assert.deepEqual(rowsOf(low, fromKey), lowOwn, fromKey);
    }
    for (const fromKey of [`${userAccount(low)}|~`, '', 'maker:']) assert.deepEqual(rowsOf(high, fromKey), [], fromKey);
  });
});
