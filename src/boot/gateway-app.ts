// Main thread of a cluster's gateway (docs/scaling.md, "Roles"). A gateway serves what has to be near takers
// and makers and keeps nothing durable: RFQ admission and signature recovery, `wait_ms` waiters, the maker
// socket and its desk, in front of the RFQ shards on the shard nodes. Every other request goes to the
// coordinator as it came (http/server.ts HttpDeps.forward), which answers it from its own LMDB.
//
// What the RFQ path and the sockets read synchronously are the coordinator's, copied (cluster/coordinator-link.ts):
// sessions with their users' facts, the makers' registry, and the markets, which are written to a scratch
// LMDB in a directory of the operating system's temporary files, made at start and removed at stop (so
// PARLAYD_DATA_DIR is not read). Makers' protection limits are the coordinator's, copied; what the desk
// counts of them (fills, a trip), its quote book and stats are this gateway's, for the sockets on it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import type { CoordinatorLink } from '../cluster/coordinator-link.js';
import { openStore } from '../store/db.js';
import { createHttpMetrics } from '../ops/metrics.js';
import { ThreadRoles } from '../ops/thread-cpu.js';
import { VerifyPool } from '../crypto/verify-pool.js';
import { Markets } from '../markets/markets.js';
import { putCopiedMarketsInTxn } from '../markets/market-table.js';
import { createRfqEngine, createShardPool } from '../rfq/engine.js';
import type { ShardPoolOptions } from '../rfq/shard-pool.js';
import { RateLimiter } from '../lib/rate-limit.js';
import { OwnedViews } from '../http/owned-views.js';
import { opsRoutes } from '../http/routes/ops.js';
import { rfqRoutes } from '../http/routes/rfq.js';
import { mmDeskRoutes } from '../http/routes/mm-desk.js';
import { CursorCodec } from '../contract/paging.js';
import type { AnyRoute } from '../http/route.js';
import { MAKER_WS_PATH } from '../contract/maker-protocol.js';
import { createGatewayDashboardFeed, DASHBOARD_WS_PATH } from '../dashboard/dashboard.js';
import type { SamplesOf } from '../dashboard/sample.js';
import { Areas } from './areas.js';
import { buildMakerArea, closeStore, SERVICE_VERSION } from './app.js';
import { openFrontDoor } from './front-door.js';
import { migrateStore } from './migrations.js';
import { randomBytes } from 'node:crypto';

/**
 * Served by the coordinator even though this process has them: the whole OpenAPI document, a paged view (its
 * cursors are under the coordinator's key), and protection limits set (kept by the coordinator, copied to
 * every gateway's desk).
 */
const FORWARDED_ROUTES = new Set([
  'GET /v1/openapi.json',
  'GET /v1/mm/taker_pnl',
  'PUT /v1/mm/protection',
  'PUT /v1/admin/market-makers/{address}/protection',
]);

export interface GatewayServiceOptions extends ShardPoolOptions {
  coordinator: CoordinatorLink;
  /** The cluster's figures, which the dashboard's feed on this gateway shows (cluster/dashboard-samples.ts). */
  dashboardSamples: SamplesOf;
}

export interface RunningGateway {
  port: number;
  metricsPort: number | null;
  recoverBackend: 'native' | 'noble';
  close(): Promise<void>;
}

export async function createGatewayService(
  config: Config,
  log: Logger,
  clock: Clock,
  options: GatewayServiceOptions,
): Promise<RunningGateway> {
  const areas = new Areas(log);
  try {
    const gateway = assemble(areas, config, log, clock, options);
    await areas.start();
    return gateway();
  } catch (err) {
    await areas.stop().catch(() => undefined);
    throw err;
  }
}

