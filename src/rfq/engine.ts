// Main thread. Builds the RFQ engine's main-thread half: crash recovery, the shard pool, admission, the maker
// dispatcher and settlement, and hooks them to the maker gateway and to market resolution.
import type { Services } from '../services.js';
import { Admission } from './admission.js';
import { RfqMakerDispatcher } from './maker-dispatch.js';
import { createRfqMetrics, type RfqMetrics } from './metrics.js';
import { failInterruptedRfqs } from './recovery.js';
import type { RfqKeyRecord } from './records.js';
import { Settlement } from './settlement.js';
import { ShardPool, type MakerFanout } from './shard-pool.js';

export interface RfqEngine {
  pool: ShardPool;
  admission: Admission;
  dispatcher: RfqMakerDispatcher;
  settlement: Settlement;
  metrics: RfqMetrics;
  close(): Promise<void>;
}

export async function startRfqEngine(s: Services, makers: MakerFanout): Promise<RfqEngine> {
  const interrupted = await failInterruptedRfqs(s.store, s.clock);
  if (interrupted > 0) s.log.warn({ interrupted }, 'RFQs active at the last stop ended failed SERVICE_RESTARTED');
  let pool: ShardPool | null = null;
  const metrics = createRfqMetrics(s.metrics.registry, {
    activeRfqs: () => pool?.activeRfqs ?? 0,
    outstandingCalls: () => pool?.outstandingCalls ?? 0,
    unclaimedResults: () => pool?.unclaimedResults ?? 0,
    verifyUtilization: () => s.verifyPool.utilization,
    verifyQueue: () => s.verifyPool.queueSize,
  });
  pool = new ShardPool(
    {
      shardCount: s.config.shards,
      dataDir: s.config.dataDir,
      quoteWindowMs: s.config.quoteWindowMs,
      lastLookMs: s.config.lastLookMs,
      maxActiveRfqs: s.config.maxActiveRfqsPerShard,
      createCoalesceMs: s.config.createCoalesceMs,
    },
    makers,
    {
      availableMicros: (userId) => s.ledger.getBalance(userId).availableMicros,
      isKnownReplayKey: (replayKey) => s.store.db<RfqKeyRecord>('rfqKeys').get(replayKey) !== undefined,
      refresh: () => s.store.root.resetReadTxn(),
    },
    metrics,
    s.log,
  );
  const settlement = new Settlement(s.store, s.markets, s.clock);
  s.markets.onResolved((market) => settlement.onMarketResolved(market));
  await settlement.settleAllDue();
  const admission = new Admission({
    config: s.config,
    clock: s.clock,
    store: s.store,
    markets: s.markets,
    users: s.users,
    preferences: s.preferences,
    verifyPool: s.verifyPool,
    metrics,
    isReplayKeyInFlight: (replayKey) => pool.isReplayKeyInFlight(replayKey),
  });
  const dispatcher = new RfqMakerDispatcher(pool, makers);
  const running = pool;
  return { pool: running, admission, dispatcher, settlement, metrics, close: () => running.close() };
}
