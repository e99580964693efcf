// Main thread. The authenticated user's own resources: balance (contract section 4), preferences (section 9).
import { defineRoute, json } from '../route.js';
import type { Services } from '../services.js';
import { BalanceResponse } from '../../contract/users.js';
import { Preferences, PreferencesPatch } from '../../contract/preferences.js';
import type { UserRfqPosition } from '../../rfq/history.js';
import { userAccount } from '../../records/ledger.js';
import { userContestEntriesPage, userEntriesPage, type UserEntryPosition } from '../../contests/history.js';
import { USER_HISTORY_PAGE, UserEntriesQuery, UserEntryList, UserRfqList, UserRfqsQuery } from '../../contract/history.js';
import { isSafeIntegers } from '../../contract/paging.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type UserRouteDeps = Pick<Services, 'markets' | 'ownedViews' | 'preferences' | 'store'>;

const isRfqPosition = (values: readonly unknown[]): values is UserRfqPosition =>
  values.length === 2 && Number.isSafeInteger(values[0]) && typeof values[1] === 'string';
const isEntryPosition = (values: readonly unknown[]): values is UserEntryPosition =>
  values.length === 3 && Number.isSafeInteger(values[0]) && typeof values[1] === 'string' && Number.isSafeInteger(values[2]);
const isEntryIndexPosition = isSafeIntegers(1);

export function userRoutes(s: UserRouteDeps) {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/user/balance',
      readsOwnWrites: true,
      tag: 'user',
      auth: 'user',
      summary: 'Available, reserved, at-risk and pending-withdrawal balance in micros (decimal strings)',
      responses: { 200: BalanceResponse },
      handler: async ({ auth }) => json(200, await s.ownedViews.read(userAccount(auth.userId), 'userBalance', { userId: auth.userId })),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/user/rfqs',
      readsOwnWrites: true,
      tag: 'user',
      auth: 'user',
      summary: "The caller's RFQs, newest first, optionally of one status (paged: follow next_cursor until null)",
      query: UserRfqsQuery,
      responses: { 200: UserRfqList },
      paged: { items: 'rfqs', defaultLimit: USER_HISTORY_PAGE.defaultLimit, isPosition: isRfqPosition },
      handler: async ({ auth, query }, { after, limit }) => {
        const page = await s.ownedViews.read(userAccount(auth.userId), 'userRfqs', {
          userId: auth.userId,
          status: query.status,
          limit,
          after,
        });
        return { items: page.rfqs, next: page.next };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/user/contest_entries',
      tag: 'user',
      auth: 'user',
      summary: "The caller's contest entries of every game type, newest first, optionally of one contest (paged)",
      query: UserEntriesQuery,
      responses: { 200: UserEntryList },
      handler: ({ auth, paging, query }) => {
        const limit = query.limit ?? USER_HISTORY_PAGE.defaultLimit;
        const marketOf = (marketId: number) => s.markets.get(marketId);
        // The contest_id filter is bound into the cursor, so each position shape comes back to its own branch:
        // the shape depends on the filter, which the `paged` option's one position guard cannot see, so this
        // list reads its cursor itself.
        if (query.contest_id === undefined) {
          const page = userEntriesPage(s.store, marketOf, auth.userId, { limit, after: paging.after(isEntryPosition) });
          return json(200, { entries: page.entries, next_cursor: paging.next(page.next) });
        }
        const before = paging.after(isEntryIndexPosition);
        const page = userContestEntriesPage(s.store, marketOf, auth.userId, query.contest_id, { limit, beforeIndex: before?.[0] ?? null });
        return json(200, { entries: page.entries, next_cursor: paging.next(page.next === null ? null : [page.next]) });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/user/preferences',
      tag: 'user',
      auth: 'user',
      summary: 'The user preferences',
      responses: { 200: Preferences },
      handler: ({ auth }) => json(200, s.preferences.get(auth.userId)),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/user/preferences',
      tag: 'user',
      auth: 'user',
      summary: 'Change any subset of the preferences; applies to RFQs created afterwards',
      body: PreferencesPatch,
      responses: { 200: Preferences },
      handler: async ({ auth, body }) => json(200, await s.preferences.update(auth.userId, body)),
    }),
  ];
}
