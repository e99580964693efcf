// A contest's detail for its caller (contests/queries.ts detail), in process on a real store with real shard
// actors: the caller section shows at most MAX_CALLER_ENTRIES of the caller's entries, in entry_index order,
// however many the caller holds (each detail GET read and encoded every one).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { MAX_CALLER_ENTRIES } from '../../src/contests/queries.js';
import { contestConfig, up } from '../helpers/contests.js';
import { createMarketsInProcess, fundUsersInProcess, openContestsHarness, seedContestInProcess } from '../helpers/contests-in-process.js';

const BET = 1_000;
const ENTRIES = MAX_CALLER_ENTRIES + 44;

const harness = openContestsHarness();
after(async () => (await harness).destroy());

test('the caller section shows the first MAX_CALLER_ENTRIES entries, in entry_index order, of a caller with more', async () => {
  const h = await harness;
  const [market] = await createMarketsInProcess(h, 1);
  const [userId] = await fundUsersInProcess(h, 1, BigInt(ENTRIES * BET));
  const config = contestConfig([market!], { bet_amount_micros: BET, entry_cap: ENTRIES });
  const contestId = await seedContestInProcess(h, config, [userId!], ENTRIES, () => [up(market!)]);

  const caller = { kind: 'user' as const, userId: userId!, wallet: '0x', sessionKey: 'k' };
  const detail = h.contests.detail(contestId, caller);
  assert.equal(detail.entries_filled, ENTRIES);
  assert.equal(detail.caller?.joined, true);
  assert.deepEqual(
    detail.caller?.entries.map((e) => e.entry_index),
    Array.from({ length: MAX_CALLER_ENTRIES }, (_, i) => i),
  );
  const stranger = { ...caller, userId: 'nobody' };
  assert.deepEqual(h.contests.detail(contestId, stranger).caller, { joined: false, entries: [] });
});
