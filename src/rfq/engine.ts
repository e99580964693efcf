// Main thread. Builds the RFQ engine's main-thread half: the shard pool (whose shards run their recovery at
// start), admission and position settlement, and hooks settlement to market resolution (the maker
// dispatcher, rfq/maker-dispatch.ts, is built with the desk in app.ts). The shards own every user balance:
// contests and credits reach them through the pool.
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import type { VerifyPool } from '../crypto/verify-pool.js';
import type { HttpMetrics } from '../ops/metrics.js';
import type { Store } from '../store/db.js';
import type { Markets } from '../markets/markets.js';
import { Admission, type AdmissionDeps } from './admission.js';
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
  users: AdmissionDeps['users'];
  preferences: AdmissionDeps['preferences'];
  markets: Pick<Markets, 'get' | 'onResolved'>;
}

export interface RfqEngine {
  pool: ShardPool;
  admission: Admission;
  settlement: Settlement;
  metrics: RfqMetrics;
  /** Spawns the shards (frames for makers go to `makers`) and waits for their recovery; once. */
  start(makers: MakerFanout): Promise<void>;
  close(): Promise<void>;
}

/**
 * The pool alone, not started (ShardPool.start spawns the shards): what owns the balances. Services that
 * move money (contests, credits) take it.
 */
export function createShardPool(
  s: Pick<RfqEngineParts, 'config' | 'log' | 'metrics' | 'verifyPool' | 'store'>,
  options: ShardPoolOptions = {},
) {
  // The journal engine's owners start from their journals, or on a directory's first start from LMDB. A
  // cluster's gateway has neither: its shards are the shard nodes', each with its own directory.
  const isLocal = options.areShardsRemote !== true;
  const owners = isLocal && s.config.engine === 'journal' ? prepareOwners(s.store, s.config.dataDir, s.config.shards) : null;
  if (isLocal && owners === null) refuseIfOwned(s.config.dataDir);
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

/**
 * The engine's main-thread half around its pool, not yet started: start() spawns the shards, each running its
 * recovery first, and settles the positions of markets that resolved meanwhile.
 */
export function createRfqEngine(s: RfqEngineParts, pool: ShardPool, metrics: RfqMetrics): RfqEngine {
  const settlement = new Settlement(s.store, pool, s.clock);
  const admission = new Admission({
    config: s.config,
    clock: s.clock,
    markets: s.markets,
    users: s.users,
    preferences: s.preferences,
    verifyPool: s.verifyPool,
    metrics,
  });
  return {
    pool,
    admission,
    settlement,
    metrics,
    start: async (makers) => {
      const interrupted = await pool.start(makers);
      if (interrupted > 0) s.log.warn({ interrupted }, 'RFQs active at the last stop ended failed SERVICE_RESTARTED');
      // Remote shards (a cluster's nodes) settle their positions themselves: none is in this process's LMDB.
      if (pool.areShardsRemote) return;
      s.markets.onResolved((market) => settlement.onMarketResolved(market).then(() => undefined));
      await settlement.settleAllDue();
    },
    close: () => pool.close(),
  };
}
