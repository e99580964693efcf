// Main thread; reads only. A user's contest entries of every game type, survivor and streak included
// (GET /v1/user/contest_entries, contract section 13), newest first. Unfiltered, a page walks the `userEntries`
// index (written by the user's shard with each new entry); for one contest, the contest's own entry keys of
// the user (`contestEntries`, keyed by contest and user, newest = highest entry_index). Either way a page
// reads `limit` + 1 rows and their records, never the user's whole history.
import assert from 'node:assert/strict';
import type { Store } from '../store/db.js';
import type { UserEntry } from '../contract/history.js';
import { isEliminated } from './rules.js';
import { ContestRecords } from './contest-records.js';
import type { ContestRecord, EntryRecord } from '../records/contests.js';
import { callerEntryView, entryOutcomes } from './views.js';
import type { MarketOf } from '../contract/markets.js';

/** Where an unfiltered page ends: its last entry's (created_at_ms, contest_id, entry_index). */
export type UserEntryPosition = [createdAtMs: number, contestId: string, entryIndex: number];

export function userEntriesPage(
  store: Store,
  marketOf: MarketOf,
  userId: string,
  page: { limit: number; after: UserEntryPosition | null },
): { entries: UserEntry[]; next: UserEntryPosition | null } {
  const records = new ContestRecords(store);
  const positions: UserEntryPosition[] = [];
  // One row past the page says whether another follows.
  for (const position of records.userEntryPositions(userId, page.after)) {
    positions.push(position);
    if (positions.length > page.limit) break;
  }
  const shown = positions.slice(0, page.limit);
  const view = viewer(records, marketOf);
  return {
    entries: shown.map(([, contestId, entryIndex]) => view(contestId, userId, entryIndex)),
    next: positions.length > page.limit ? shown.at(-1)! : null,
  };
}

/** One contest's entries of the user, highest entry_index first, strictly below `beforeIndex`. */
export function userContestEntriesPage(
  store: Store,
  marketOf: MarketOf,
  userId: string,
  contestId: string,
  page: { limit: number; beforeIndex: number | null },
): { entries: UserEntry[]; next: number | null } {
  const records = new ContestRecords(store);
  const indexes: number[] = [];
  // One entry past the page says whether another follows.
  for (const entry of records.userEntriesNewestFirst(contestId, userId, page.beforeIndex, page.limit + 1)) indexes.push(entry.entryIndex);
  const shown = indexes.slice(0, page.limit);
  const view = viewer(records, marketOf);
  return {
    entries: shown.map((entryIndex) => view(contestId, userId, entryIndex)),
    next: indexes.length > page.limit ? shown.at(-1)! : null,
  };
}

/** Reads an entry and its contest (each contest once per page) and makes its view. */
function viewer(records: ContestRecords, marketOf: MarketOf) {
  const contests = new Map<string, ContestRecord>();
  return (contestId: string, userId: string, entryIndex: number): UserEntry => {
    let contest = contests.get(contestId);
    if (contest === undefined) {
      contest = records.contest(contestId);
      assert.ok(contest !== undefined, `entry of unknown contest ${contestId}`);
      contests.set(contestId, contest);
    }
    const entry = records.entry(contestId, userId, entryIndex);
    assert.ok(entry !== undefined, `history names a missing entry ${contestId}:${entryIndex}`);
    const isSurvivalGame = contest.gameType === 'survivor' || contest.gameType === 'streak';
    const state =
      entry.settlement !== null ? 'settled' : isSurvivalGame && isEliminated(entryOutcomes(entry, marketOf)) ? 'eliminated' : 'open';
    return {
      contest_id: contestId,
      game_type: contest.gameType,
      state,
      ...callerEntryView(entry, marketOf),
      ...moneyStrings(entry),
    };
  };
}

/** The row's money as decimal integer strings (contract/history.ts UserEntry), null until the entry is settled. */
function moneyStrings(entry: EntryRecord): Pick<UserEntry, 'stake_micros' | 'payout_micros' | 'net_payout_micros'> {
  const { settlement } = entry;
  return {
    stake_micros: String(entry.stakeMicros),
    payout_micros: settlement === null ? null : String(settlement.payoutMicros),
    net_payout_micros: settlement === null ? null : String(settlement.netPayoutMicros),
  };
}
