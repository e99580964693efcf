// Main thread. Market look-ups (contract section 5).
import { defineRoute, json } from '../route.js';
import type { Services } from '../services.js';
import { ApiError } from '../../lib/errors.js';
import {
  CurrentMarketQuery,
  LookupMarketQuery,
  MarketEnvelope,
  MarketIdParams,
  MarketList,
  MENTION_LIST_PAGE,
  MentionMarketsQuery,
} from '../../contract/markets.js';
import { isSafeIntegers, positionOf } from '../../contract/paging.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type MarketsRouteDeps = Pick<Services, 'markets'>;

/** A mention list cursor holds the last market id of its page. */
const isMarketIdPosition = isSafeIntegers(1);

export function marketRoutes(s: MarketsRouteDeps) {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/markets/current',
      tag: 'markets',
      auth: 'none',
      summary: 'The price market of the window containing now',
      query: CurrentMarketQuery,
      responses: { 200: MarketEnvelope },
      handler: async ({ query }) => json(200, { market: await s.markets.currentPriceMarket(query.asset, query.duration_secs) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/markets/lookup',
      tag: 'markets',
      auth: 'none',
      summary: 'The price market of the window containing at_ms (up to 7 days, at most 2016 windows, ahead of now)',
      query: LookupMarketQuery,
      responses: { 200: MarketEnvelope },
      handler: async ({ query }) => json(200, { market: await s.markets.priceMarketAt(query.asset, query.duration_secs, query.at_ms) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/markets/{id}',
      tag: 'markets',
      auth: 'none',
      summary: 'One market of any kind, with resolved_by and, for a price window, its start and end prices',
      params: MarketIdParams,
      responses: { 200: MarketEnvelope },
      handler: ({ params }) => {
        const market = s.markets.get(params.id);
        if (market === undefined) throw new ApiError('MARKET_NOT_FOUND');
        return json(200, { market });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/mention-markets',
      tag: 'markets',
      auth: 'none',
      summary: 'Mention markets in market id order, optionally filtered by status; follow next_cursor until null',
      query: MentionMarketsQuery,
      responses: { 200: MarketList },
      paged: { items: 'markets', defaultLimit: MENTION_LIST_PAGE.defaultLimit, isPosition: isMarketIdPosition },
      handler: ({ query }, { after, limit }) => {
        const page = s.markets.listMentions(query.status, { limit, afterId: after?.[0] ?? null });
        return { items: page.markets, next: positionOf(page.nextId) };
      },
    }),
  ];
}
