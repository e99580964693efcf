// Main thread; reads only. What the contest routes read (contract section 8, interface.md): the public list,
// a contest's detail and image, and the operator's page of a contest's entries. None of these runs on a
// contest's lane (contests.ts): each read is one LMDB snapshot of what the lanes last committed, so a read
// never waits behind an entry or a settlement. The list walks the actor's list index (list-index.ts) and reads
// only the records it returns: contests are never deleted, so reading them all per request grew without bound.
import assert from 'node:assert/strict';
import type { UserPrincipal } from '../contract/principal.js';
import { ApiError } from '../lib/errors.js';
import { CONTEST_LIST_PAGE, type ContestDetail, type ContestSummary } from '../contract/contests.js';
import type { Store } from '../store/db.js';
import { defaultImage, type ServedImage } from './images.js';
import type { ContestListIndex, ListEntry, ListPosition } from './list-index.js';
import { ContestRecords } from './contest-records.js';
import { contestOfEntryKey, type ContestRecord } from '../records/contests.js';
import { callerEntryView, callerView, detailView, summaryView } from './views.js';
import type { MarketOf } from '../contract/markets.js';

/** The route's bounds on `limit` (contract/contests.ts), which list() asserts: a page reads at most this many records. */
const MAX_LIST_LIMIT = CONTEST_LIST_PAGE.maxLimit;
const DEFAULT_LIST_LIMIT = CONTEST_LIST_PAGE.defaultLimit;

/** Entries in one page of GET /v1/admin/contests/{id}/entries (the route's `limit` maximum and default). */
export const MAX_ADMIN_ENTRIES_PAGE = 1000;

/** Whether `key` is an entry key (records.ts entryKey) of `contestId`: the shape of an admin entries cursor. */
export const isEntryKeyOf = (contestId: string, key: string) => contestOfEntryKey(key) === contestId;

export interface ListFilter {
  status?: ContestRecord['status'] | undefined;
  category?: ContestRecord['category'] | undefined;
}
export interface ContestPage {
  contests: ContestSummary[];
  /** Where the next page starts (the last contest of this one), or null on the last page. */
  next: ListPosition | null;
}

export type AdminEntry = ReturnType<typeof callerEntryView> & { user_id: string };
export interface AdminEntriesPage {
  entries: AdminEntry[];
  /** The key of the page's last entry when another entry follows it (the next page starts after it), else null. */
  nextKey: string | null;
}

/**
 * The caller's entries a contest's detail shows, at most, in entry_index order: nothing else bounds how many
 * one user holds (entry_cap is the contest's, up to 1,000,000), and every detail GET would read and encode
 * them all. GET /v1/user/contest_entries?contest_id= pages every one.
 */
export const MAX_CALLER_ENTRIES = 256;

export class ContestQueries {
  private readonly records: ContestRecords;

  constructor(
    store: Store,
    /** Owned and kept by the actor (contests.ts); read here only. */
    private readonly listIndex: ContestListIndex,
    private readonly marketOf: MarketOf,
  ) {
    this.records = new ContestRecords(store);
  }

