// Main thread, or a cluster's shard node. The views of what the balances' owners hold in their read model
// (balances, an account's journal, a user's RFQs and positions), each a function of the LMDB environment it
// reads, the markets, and plain arguments, so it runs where the records are: this process's LMDB when the
// shards share it, or the shard node that owns the account (cluster/owned-views-server.ts), whose answer the
// gateway hands on as it came. `OwnedViews` is what the routes read them through.
import type { MarketOf } from '../contract/markets.js';
import type { RfqStatus } from '../contract/rfq.js';
import type { SettledFilter } from '../contract/views.js';
import { accountJournalPage, type JournalCursor } from '../ledger/journal-view.js';
import { readAccount, readUserBalance } from '../ledger/ledger.js';
import { makerAccount, PROTOCOL, type AccountId } from '../records/ledger.js';
import { userRfqsPage, type UserRfqPosition } from '../rfq/history.js';
import { userPositionsPage, type PositionCursor } from '../rfq/positions-view.js';
import { fillOrder, makerFillsPage } from '../rfq/maker-fills-view.js';
import { takerPnlPage } from '../rfq/taker-pnl.js';
import type { ShardPool } from '../rfq/shard-pool.js';
import type { Store } from '../store/db.js';
import type { WithdrawalRecord, WithdrawalStatus } from '../records/withdrawals.js';
import {
  accountWithdrawalsPage,
  localWithdrawalReads,
  ownerOfWithdrawalId,
  readWithdrawal,
  readWithdrawalKey,
  statusWithdrawalKey,
  withdrawalsOfStatusPage,
  type WithdrawalPage,
  type WithdrawalReads,
} from '../ledger/withdrawal-records.js';

