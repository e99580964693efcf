// Main thread; reads only. GET /v1/mm/taker_pnl, paged (contract sections 7, 11 and 13): a maker's fills
// grouped by taker, in taker order, `limit` takers a page. It walks the maker's by-taker index
// (`makerTakerFills`, written by the shard with each fill): one seek per taker to skip from one taker to the
// next, and for each taker on the page one range read of its fills since `since_ms`. So a page reads its own
// takers' fills, never the maker's whole history; a taker with no fill since `since_ms` costs one seek and is
// left out. A page visits at most TAKER_PNL_SCAN_MAX takers: past that it comes back short (possibly empty)
// with a cursor where the walk goes on, as every bounded list here does.
import type { Store } from '../store/db.js';
import { takerPnlRow, type TakerPnl } from '../records/fills.js';
import { nextTakerOfMaker, takerFillsSince } from './rfq-records.js';

export const TAKER_PNL_SCAN_MAX = 1000;

export function takerPnlPage(
  store: Store,
  makerAddress: string,
  page: { sinceMs: number; limit: number; afterTaker: string | null },
): { takers: TakerPnl[]; nextTaker: string | null } {
  const takers: TakerPnl[] = [];
  let taker = page.afterTaker;
  for (let visited = 0; visited < TAKER_PNL_SCAN_MAX; visited++) {
    const next = nextTakerOfMaker(store, makerAddress, taker);
    if (next === null) return { takers, nextTaker: null };
    taker = next;
    const own = takerFillsSince(store, makerAddress, taker, page.sinceMs);
    if (own.length === 0) continue;
    // A full page has a next page only if a taker it would list follows (contract section 13: null on the last).
    if (takers.length === page.limit) return { takers, nextTaker: takers.at(-1)!.taker };
    takers.push(takerPnlRow(taker, own));
  }
  // Out of budget: go on after the last taker visited (listed or not).
  return { takers, nextTaker: taker };
}