  /**
   * One page of the list, newest first (createdAtMs, then seq, descending), strictly after `after` (the last
   * contest of the previous page; null: from the newest); an absent (undefined) status or category filters
   * nothing. `next` is the position of the page's last contest when another contest that the index says
   * matches follows it, else null. Filters on the in-memory index and reads only the records it returns, so
   * a page costs at most `limit` (≤ 100) record reads, plus one per contest settling at that moment,
   * whatever the number of contests, and a walk of the index from the cursor's place (a binary search) up
   * to the first contest past the page (~2 ns an entry; the whole index, ~20 µs at 10,000 contests, when
   * fewer than `limit` match). Summaries come from the records, so entries_filled and total_pot_micros are
   * as last committed. Measured: 0.012 ms at limit 10 over 20,000 contests, where reading every record
   * took 39 ms (docs/contests.md "The list").
   *
   * Walking every page while contests are created repeats nothing and skips nothing that existed when the
   * walk began: positions are unique and fixed at creation, and a new contest sorts before the cursor (it
   * is newer), except after a clock step back, when it may land in a later page: it is then listed once.
   */
  list(filter: ListFilter, page: { limit?: number | undefined; after?: ListPosition | null | undefined } = {}): ContestPage {
    const limit = page.limit ?? DEFAULT_LIST_LIMIT;
    assert.ok(Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIST_LIMIT, `list limit ${limit}`);
    const contests: ContestSummary[] = [];
    let last: ListEntry | null = null;
    let next: ListPosition | null = null;
    this.listIndex.walkNewestFirst((entry) => {
      if (filter.category !== undefined && entry.category !== filter.category) return true;
      const isSettling = entry.pendingStatus !== null;
      if (filter.status !== undefined && !isSettling && entry.status !== filter.status) return true;
      if (contests.length === limit) {
        // The index says another contest matches (a settling one only may not, by its record: then the
        // next page is empty, which a client following next_cursor handles like any last page).
        next = { createdAtMs: last!.createdAtMs, seq: last!.seq };
        return false;
      }
      const contest = this.records.contest(entry.contestId);
      assert.ok(contest !== undefined, `listed contest ${entry.contestId} has no record`);
      assert.equal(contest.category, entry.category, `contest ${entry.contestId}: category differs from the list index`);
      if (isSettling) {
        // Its final batch may have committed before the settlement's continuation updated the entry: the
        // record decides, and it can only hold the status before or the one the settlement writes.
        assert.ok(
          contest.status === entry.status || contest.status === entry.pendingStatus,
          `settling contest ${entry.contestId} is ${contest.status}`,
        );
        if (filter.status !== undefined && contest.status !== filter.status) return true;
      } else {
        // A status change that did not go through the actor's settle() (the only writer of a status) would show here.
        assert.equal(contest.status, entry.status, `contest ${entry.contestId}: the list index missed a status change`);
      }
      contests.push(summaryView(contest));
      last = entry;
      return true;
    }, page.after ?? null);
    return { contests, next };
  }

  /** Interface: lineups and outcast only; survivor and streak are CONTEST_NOT_FOUND like an unknown id. */
  detail(contestId: string, caller: UserPrincipal | null): ContestDetail {
    const contest = this.records.contest(contestId);
    if (contest === undefined || contest.gameType === 'survivor' || contest.gameType === 'streak') {
      throw new ApiError('CONTEST_NOT_FOUND');
    }
    const section =
      caller === null ? null : callerView([...this.records.userEntriesOf(contestId, caller.userId, MAX_CALLER_ENTRIES)], this.marketOf);
    return detailView(contest, this.marketOf, section);
  }

  image(contestId: string): ServedImage {
    const contest = this.records.contest(contestId);
    if (contest === undefined) throw new ApiError('CONTEST_NOT_FOUND');
    if (!contest.hasImage) return defaultImage(contest.category);
    const stored = this.records.image(contestId);
    assert.ok(stored !== undefined, `image of contest ${contestId} is missing`);
    return stored;
  }

  /**
   * One page of a contest's entries of any game_type, with their owners (an operator's view), in key order
   * (user id, then entry_index): at most `limit` entries strictly after `afterKey` (the previous page's
   * nextKey; null: from the first), so a page costs limit + 2 reads however many entries the contest holds
   * (up to entry_cap = 1,000,000). `afterKey` is a thunk, called once the contest is found: an unknown
   * contest is CONTEST_NOT_FOUND whatever cursor came with it (the route decodes the cursor in it).
   */
  adminEntries(contestId: string, page: { limit: number; afterKey: () => string | null }): AdminEntriesPage {
    assert.ok(Number.isInteger(page.limit) && page.limit >= 1 && page.limit <= MAX_ADMIN_ENTRIES_PAGE, `admin entries limit ${page.limit}`);
    if (this.records.contest(contestId) === undefined) throw new ApiError('CONTEST_NOT_FOUND');
    const afterKey = page.afterKey();
    assert.ok(afterKey === null || isEntryKeyOf(contestId, afterKey), `admin entries of ${contestId} after ${afterKey}`);
    const entries: AdminEntry[] = [];
    let lastKey: string | null = null;
    // One entry past the page says whether another follows.
    for (const { key, value } of this.records.entriesAfter(contestId, afterKey, page.limit + 1)) {
      if (entries.length === page.limit) return { entries, nextKey: lastKey };
      entries.push({ user_id: value.userId, ...callerEntryView(value, this.marketOf) });
      lastKey = key;
    }
    return { entries, nextKey: null };
  }
}