export const OWNED_VIEWS = {
  userBalance: (store: Store, _marketOf: MarketOf, a: { userId: string }) => {
    const b = readUserBalance(store, a.userId);
    return {
      available_micros: b.availableMicros.toString(),
      reserved_micros: b.reservedMicros.toString(),
      at_risk_micros: b.atRiskMicros.toString(),
      pending_withdrawal_micros: b.pendingWithdrawalMicros.toString(),
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
  // A maker's fills and its takers' P&L are written by each taker's owner: in a cluster, on every node.
  makerFills: (
    store: Store,
    marketOf: MarketOf,
    a: { address: string; status: SettledFilter | undefined; limit: number; afterRequestId: string | null },
  ) => {
    const page = makerFillsPage(store, marketOf, a.address, { status: a.status, limit: a.limit, afterRequestId: a.afterRequestId });
    return { items: page.fills, next: page.next };
  },
  takerPnl: (store: Store, _marketOf: MarketOf, a: { address: string; sinceMs: number; limit: number; afterTaker: string | null }) => {
    const page = takerPnlPage(store, a.address, { sinceMs: a.sinceMs, limit: a.limit, afterTaker: a.afterTaker });
    return { items: page.takers, next: page.nextTaker };
  },
  // Withdrawals are written with their money by the account's owner; the operator's queue spans them all.
  withdrawal: (store: Store, _marketOf: MarketOf, a: { withdrawalId: string }) => readWithdrawal(store, a.withdrawalId),
  withdrawalKey: (store: Store, _marketOf: MarketOf, a: { account: AccountId; idempotencyKey: string }) =>
    readWithdrawalKey(store, a.account, a.idempotencyKey),
  accountWithdrawals: (store: Store, _marketOf: MarketOf, a: { account: AccountId; limit: number; before: string | null }) =>
    accountWithdrawalsPage(store, a.account, a.limit, a.before),
  withdrawalsOfStatus: (store: Store, _marketOf: MarketOf, a: { status: WithdrawalStatus; limit: number; after: string | null }) =>
    withdrawalsOfStatusPage(store, a.status, a.limit, a.after),
};

/** A page of a list whose items each node holds a part of: its items in list order, and where it stopped. */
export interface PartPage<T> {
  items: T[];
  /** The cursor the part stopped at (its last item listed or scanned), or null when it has no more. */
  next: string | null;
}

/**
 * One page of a list merged from the pages of its parts, each read after the same cursor (`before(a, b)`: a
 * comes first in list order, by cursor). A part that stopped early (a full page, or its scan bound) has
 * listed everything up to where it stopped, and nothing after: so the merge lists items only up to the part
 * that stopped first, and goes on from there. `cursorOf` is an item's cursor.
 */
export function mergePartPages<T>(
  parts: readonly PartPage<T>[],
  limit: number,
  cursorOf: (item: T) => string,
  before: (a: string, b: string) => boolean,
): PartPage<T> {
  let frontier: string | null = null;
  for (const part of parts) if (part.next !== null && (frontier === null || before(part.next, frontier))) frontier = part.next;
  const covered = parts
    .flatMap((part) => part.items)
    .filter((item) => frontier === null || !before(frontier, cursorOf(item)))
    .sort((a, b) => (before(cursorOf(a), cursorOf(b)) ? -1 : before(cursorOf(b), cursorOf(a)) ? 1 : 0));
  if (covered.length > limit) return { items: covered.slice(0, limit), next: cursorOf(covered[limit - 1]!) };
  return { items: covered, next: frontier };
}

/** How the parts of a list that spans owners merge: its cursor per item and its order. */
const MERGES = {
  makerFills: {
    cursorOf: (fill: { request_id: string }) => fill.request_id,
    // Newest first: a higher merge order first (maker-fills-view.ts).
    before: (a: string, b: string) => fillOrder(a) > fillOrder(b),
  },
  takerPnl: { cursorOf: (row: { taker: string }) => row.taker, before: (a: string, b: string) => a < b },
  // Oldest first, by the queue's own key.
  withdrawalsOfStatus: {
    cursorOf: (record: WithdrawalRecord) => statusWithdrawalKey(record.status, record),
    before: (a: string, b: string) => a < b,
  },
} as const;
type MergedViewName = keyof typeof MERGES;

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
    private readonly pool: Pick<ShardPool, 'areShardsRemote' | 'shardOfAccount' | 'readRemoteView' | 'shardNumbers'>,
  ) {}

  /** A list every owner holds a part of: here at once (one LMDB holds every part), or each node's merged. */
  async readEvery<N extends MergedViewName>(name: N, args: OwnedViewArgs<N> & { limit: number }): Promise<OwnedViewResult<N>> {
    if (!this.pool.areShardsRemote) return runOwnedView(name, this.store, this.marketOf, args);
    const parts = (await Promise.all(this.pool.shardNumbers().map((shard) => this.pool.readRemoteView(shard, name, args)))) as Array<
      OwnedViewResult<N>
    >;
    const { cursorOf, before } = MERGES[name] as { cursorOf: (item: unknown) => string; before: (a: string, b: string) => boolean };
    return mergePartPages(parts as PartPage<unknown>[], args.limit, cursorOf, before) as OwnedViewResult<N>;
  }

  read<N extends OwnedViewName>(account: AccountId, name: N, args: OwnedViewArgs<N>): OwnedViewResult<N> | Promise<OwnedViewResult<N>> {
    if (!this.pool.areShardsRemote) return runOwnedView(name, this.store, this.marketOf, args);
    return this.pool.readRemoteView(this.pool.shardOfAccount(account), name, args) as Promise<OwnedViewResult<N>>;
  }

  /** A view of what owner `shard` holds; in a cluster, null for a number that names no owner of the map. */
  readAt<N extends OwnedViewName>(shard: number, name: N, args: OwnedViewArgs<N>): OwnedViewResult<N> | null | Promise<OwnedViewResult<N>> {
    if (!this.pool.areShardsRemote) return runOwnedView(name, this.store, this.marketOf, args);
    if (!this.pool.shardNumbers().includes(shard)) return null;
    return this.pool.readRemoteView(shard, name, args) as Promise<OwnedViewResult<N>>;
  }

  /** Withdrawals' reads: of this process's LMDB, or of the node that owns the account (the id names it). */
  withdrawalReads(): WithdrawalReads {
    if (!this.pool.areShardsRemote) return localWithdrawalReads(this.store);
    return {
      withdrawal: async (withdrawalId) => {
        const owner = ownerOfWithdrawalId(withdrawalId);
        return owner === null ? null : ((await this.readAt(owner, 'withdrawal', { withdrawalId })) ?? null);
      },
      key: async (account, idempotencyKey) => this.read(account, 'withdrawalKey', { account, idempotencyKey }),
      ofAccount: async (account, limit, before) => this.read(account, 'accountWithdrawals', { account, limit, before }),
      ofStatus: (status, limit, after): Promise<WithdrawalPage> => this.readEvery('withdrawalsOfStatus', { status, limit, after }),
    };
  }
}
