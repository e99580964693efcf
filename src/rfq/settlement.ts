// Main thread. Drives the settlement of filled positions when a market resolves (contract section 11,
// "Settlement"; the outcome rule is positions.ts). It decides nothing about money: it walks the market's
// unsettled positions (the `openPositions` index) a page at a time and hands each page to the shards that
// own the takers' balances, which settle each position once, in their own transactions (shard-money.ts).
// A page is SETTLE_PAGE_POSITIONS positions; the event loop turns between pages, so a market with many
// positions never holds the main thread or one shard's commit for long.
//
// Idempotent: a settled position leaves the index, and the shard skips one already settled. It is re-run at
// start (settleAllDue: whatever resolved while the process was down or a crash cut short) and by every
// same-outcome retry of the resolve (markets/resolution.ts), so a failure at run time heals when the operator
// retries.
import { openPositionRange, requestIdOfPosition } from '../records/rfqs.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../lib/clock.js';
import type { Market } from '../contract/markets.js';
import type { Store } from '../store/db.js';
import type { BalanceOwners } from '../ledger/owners.js';
import type { MoneyResult } from '../ledger/money-ops.js';
import { openPositionKeys, readRfq } from './rfq-records.js';

/** Positions read and settled per page: one shard transaction each of up to this many, ~a few ms. */
export const SETTLE_PAGE_POSITIONS = 256;

/** What settlement needs of the balances' owners: the pool in a process, the owner itself on a shard node. */
export type SettlingOwners = Pick<BalanceOwners, 'readBarrier' | 'shardOfUser' | 'moveMoney'>;

export class Settlement {
  constructor(
    private readonly store: Store,
    private readonly owners: SettlingOwners,
    private readonly clock: Clock,
  ) {}

  /** Settles this market's positions whose outcome is now decided (a lost leg decides one at once). */
  onMarketResolved(market: Market): Promise<number> {
    const { start, end } = openPositionRange(market.market_id);
    return this.settleRange(start, end);
  }

  /** At start: settle whatever resolved while the process was down or crashed mid-way. */
  settleAllDue(): Promise<number> {
    return this.settleRange('', '~');
  }

  private async settleRange(start: string, end: string): Promise<number> {
    let afterKey: string | null = null;
    let settled = 0;
    // Every fill decided before the resolution must be in the open positions read below (the journal
    // engine's read model is written behind; a fill decided later saw the market closed).
    await this.owners.readBarrier();
    for (;;) {
      // The shards' commits (fills, earlier pages' settlements) must be seen: renew this thread's snapshot.
      this.store.root.resetReadTxn();
      const keys: string[] = [];
      for (const key of openPositionKeys(this.store, { start: afterKey ?? start, end, limit: SETTLE_PAGE_POSITIONS + 1 })) {
        if (key !== afterKey && keys.length < SETTLE_PAGE_POSITIONS) keys.push(key);
      }
      if (keys.length === 0) return settled;
      // A position is keyed once per leg; a page may name it more than once.
      const byShard = new Map<number, Set<string>>();
      for (const key of keys) {
        const requestId = requestIdOfPosition(key);
        const record = readRfq(this.store, requestId);
        if (record === undefined) continue;
        const shard = this.owners.shardOfUser(record.userId);
        let ids = byShard.get(shard);
        if (ids === undefined) byShard.set(shard, (ids = new Set()));
        ids.add(requestId);
      }
      const atMs = this.clock.nowMs();
      const results = await Promise.all(
        [...byShard].map(([shard, ids]) =>
          this.owners.moveMoney<Extract<MoneyResult, { op: 'settle_positions' }>>(shard, {
            op: 'settle_positions',
            requestIds: [...ids],
            atMs,
          }),
        ),
      );
      for (const result of results) settled += result.settled;
      if (keys.length < SETTLE_PAGE_POSITIONS) return settled;
      afterKey = keys.at(-1)!;
      await nextTurn();
    }
  }
}
