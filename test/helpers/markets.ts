// Mention markets through the admin routes: the one way the tests make a market OPEN and resolve it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Market, ResolveOutcome } from '../../src/contract/markets.js';
import { admin } from './http.js';

export type { Market };

/** What the market helpers need of a server: a TestServer or an in-process one. */
export interface AdminTarget {
  baseUrl: string;
  adminToken: string;
}

const HOUR_MS = 3_600_000;

/**
 * An OPEN mention market whose betting closes in an hour (or at `bettingClosesAtMs`), as the admin route
 * answers it. Its source is `test`, event `event-1`, market `m-<name>`; the name is fresh unless given.
 */
export async function createMarket(
  server: AdminTarget,
  name = `market ${randomUUID().slice(0, 8)}`,
  bettingClosesAtMs = Date.now() + HOUR_MS,
): Promise<Market> {
  const res = await admin(server).post<Market>('/v1/admin/mention-markets', {
    name,
    source_kind: 'test',
    source_event_id: 'event-1',
    source_market_id: `m-${name}`,
    betting_closes_at_ms: bettingClosesAtMs,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

/** The ids of `count` markets made by createMarket, named `market 0`, `market 1`, ... */
export async function createMarkets(server: AdminTarget, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push((await createMarket(server, `market ${i}`)).market_id);
  return ids;
}

/** Resolves a market through the admin route (a manual override of the oracle); the resolved market. */
export async function resolveMarket(server: AdminTarget, marketId: number, outcome: ResolveOutcome): Promise<Market> {
  const res = await admin(server).post<Market>(`/v1/admin/markets/${marketId}/resolve`, { outcome });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}
