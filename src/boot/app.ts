// Main thread. Builds every part of the service from a Config, wires them, and listens. main.ts only adds
// process concerns (signals, printing); tests and benchmarks use the same createService.
import { moneyRoutes } from '../http/routes/money.js';
import { viewRoutes } from '../http/routes/views.js';
import type { Logger } from 'pino';
import { systemClock, withTimers, type Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import { openStore } from '../store/db.js';
import { createHttpMetrics } from '../ops/metrics.js';
import { ThreadRoles } from '../ops/thread-cpu.js';
import { RateLimiter } from '../lib/rate-limit.js';
import { Sessions } from '../auth/sessions.js';
import { WalletLogin } from '../auth/wallet-login.js';
import { JwtLogin } from '../auth/jwt-login.js';
import { Users } from '../users/users.js';
import { Credits } from '../ledger/credits.js';
import { Ledger, NO_USERS, readAccount } from '../ledger/ledger.js';
import { Withdrawals } from '../ledger/withdrawals.js';
import { LedgerCheckRunner } from '../ledger/check-runner.js';
import type { LedgerCheck } from '../ledger/check.js';
import { PreferencesStore } from '../preferences/preferences.js';
import { Markets } from '../markets/markets.js';
import { allStoredMarkets } from '../markets/market-table.js';
import { OwnedViews } from '../http/owned-views.js';
import { Contests } from '../contests/contests.js';
import { VerifyPool } from '../crypto/verify-pool.js';
import type { Services } from '../http/services.js';
import { authRoutes } from '../http/routes/auth.js';
import { userRoutes } from '../http/routes/user.js';
import { marketRoutes } from '../http/routes/markets.js';
import { adminRoutes } from '../http/routes/admin.js';
import { opsRoutes } from '../http/routes/ops.js';
import { contestRoutes } from '../http/routes/contests.js';
import { rfqRoutes } from '../http/routes/rfq.js';
import { createRfqEngine, createShardPool } from '../rfq/engine.js';
import { RfqMakerDispatcher } from '../rfq/maker-dispatch.js';
import type { ShardPool, ShardPoolOptions } from '../rfq/shard-pool.js';
import type { RfqMetrics } from '../rfq/metrics.js';
import type { Store } from '../store/db.js';
import { Areas } from './areas.js';
import { migrateStore } from './migrations.js';
import { mmRoutes } from '../http/routes/mm.js';
import { MakerRegistry } from '../mm/registry.js';
import { MakerDesk } from '../mm/desk.js';
import { mmDeskRoutes } from '../http/routes/mm-desk.js';
import { QuoteBook } from '../mm/quote-book.js';
import { Protection } from '../mm/protection.js';
import { makerAccount } from '../records/ledger.js';
import { MakerStats } from '../mm/stats.js';
import { MakerGateway, type MakerGatewayDeps } from '../mm/gateway.js';
import { MAKER_WS_PATH } from '../contract/maker-protocol.js';
import { buildDueIndexIfMissing } from '../markets/due-index.js';
import { createOracle } from '../oracle/oracle.js';
import { oracleRoutes } from '../http/routes/oracle.js';
import { createDashboard, DASHBOARD_WS_PATH } from '../dashboard/dashboard.js';
import type { SamplesOf } from '../dashboard/sample.js';
import { loadOrCreateDataKey } from '../store/data-key.js';
import { CursorCodec } from '../contract/paging.js';
import { crashLater } from '../lib/fatal.js';
import { openFrontDoor } from './front-door.js';

export const SERVICE_VERSION = '0.1.0';
/** The `meta` name of the data directory's cursor key (contract/paging.ts). */
const CURSOR_KEY_NAME = 'cursor-key:v1';

export interface RunningService {
  port: number;
  /** Port of the token-free /metrics listener (PARLAYD_METRICS_PORT), or null. */
  metricsPort: number | null;
  /** The signature-recovery backend the verify threads loaded: the native addon, or noble when it did not load. */
  recoverBackend: 'native' | 'noble';
  services: Services;
  /** Graceful stop: no new connections, in-flight writes finish, threads stop, LMDB closes. */
  close(): Promise<void>;
}

/** What a cluster's gateway gives the service (cluster/gateway.ts); a single process gives nothing. */
export interface ServiceOptions extends ShardPoolOptions {
  /** The ledger check of every owner node (cluster/ledger-check.ts), instead of this process's LMDB. */
  checkLedger?: () => Promise<LedgerCheck>;
  /** A cluster's coordinator: the key its door's forwarded requests carry (http/server.ts HttpDeps.forwardedKey). */
  forwardedKey?: string;
  /** Where the dashboard reads its figures (a cluster: every front process's); this process's registry by default. */
  dashboardSamples?: SamplesOf;
}

export async function createService(
  config: Config,
  log: Logger,
  clock: Clock = systemClock,
  options: ServiceOptions = {},
): Promise<RunningService> {
  const areas = new Areas(log);
  try {
    const service = await assemble(areas, config, log, clock, options);
    await areas.start();
    return service();
  } catch (err) {
    await areas.stop().catch(() => undefined); // each failed stop is logged; the start's failure is the one to report
    throw err;
  }
}

/**
 * Builds every area, in the order they depend on each other at run time: an area after every area it calls,
 * whether it imports it or fires a listener of it. That is the folders' layer order (docs/architecture.md)
 * but for two areas. The shards' area comes before the desk's, which hands makers' messages to the shards,
 * and takes the desk only at its start, when the desk exists: the one cycle of the service (shards -> desk ->
 * shards) closes there. Market resolution (the oracle) comes after the engine and contests, whose settlements
 * its resolutions run as listeners. Returns what the service is once every area has started.
 */
async function assemble(
  areas: Areas,
  config: Config,
  log: Logger,
  clock: Clock,
  { checkLedger, forwardedKey, dashboardSamples, ...shardOptions }: ServiceOptions,
): Promise<() => RunningService> {
  // --- storage: the LMDB environment, closed last -----------------------------------------------------------
  const store = openStore(config.dataDir, { mapSizeBytes: config.lmdbMapSizeMb * 1024 * 1024 });
  areas.add({ name: 'storage', stop: () => closeStore(store) });
  // Before any thread reads a record: a data directory of an earlier version is brought up to this one.
  await migrateStore(store, log);

  // --- ops: metrics, and the threads' roles for their CPU gauges -------------------------------------------
  const metrics = createHttpMetrics();
  // Before any worker thread starts: each announces its role once, at its start (ops/thread-cpu.ts).
  const threadRoles = new ThreadRoles(metrics.registry);
  // Routes given as a function (here and below) are built when the http area asks (areas.routes()), once the
  // services bag exists. The OpenAPI document reads every area's routes, at its first request.
  areas.add({
    name: 'ops',
    routes: () => [...opsRoutes(services, () => routes, SERVICE_VERSION), ...adminRoutes(services)],
    stop: () => threadRoles.close(),
  });

  // --- signatures: the recovery threads --------------------------------------------------------------------
  const verifyPool = new VerifyPool({ threads: config.verifyThreads, maxQueue: config.verifyMaxQueue });
  // Loads in its threads while the rest is built; awaited before listening (verify-pool.ts, whenLoaded).
  const verifyThreadsLoaded = verifyPool.whenLoaded();
  areas.add({ name: 'signatures', stop: () => verifyPool.close() });

  // --- accounts: users, sessions, logins, registered makers ------------------------------------------------
  const users = new Users(store, clock);
  const sweepOptions = {
    onFailure: (err: unknown, db: string) => log.error({ err, db }, 'expiry sweep batch failed; tried again next pass'),
  };
  const sessions = new Sessions(store, clock, config.adminToken, sweepOptions);
  const walletLogin = new WalletLogin(store, clock, config, verifyPool, sweepOptions);
  const makers = new MakerRegistry(store, clock);
  areas.add({
    name: 'accounts',
    routes: () => [...authRoutes(services), ...userRoutes(services)],
    // Their timers would otherwise start a sweep batch on a closing store.
    stop: () => {
      sessions.stopSweeping();
      walletLogin.stopSweeping();
    },
  });

  // --- markets -----------------------------------------------------------------------------------------------
  const markets = new Markets(store, clock, config);
  // Once, on a data directory written before the due index existed (every later start: one meta read).
  const dueIndexed = await buildDueIndexIfMissing(store);
  if (dueIndexed > 0) log.info({ markets: dueIndexed }, 'due index built for the open markets of an older data directory');
  const preferences = new PreferencesStore(store);
  areas.add({ name: 'markets', routes: marketRoutes({ markets }) });

  // --- the engine: the shards, owners of every balance, and the RFQ path's main-thread half -----------------
  const { pool, metrics: rfqMetrics } = createShardPool(
    { config, log, metrics, verifyPool, store },
    {
      refreshReads: () => store.root.resetReadTxn(),
      maxWaiters: config.maxWaiters,
      allMarkets: () => allStoredMarkets(store),
      ...shardOptions,
    },
  );
  // Shards that keep their own copy of the markets (a cluster's nodes) are sent each one as it is written.
  markets.onWritten((market) => pool.publishMarket(market));
  const rfqEngine = createRfqEngine({ config, clock, log, store, metrics, verifyPool, users, preferences, markets }, pool, rfqMetrics);
  // The main thread's ledger: makers' and the protocol's money, decided inside its transactions (ledger.ts).
  const ledger = new Ledger(store, NO_USERS);
  const ledgerCheck = new LedgerCheckRunner(
    config.dataDir,
    config.lmdbMapSizeMb * 1024 * 1024,
    clock,
    store,
    () => makers.list().map((m) => m.address),
    metrics.registry,
    pool.shardCount > 1 && pool.engine === 'journal' ? () => pool.settledBarrier() : null,
    checkLedger ?? null,
  );
  areas.add({
    name: 'engine',
    // Money and the views read the balances the shards own.
    routes: () => [...rfqRoutes(services, rfqEngine), ...moneyRoutes(services), ...viewRoutes(services)],
    // Each shard runs its recovery first: no route takes traffic before it ends (http starts later).
    start: () => rfqEngine.start(maker.desk),
    stop: () => rfqEngine.close(),
  });

  // --- contests, and the resolution of markets that settles them and the RFQs' positions ---------------------
  // Their resolution listeners run in the order they were registered: the oracle's (cheap, it forgets the
  // window), the contests', then the RFQ positions' settlement (registered at the engine's start).
  const oracle = createOracle({ store, markets, verifyPool, clock, log, config });
  const contests = new Contests(store, clock, pool, markets, log, ledger);
  areas.add({
    name: 'resolution',
    routes: () => [...contestRoutes(services), ...oracleRoutes(services, rateLimiter)],
    start: () => {
      // Contests whose markets all became final while the process was down, and settlements a crash cut
      // short. recover() queues every finish on its contest's lane before its first await, so every later
      // task of such a contest (no request comes before http starts) runs after its finish. Not awaited: a
      // settlement of 1,000,000 entries takes ~21 s and the service serves meanwhile; a stop interrupts it at
      // a page or batch boundary (contests.stop()).
      contests.recover().catch((err: unknown) => {
        // Only its reads of the open contests can fail this way (a finish's failure is logged inside): without
        // its index of open contests by market, market resolutions would miss them, so the process stops.
        log.fatal({ err }, 'contest recovery failed');
        crashLater(err);
      });
      // After recover() has indexed the open contests (synchronously, above), so a window resolved now finds
      // its contests: windows whose prices became final before a crash resolve now, and the sweep starts.
      oracle.start();
    },
    stop: async () => {
      // No resolution or void starts after this; those running finish once their listeners do, and a contest
      // settlement among them stops at its next batch with contests.stop() below, so neither waits for a long
      // settlement. Windows left unresolved are queued again by the next start.
      const oracleStopped = oracle.stop();
      markets.stopRetries();
      await contests.stop();
      await oracleStopped;
    },
  });

  // --- makers: the socket gateway and the desk in front of the shards ---------------------------------------
  // One per-IP bucket for HTTP and maker socket upgrades alike (an upgrade is an anonymous request).
  const rateLimiter = new RateLimiter(config.rateLimit);
  const ownedViews = new OwnedViews(store, (marketId) => markets.get(marketId), pool);
  const maker = buildMakerArea({
    config,
    clock,
    log,
    store,
    metrics,
    verifyPool,
    sessions,
    makers,
    ownedViews,
    rateLimiter,
    pool,
    rfqMetrics,
  });
  areas.add({
    name: 'makers',
    routes: () => [...mmRoutes(services, SERVICE_VERSION), ...mmDeskRoutes(services)],
    stop: () => maker.gateway.close(),
  });

  const services: Services = {
    config,
    clock,
    log,
    store,
    metrics,
    sessions,
    walletLogin,
    jwtLogin: new JwtLogin(config.jwt, clock, log),
    users,
    credits: new Credits(store, clock, users, pool, makers, ledger),
    withdrawals: new Withdrawals(store, clock, pool, ledger, ownedViews.withdrawalReads()),
    ledger,
    ledgerCheck,
    balanceOwners: pool,
    ownedViews,
    preferences,
    markets,
    contests,
    verifyPool,
    makers,
    makerGateway: maker.gateway,
    makerDesk: maker.desk,
    quoteBook: maker.book,
    makerProtection: maker.protection,
    makerStats: maker.stats,
    oracle,
  };

  // --- dashboard -------------------------------------------------------------------------------------------
  const dashboard = createDashboard(services, rateLimiter, dashboardSamples);
  areas.add({ name: 'dashboard', routes: dashboard.routes, stop: () => dashboard.feed.close() });

  // --- http: the routes of every area, the sockets' paths, and the listening socket -------------------------
  // The router matches whatever the order (static segments before parameters, a duplicate refused); the
  // order is the OpenAPI document's order of paths.
  const routes = areas.routes();
  const front = openFrontDoor(areas, {
    config,
    log,
    clock,
    metrics,
    routes,
    tokens: sessions,
    rateLimiter,
    readBarrier: () => pool.readBarrier(),
    // Cursors are authenticated under the data directory's key, so they survive a restart.
    cursors: new CursorCodec(loadOrCreateDataKey(store, CURSOR_KEY_NAME)),
    verifyThreadsLoaded,
    ...(forwardedKey === undefined ? {} : { extra: { forwardedKey } }),
  });
  // uWS matches these static paths before the HTTP catch-all; a plain GET on one still falls through to 404.
  front.app.ws(MAKER_WS_PATH, maker.gateway.attach(maker.desk));
  front.app.ws(DASHBOARD_WS_PATH, dashboard.feed.behavior());

  return () => ({ ...front.listened(), services, close: () => areas.stop() });
}

/**
 * The maker side of the main thread: the gateway (sockets), and the desk between it and the shards. Also a
 * cluster gateway's (gateway-app.ts), with its copies of the coordinator's sessions and registry.
 */
export function buildMakerArea(
  s: Pick<Services, 'config' | 'clock' | 'log' | 'store' | 'metrics' | 'verifyPool' | 'ownedViews'> & {
    sessions: MakerGatewayDeps['sessions'];
    makers: MakerGatewayDeps['registry'];
    rateLimiter: RateLimiter;
    pool: ShardPool;
    rfqMetrics: RfqMetrics;
  },
) {
  const { config, store, pool } = s;
  const stats = new MakerStats();
  const gateway = new MakerGateway({
    config,
    // Its deadlines (auth, session, heartbeat) are timers on the service's clock, or real ones when that
    // clock only tells the time.
    clock: withTimers(s.clock),
    log: s.log,
    registry: s.makers,
    sessions: s.sessions,
    verifyPool: s.verifyPool,
    metrics: s.metrics.registry,
    rateLimiter: s.rateLimiter,
    stats,
    // Remote shards' doors await the audiences only of processes with makers: told before a maker is in.
    ...(pool.areShardsRemote ? { beforeAuthenticated: () => pool.announceMakers() } : {}),
  });
  // A fill's result reaches the desk after the fill committed and this thread's reads were renewed
  // (shard-pool.ts), so the maker's locked bucket it reads for max_locked_micros includes that fill.
  const lockedOf = (address: string) => readAccount(store, makerAccount(address)).locked;
  const protection = new Protection(
    store,
    lockedOf,
    // The journal engine's ledger is written behind: the fill the desk just heard of shows after a barrier.
    // In a cluster the maker's account is its shard node's: read there, after that node's barrier.
    pool.areShardsRemote
      ? async (address) => BigInt((await s.ownedViews.read(makerAccount(address), 'makerBalance', { address })).locked_micros)
      : config.engine === 'journal'
        ? async (address) => {
            await pool.readBarrier();
            return lockedOf(address);
          }
        : null,
  );
  const book = new QuoteBook();
  const desk = new MakerDesk({
    rfq: new RfqMakerDispatcher(pool, gateway, s.rfqMetrics),
    gateway,
    book,
    stats,
    protection,
    clock: s.clock,
    log: s.log,
  });
  return { gateway, desk, book, protection, stats };
}

/** After the last writes of every area above it: their commits are durable, then the environment closes. */
export async function closeStore(store: Store): Promise<void> {
  try {
    await store.root.flushed;
  } catch (err) {
    // lmdb-js answers `flushed` with its last commit's promise: after a commit that failed for want of
    // space (answered to its callers, nothing of it kept) and no main-thread commit since, that rejects.
    if ((err as { commitError?: unknown } | null)?.commitError === undefined) throw err;
  }
  await store.close();
}
