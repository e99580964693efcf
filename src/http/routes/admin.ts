// Main thread. Admin routes (contract sections 4 and 5), behind the configured admin bearer token.
import { defineRoute, json } from '../route.js';
import type { Services } from '../services.js';
import { errors } from '../../lib/errors.js';
import { parseAddress } from '../../crypto/address.js';
import { CreditRequest, CreditResponse } from '../../contract/users.js';
import { positiveMicrosOf } from '../../contract/common.js';
import {
  CreateMentionMarket,
  DEFAULT_DUE_PAGE,
  DueMarketsPage,
  DueMarketsQuery,
  Market,
  MarketIdParams,
  ResolveMarket,
} from '../../contract/markets.js';
import { userAccount } from '../../records/ledger.js';
import { isDuePosition } from '../../markets/due-index.js';
import { positionOf } from '../../contract/paging.js';
import { SetStorage, StorageStatus } from '../../contract/storage.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type AdminRouteDeps = Pick<Services, 'clock' | 'credits' | 'markets' | 'ownedViews' | 'store'>;

export function adminRoutes(s: AdminRouteDeps) {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/admin/users/credit',
      tag: 'admin',
      auth: 'admin',
      summary: 'Fund a user (created if new); idempotent by idempotency_key',
      body: CreditRequest,
      responses: { 200: CreditResponse },
      handler: async ({ body }) => {
        const wallet = parseAddress(body.wallet);
        if (wallet === null) {
          throw errors.badChecksum('/wallet');
        }
        const amountMicros = positiveMicrosOf(body.amount_micros, '/amount_micros');
        const user = await s.credits.creditUser(wallet, amountMicros, body.idempotency_key);
        return json(200, {
          user_id: user.userId,
          wallet: user.wallet,
          credited_micros: String(amountMicros),
          balance: await s.ownedViews.read(userAccount(user.userId), 'userBalance', { userId: user.userId }),
        });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/admin/mention-markets',
      tag: 'admin',
      auth: 'admin',
      summary: 'Create a mention market',
      body: CreateMentionMarket,
      responses: { 201: Market },
      handler: async ({ body }) => json(201, await s.markets.createMention(body)),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/admin/markets/{id}/resolve',
      tag: 'admin',
      auth: 'admin',
      summary:
        'Resolve a market YES, NO or VOID (a manual override of the oracle); final: another outcome later is 409 MARKET_ALREADY_RESOLVED',
      params: MarketIdParams,
      body: ResolveMarket,
      responses: { 200: Market },
      handler: async ({ params, body }) => json(200, await s.markets.resolve(params.id, body.outcome, 'admin')),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/markets',
      tag: 'admin',
      auth: 'admin',
      summary: 'Markets whose resolution time has passed and that are unresolved (due=true), oldest first; follow next_cursor until null',
      query: DueMarketsQuery,
      responses: { 200: DueMarketsPage },
      paged: { items: 'markets', defaultLimit: DEFAULT_DUE_PAGE, isPosition: isDuePosition },
      handler: (_ctx, { after, limit }) => {
        const page = s.markets.duePage(s.clock.nowMs(), limit, after?.[0] ?? null);
        return { items: page.markets, next: positionOf(page.nextKey) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/storage',
      tag: 'admin',
      auth: 'admin',
      summary: "The store's room: what new work may use, what is used, the disk's free space, whether new work is refused",
      responses: { 200: StorageStatus },
      handler: () => json(200, s.store.room.status()),
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/admin/storage',
      tag: 'admin',
      auth: 'admin',
      summary: 'Sets the limit new work may use (PARLAYD_LMDB_MAP_SIZE_MB) until the next start: every thread sees it within 50 ms',
      body: SetStorage,
      responses: { 200: StorageStatus },
      handler: ({ body }) => {
        s.store.room.setMapSizeBytes(body.map_size_mb * 1024 * 1024);
        return json(200, s.store.room.status());
      },
    }),
  ];
}
