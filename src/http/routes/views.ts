// Main thread. The money views of contract section 11 ("Views"): the caller's positions and journal, and a
// maker's fills; each paged by the one convention (contract/paging.ts). The pages are read by rfq/positions-view.ts,
// ledger/journal-view.ts and rfq/maker-fills-view.ts.
import { defineRoute } from '../route.js';
import { positionOf } from '../../contract/paging.js';
import type { Services } from '../services.js';
import { userAccount } from '../../records/ledger.js';
import type { JournalCursor } from '../../ledger/journal-view.js';
import type { PositionCursor } from '../../rfq/positions-view.js';
import {
  JournalList,
  JournalQuery,
  MakerFillList,
  MakerFillsQuery,
  PositionList,
  PositionsQuery,
  VIEWS_PAGE,
} from '../../contract/views.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type ViewsRouteDeps = Pick<Services, 'markets' | 'ownedViews' | 'store'>;

const isTimeAndId = (v: readonly unknown[]) => Number.isSafeInteger(v[0]) && (v[0] as number) >= 0 && typeof v[1] === 'string';
const isPositionCursor = (v: readonly unknown[]): v is PositionCursor => v.length === 2 && isTimeAndId(v);
const isJournalCursor = (v: readonly unknown[]): v is JournalCursor =>
  v.length === 3 && isTimeAndId(v) && Number.isSafeInteger(v[2]) && (v[2] as number) >= 0;
/** A request id (a UUID): the fills merge rebuilds its range starts from it (maker-fills-view.ts). */
const isRequestIdCursor = (v: readonly unknown[]): v is [string] =>
  v.length === 1 && typeof v[0] === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v[0]);

export function viewRoutes(s: ViewsRouteDeps) {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/user/positions',
      readsOwnWrites: true,
      tag: 'user',
      auth: 'user',
      summary: "The caller's filled RFQs, newest first, optionally open or settled only, with what each paid (paged)",
      query: PositionsQuery,
      responses: { 200: PositionList },
      paged: { items: 'positions', defaultLimit: VIEWS_PAGE.defaultLimit, isPosition: isPositionCursor },
      handler: async ({ auth, query }, { after, limit }) => {
        const args = { userId: auth.userId, status: query.status, limit, after };
        const page = await s.ownedViews.read(userAccount(auth.userId), 'userPositions', args);
        return { items: page.positions, next: page.next };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/user/journal',
      readsOwnWrites: true,
      tag: 'user',
      auth: 'user',
      summary: "The caller's money movements, newest first: one entry per transfer and bucket it changed (paged)",
      query: JournalQuery,
      responses: { 200: JournalList },
      paged: { items: 'entries', defaultLimit: VIEWS_PAGE.defaultLimit, isPosition: isJournalCursor },
      handler: async ({ auth }, { after, limit }) => {
        const account = userAccount(auth.userId);
        const page = await s.ownedViews.read(account, 'accountJournal', { account, limit, after });
        return { items: page.entries, next: page.next };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/mm/fills',
      readsOwnWrites: true,
      tag: 'mm',
      auth: 'maker',
      summary: "The maker's fills, newest first, optionally open or settled only, with the maker's result once settled (paged)",
      query: MakerFillsQuery,
      responses: { 200: MakerFillList },
      paged: { items: 'fills', defaultLimit: VIEWS_PAGE.defaultLimit, isPosition: isRequestIdCursor },
      handler: async ({ auth, query }, { after, limit }) => {
        const args = { address: auth.address, status: query.status, limit, afterRequestId: after?.[0] ?? null };
        const page = await s.ownedViews.readEvery('makerFills', args);
        return { items: page.items, next: positionOf(page.next) };
      },
    }),
  ];
}
