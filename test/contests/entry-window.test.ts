// The entry window's edges, exactly (src/contests/rules.ts checkEntryWindow, a pure function): a real clock
// cannot land a request on one given millisecond, so the edges are checked here and the window as a whole
// against the real server (entry.test.ts, "time windows"). The interface calls betting_closes_ms the "last
// time at which entries are accepted": that millisecond is still open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEntryWindow } from '../../src/contests/rules.js';
import type { ContestRecord } from '../../src/records/contests.js';

const OPENS_MS = 1_000;
const CLOSES_MS = 2_000;
/** Only the fields the window reads; the rest of a record plays no part. */
const contest = (status: ContestRecord['status']) => ({ status, entryOpensAtMs: OPENS_MS, bettingClosesMs: CLOSES_MS }) as ContestRecord;
const closed = { code: 'CONTEST_CLOSED' };

test('entries are accepted from entry_opens_at_ms through betting_closes_ms, both included', () => {
  assert.throws(() => checkEntryWindow(contest('open'), OPENS_MS - 1), closed);
  assert.doesNotThrow(() => checkEntryWindow(contest('open'), OPENS_MS));
  assert.doesNotThrow(() => checkEntryWindow(contest('open'), CLOSES_MS));
  assert.throws(() => checkEntryWindow(contest('open'), CLOSES_MS + 1), closed);
});

test('a contest that is not open takes no entry inside its window either', () => {
  for (const status of ['resolved', 'voided'] as const) assert.throws(() => checkEntryWindow(contest(status), OPENS_MS), closed);
});
