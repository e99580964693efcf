// Main thread. Builds the RFQ engine's main-thread half: the shard pool (whose shards run their recovery at
// start), admission, the maker dispatcher and position settlement, and hooks them to the maker gateway and to
// market resolution. The shards own every user balance: contests and credits reach them through the pool.
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import type { VerifyPool } from '../crypto/verify-pool.js';
import type { HttpMetrics } from '../ops/metrics.js';
import type { Store } from '../store/db.js';
import type { Users } from '../users/users.js';
import type { PreferencesStore } from '../preferences/preferences.js';
import type { Markets } from '../markets/markets.js';
import { Admission } from './admission.js';
import { RfqMakerDispatcher } from './maker-dispatch.js';
import { createRfqMetrics, type RfqMetrics } from './metrics.js';
import { prepareOwners, refuseIfOwned } from '../engine/first-start.js';
import { Settlement } from './settlement.js';
import { ShardPool, type MakerFanout, type ShardPoolOptions } from './shard-pool.js';

/** What the engine's main-thread half is built from (the service's parts, boot/app.ts). */
export interface RfqEngineParts {
  config: Config;
  clock: Clock;
  log: Logger;
  store: Store;
  metrics: HttpMetrics;
  verifyPool: VerifyPool;
  users: Users;
  preferences: PreferencesStore;
  markets: Markets;
}

export interface RfqEngine {
  pool: ShardPool;
  admission: Admission;
  dispatcher: RfqMakerDispatcher;
  settlement: Settlement;
  metrics: RfqMetrics;
  close(): Promise<void>;
}

/** The pool alone, started: what owns the balances. Services that move money (contests, credits) take it. */
export function startShardPool(
  s: Pick<RfqEngineParts, 'config' | 'log' | 'metrics' | 'verifyPool' | 'store'>,
  makers: MakerFanout,
  options: ShardPoolOptions = {},
) {
  // The journal engine's owners start from their journals, or on a directory's first start from LMDB.
  const owners = s.config.engine === 'journal' ? prepareOwners(s.store, s.config.dataDir, s.config.shards) : null;
  if (owners === null) refuseIfOwned(s.config.dataDir);
  let pool: ShardPool | null = null;
  const metrics = createRfqMetrics(s.metrics.registry, {
    activeRfqs: () => pool?.activeRfqs ?? 0,
    outstandingCalls: () => pool?.outstandingCalls ?? 0,
    outstandingCallsByShard: () => pool?.outstandingCallsByShard() ?? [],
    unclaimedResults: () => pool?.unclaimedResults ?? 0,
    waiters: () => pool?.waiterCount ?? 0,
    verifyUtilization: () => s.verifyPool.utilization,
    verifyQueue: () => s.verifyPool.queueSize,
  });
  pool = new ShardPool(
    {
      shardCount: s.config.shards,
      dataDir: s.config.dataDir,
      quoteWindowMs: s.config.quoteWindowMs,
      lastLookMs: s.config.lastLookMs,
      maxFinalizingMs: s.config.maxFinalizingMs,
      maxActiveRfqs: s.config.maxActiveRfqsPerShard,
      createCoalesceMs: s.config.createCoalesceMs,
      engine: s.config.engine,
      mapSizeBytes: s.config.lmdbMapSizeMb * 1024 * 1024,
      roomState: s.store.room.shared,
    },
    makers,
    metrics,
    s.log,
    owners === null
      ? options
      : {
          onDurablyReady: () => owners.markStarted(),
          ...options,
          ...(owners.firstRecords === undefined ? {} : { firstRecords: owners.firstRecords }),
        },
  );
  return { pool, metrics };
}

/** Recovery runs before any route can take traffic; then makers' messages go to the shards. */
export async function startRfqEngine(s: RfqEngineParts, makers: MakerFanout, pool: ShardPool, metrics: RfqMetrics): Promise<RfqEngine> {
  const interrupted = await pool.ready();
  if (interrupted > 0) s.log.warn({ interrupted }, 'RFQs active at the last stop ended failed SERVICE_RESTARTED');
  const settlement = new Settlement(s.store, pool, s.clock);
  s.markets.onResolved((market) => settlement.onMarketResolved(market).then(() => undefined));
  await settlement.settleAllDue();
  const admission = new Admission({
    config: s.config,
    clock: s.clock,
    markets: s.markets,
    users: s.users,
    preferences: s.preferences,
    verifyPool: s.verifyPool,
    metrics,
  });
  const dispatcher = new RfqMakerDispatcher(pool, makers, metrics);
  return { pool, admission, dispatcher, settlement, metrics, close: () => pool.close() };
}
