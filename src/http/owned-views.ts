// Main thread, or a cluster's shard node. The views of what the balances' owners hold in their read model
// (balances, an account's journal, a user's RFQs and positions), each a function of the LMDB environment it
// reads, the markets, and plain arguments, so it runs where the records are: this process's LMDB when the
// shards share it, or the shard node that owns the account (cluster/owned-views-server.ts), whose answer the
// gateway hands on as it came. `OwnedViews` is what the routes read them through.
import type { MarketOf } from '../contract/markets.js';
import type { RfqStatus } from '../contract/rfq.js';
import type { SettledFilter } from '../contract/views.js';
import { accountJournalPage, type JournalCursor } from '../ledger/journal-view.js';
import { readAccount } from '../ledger/ledger.js';
import { makerAccount, PROTOCOL, userAccount, type AccountId } from '../records/ledger.js';
import { userRfqsPage, type UserRfqPosition } from '../rfq/history.js';
import { userPositionsPage, type PositionCursor } from '../rfq/positions-view.js';
import type { ShardPool } from '../rfq/shard-pool.js';
import type { Store } from '../store/db.js';

export const OWNED_VIEWS = {
  userBalance: (store: Store, _marketOf: MarketOf, a: { userId: string }) => {
    const b = readAccount(store, userAccount(a.userId));
    return {
      available_micros: b.available.toString(),
      reserved_micros: b.reserved.toString(),
      at_risk_micros: b.at_risk.toString(),
      pending_withdrawal_micros: b.pending_withdrawal.toString(),
    };
  },
  makerBalance: (store: Store, _marketOf: MarketOf, a: { address: string }) => {
    const b = readAccount(store, makerAccount(a.address));
    return {
      available_micros: b.available.toString(),
      locked_micros: b.locked.toString(),
      pending_withdrawal_micros: b.pending_withdrawal.toString(),
    };
  },
  protocolBalance: (store: Store, _marketOf: MarketOf, _args: Record<string, never>) => {
    const b = readAccount(store, PROTOCOL);
    return { available_micros: b.available.toString(), committed_micros: b.committed.toString() };
  },
  accountJournal: (store: Store, _marketOf: MarketOf, a: { account: AccountId; limit: number; after: JournalCursor | null }) =>
    accountJournalPage(store, a.account, { limit: a.limit, after: a.after }),
  userRfqs: (
    store: Store,
    _marketOf: MarketOf,
    a: { userId: string; status: RfqStatus | undefined; limit: number; after: UserRfqPosition | null },
  ) => userRfqsPage(store, a.userId, { status: a.status, limit: a.limit, after: a.after }),
  userPositions: (
    store: Store,
    marketOf: MarketOf,
    a: { userId: string; status: SettledFilter | undefined; limit: number; after: PositionCursor | null },
  ) => userPositionsPage(store, marketOf, a.userId, { status: a.status, limit: a.limit, after: a.after }),
};

export type OwnedViewName = keyof typeof OWNED_VIEWS;
export type OwnedViewArgs<N extends OwnedViewName> = Parameters<(typeof OWNED_VIEWS)[N]>[2];
export type OwnedViewResult<N extends OwnedViewName> = ReturnType<(typeof OWNED_VIEWS)[N]>;

export function isOwnedViewName(name: unknown): name is OwnedViewName {
  return typeof name === 'string' && Object.hasOwn(OWNED_VIEWS, name);
}

/** Runs view `name` on `store`: what either side of the read does once it is where the records are. */
export function runOwnedView<N extends OwnedViewName>(
  name: N,
  store: Store,
  marketOf: MarketOf,
  args: OwnedViewArgs<N>,
): OwnedViewResult<N> {
  const view = OWNED_VIEWS[name] as (store: Store, marketOf: MarketOf, args: OwnedViewArgs<N>) => OwnedViewResult<N>;
  return view(store, marketOf, args);
}

/** The routes' way to the owned views: here, or at the node that owns `account` when the shards are remote. */
export class OwnedViews {
  constructor(
    private readonly store: Store,
    private readonly marketOf: MarketOf,
    private readonly pool: Pick<ShardPool, 'areShardsRemote' | 'shardOfAccount' | 'readRemoteView'>,
  ) {}

  read<N extends OwnedViewName>(account: AccountId, name: N, args: OwnedViewArgs<N>): OwnedViewResult<N> | Promise<OwnedViewResult<N>> {
    if (!this.pool.areShardsRemote) return runOwnedView(name, this.store, this.marketOf, args);
    return this.pool.readRemoteView(this.pool.shardOfAccount(account), name, args) as Promise<OwnedViewResult<N>>;
  }
}