function assemble(
  areas: Areas,
  config: Config,
  log: Logger,
  clock: Clock,
  { coordinator, dashboardSamples, ...shardOptions }: GatewayServiceOptions,
) {
  // --- scratch storage: the markets' copies, and what the shared parts open a store for -------------------
  const scratchDir = mkdtempSync(join(tmpdir(), 'parlayd-gateway-'));
  const store = openStore(scratchDir, { mapSizeBytes: config.lmdbMapSizeMb * 1024 * 1024 });
  areas.add({
    name: 'storage',
    start: () => migrateStore(store, log),
    stop: async () => {
      await closeStore(store);
      rmSync(scratchDir, { recursive: true, force: true });
    },
  });

  const metrics = createHttpMetrics();
  const threadRoles = new ThreadRoles(metrics.registry);
  areas.add({ name: 'ops', stop: () => threadRoles.close() });
  const verifyPool = new VerifyPool({ threads: config.verifyThreads, maxQueue: config.verifyMaxQueue });
  const verifyThreadsLoaded = verifyPool.whenLoaded();
  areas.add({ name: 'signatures', stop: () => verifyPool.close() });

  // --- the engine's front: admission on the copies, the pool to the shard nodes ----------------------------
  const markets = new Markets(store, clock, config);
  // The coordinator sends the shard nodes its markets itself: this gateway sends none (allMarkets empty,
  // and nothing written here goes to the pool), so a node never gets a copy older than its own.
  const { pool, metrics: rfqMetrics } = createShardPool(
    { config, log, metrics, verifyPool, store },
    { refreshReads: () => store.root.resetReadTxn(), maxWaiters: config.maxWaiters, allMarkets: () => [], ...shardOptions },
  );
  const { sessions } = coordinator;
  const parts = { config, clock, log, store, metrics, verifyPool };
  const rfqEngine = createRfqEngine(
    {
      ...parts,
      users: { get: (userId) => ({ tier: sessions.tierOf(userId) }) },
      preferences: { get: (userId) => sessions.preferencesOf(userId) },
      markets,
    },
    pool,
    rfqMetrics,
  );
  const rateLimiter = new RateLimiter(config.rateLimit);
  const ownedViews = new OwnedViews(store, (marketId) => markets.get(marketId), pool);
  const maker = buildMakerArea({ ...parts, sessions, makers: coordinator.registry, ownedViews, rateLimiter, pool, rfqMetrics });
  areas.add({
    name: 'coordinator',
    // Before the engine: admission reads the markets' copies from the first request on.
    start: () =>
      coordinator.start({
        onMarkets: (copied) => {
          store.root.transactionSync(() => putCopiedMarketsInTxn(store, copied));
          store.root.resetReadTxn();
        },
        onProtection: ({ side, address, limits }) => maker.protection.copyLimits(side, address, limits),
        onMakerRemoved: (address) => {
          maker.gateway.disconnectAddress(address);
          maker.stats.forget(address);
          maker.protection.reset(address);
        },
      }),
    stop: () => coordinator.stop(),
  });
  areas.add({ name: 'engine', start: () => rfqEngine.start(maker.desk), stop: () => rfqEngine.close() });
  areas.add({ name: 'makers', stop: () => maker.gateway.close() });
  // The page is the coordinator's (forwarded); its socket is served here, with the cluster's figures.
  const feed = createGatewayDashboardFeed(
    { log, metrics, tokens: sessions, makers: coordinator.registry, gateway: maker.gateway },
    rateLimiter,
    dashboardSamples,
  );
  areas.add({ name: 'dashboard', stop: () => feed.close() });

  // --- http: the routes served here; everything else is the coordinator's ----------------------------------
  const routes: readonly AnyRoute[] = [
    ...opsRoutes({ metrics }, () => routes, SERVICE_VERSION),
    ...rfqRoutes({ ownedViews, store }, rfqEngine),
    ...mmDeskRoutes({
      clock,
      makerProtection: maker.protection,
      makerStats: maker.stats,
      makers: coordinator.registry,
      quoteBook: maker.book,
    }),
  ].filter((route) => !FORWARDED_ROUTES.has(`${route.method} ${route.path}`));
  const front = openFrontDoor(areas, {
    config,
    log,
    clock,
    metrics,
    routes,
    tokens: sessions,
    rateLimiter,
    readBarrier: () => pool.readBarrier(),
    // No route served here is paged (FORWARDED_ROUTES): the key only has to exist.
    cursors: new CursorCodec(randomBytes(32)),
    verifyThreadsLoaded,
    extra: { forward: (request) => coordinator.forward(request) },
  });
  front.app.ws(MAKER_WS_PATH, maker.gateway.attach(maker.desk));
  front.app.ws(DASHBOARD_WS_PATH, feed.behavior());
  return (): RunningGateway => ({ ...front.listened(), close: () => areas.stop() });
}
