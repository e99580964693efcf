// Main thread. Builds every part of the service from a Config, wires them, and listens. main.ts only adds
// process concerns (signals, printing); tests and benchmarks use the same createService.
import { moneyRoutes } from '../http/routes/money.js';
import { viewRoutes } from '../http/routes/views.js';
import uWS, { type us_listen_socket } from 'uWebSockets.js';
import type { Logger } from 'pino';
import { systemClock, withTimers, type Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import { openStore } from '../store/db.js';
import { createHttpMetrics } from '../ops/metrics.js';
import { ThreadRoles } from '../ops/thread-cpu.js';
import { withReadBarriers } from '../http/read-barriers.js';
import { createHttpApp } from '../http/server.js';
import { RateLimiter } from '../lib/rate-limit.js';
import { LoadShedder } from '../http/load-shedder.js';
import { Gauge } from 'prom-client';
import type { AnyRoute } from '../http/route.js';
import { Sessions } from '../auth/sessions.js';
import { WalletLogin } from '../auth/wallet-login.js';
import { JwtLogin } from '../auth/jwt-login.js';
import { Users } from '../users/users.js';
import { Credits } from '../ledger/credits.js';
import { Ledger, NO_USERS, readAccount } from '../ledger/ledger.js';
import { Withdrawals } from '../ledger/withdrawals.js';
import { LedgerCheckRunner } from '../ledger/check-runner.js';
import { PreferencesStore } from '../preferences/preferences.js';
import { Markets } from '../markets/markets.js';
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
import { startRfqEngine, startShardPool } from '../rfq/engine.js';
import type { ShardPoolOptions } from '../rfq/shard-pool.js';
import { migrateStore } from './migrations.js';
import { mmRoutes } from '../http/routes/mm.js';
import { MakerRegistry } from '../mm/registry.js';
import { MakerDesk } from '../mm/desk.js';
import { mmDeskRoutes } from '../http/routes/mm-desk.js';
import { QuoteBook } from '../mm/quote-book.js';
import { Protection } from '../mm/protection.js';
import { makerAccount } from '../records/ledger.js';
import { MakerStats } from '../mm/stats.js';
import { MakerGateway } from '../mm/gateway.js';
import { MAKER_WS_PATH } from '../contract/maker-protocol.js';
import { buildDueIndexIfMissing } from '../markets/due-index.js';
import { createOracle } from '../oracle/oracle.js';
import { oracleRoutes } from '../http/routes/oracle.js';
import { listenForMetrics } from '../ops/metrics-listener.js';
import { createDashboard, DASHBOARD_WS_PATH } from '../dashboard/dashboard.js';
import { loadOrCreateDataKey } from '../store/data-key.js';
import { CursorCodec } from '../contract/paging.js';
import { crashLater } from '../lib/fatal.js';

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

export async function createService(
  config: Config,
  log: Logger,
  clock: Clock = systemClock,
  shardOptions: ShardPoolOptions = {},
): Promise<RunningService> {
  const store = openStore(config.dataDir, { mapSizeBytes: config.lmdbMapSizeMb * 1024 * 1024 });
  // Before any thread reads a record: a data directory of an earlier version is brought up to this one.
  await migrateStore(store, log);
  const metrics = createHttpMetrics();
  // Before any worker thread starts: each announces its role once, at its start (ops/thread-cpu.ts).
  const threadRoles = new ThreadRoles(metrics.registry);
  const verifyPool = new VerifyPool({ threads: config.verifyThreads, maxQueue: config.verifyMaxQueue });
  // Loads in its threads while the rest starts; awaited before listening (verify-pool.ts, whenLoaded).
  const verifyThreadsLoaded = verifyPool.whenLoaded();
  const users = new Users(store, clock);
  const sweepOptions = {
    onFailure: (err: unknown, db: string) => log.error({ err, db }, 'expiry sweep batch failed; tried again next pass'),
  };
  const sessions = new Sessions(store, clock, config.adminToken, sweepOptions);
  const walletLogin = new WalletLogin(store, clock, config, verifyPool, sweepOptions);
  const makers = new MakerRegistry(store, clock);
  // One per-IP bucket for HTTP and maker socket upgrades alike (an upgrade is an anonymous request).
  const rateLimiter = new RateLimiter(config.rateLimit);
  const makerStats = new MakerStats();
  const makerGateway = new MakerGateway({
    config,
    // Its deadlines (auth, session, heartbeat) are timers on the service's clock, or real ones when that
    // clock only tells the time.
    clock: withTimers(clock),
    log,
    registry: makers,
    sessions,
    verifyPool,
    metrics: metrics.registry,
    rateLimiter,
    stats: makerStats,
  });
  // The desk stands between the gateway and the RFQ engine both ways (mm/desk.ts). A fill's
  // result reaches it after the fill committed and this thread's reads were renewed (shard-pool.ts), so the
  // maker's locked bucket it reads for max_locked_micros includes that fill.
  const makerProtection = new Protection(
    store,
    (address) => readAccount(store, makerAccount(address)).locked,
    // The journal engine's ledger is written behind: the fill the desk just heard of shows after a barrier.
    config.engine === 'journal' ? () => pool.readBarrier() : null,
  );
  const quoteBook = new QuoteBook();
  const makerDesk = new MakerDesk({ gateway: makerGateway, book: quoteBook, stats: makerStats, protection: makerProtection, clock, log });
  const markets = new Markets(store, clock, config);
  // The shards own every balance, so they start before anything that moves money; each runs its recovery
  // first (startRfqEngine waits for it before any route can take traffic).
  const { pool, metrics: rfqMetrics } = startShardPool({ config, log, metrics, verifyPool, store }, makerDesk, {
    refreshReads: () => store.root.resetReadTxn(),
    maxWaiters: config.maxWaiters,
    ...shardOptions,
  });
  // Once, on a data directory written before the due index existed (every later start: one meta read).
  const dueIndexed = await buildDueIndexIfMissing(store);
  if (dueIndexed > 0) log.info({ markets: dueIndexed }, 'due index built for the open markets of an older data directory');
  const oracle = createOracle({ store, markets, verifyPool, clock, log, config });
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
  );
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
    withdrawals: new Withdrawals(store, clock, pool, ledger),
    ledger,
    ledgerCheck,
    balanceOwners: pool,
    preferences: new PreferencesStore(store),
    markets,
    contests: new Contests(store, clock, pool, markets, log, ledger),
    verifyPool,
    makers,
    makerGateway,
    makerDesk,
    quoteBook,
    makerProtection,
    makerStats,
    oracle,
  };

  // RFQ engine: recovery runs before any route can take traffic; then makers' messages go to its actors.
  const rfqEngine = await startRfqEngine(services, makerDesk, pool, rfqMetrics);
  makerDesk.setRfqSide(rfqEngine.dispatcher);
  makerGateway.setDispatcher(makerDesk);

  const dashboard = createDashboard(services, rateLimiter);
  const routes: AnyRoute[] = [];
  routes.push(
    ...opsRoutes(services, () => routes, SERVICE_VERSION),
    ...authRoutes(services),
    ...userRoutes(services),
    ...marketRoutes(services),
    ...adminRoutes(services),
    ...moneyRoutes(services),
    ...viewRoutes(services),
    ...contestRoutes(services),
    ...rfqRoutes(services, rfqEngine),
    ...mmRoutes(services, SERVICE_VERSION),
    ...mmDeskRoutes(services),
    ...oracleRoutes(services, rateLimiter),
    ...dashboard.routes,
  );
  let closing: Promise<void> | null = null;
  const authRateLimiter = new RateLimiter(config.authRateLimit);
  const authNetworkRateLimiter = new RateLimiter(config.authNetworkRateLimit);
  const shedder = new LoadShedder({ maxInFlight: config.maxInFlightCreates, maxDelayMs: config.maxEventLoopDelayMs });
  shedder.start();
  new Gauge({
    name: 'parlayd_http_in_flight_creates',
    help: 'RFQ creates admitted by the load shedder and not yet answered (bound: PARLAYD_MAX_IN_FLIGHT_CREATES)',
    registers: [metrics.registry],
    collect() {
      this.set(shedder.inFlight);
    },
  });
  const app = createHttpApp({
    routes: config.engine === 'journal' ? withReadBarriers(routes, () => pool.readBarrier()) : routes,
    tokens: services.sessions,
    rateLimiter,
    authRateLimiter,
    authNetworkRateLimiter,
    log,
    metrics: services.metrics,
    isStopping: () => closing !== null,
    shedder,
    unreadBodies: config.unreadBodies,
    clock,
    // Cursors are authenticated under the data directory's key, so they survive a restart.
    cursors: new CursorCodec(loadOrCreateDataKey(store, CURSOR_KEY_NAME)),
  });
  // uWS matches this static path before the HTTP catch-all; a plain GET on it still falls through to 404.
  app.ws(MAKER_WS_PATH, makerGateway.attach(app));
  app.ws(DASHBOARD_WS_PATH, dashboard.feed.behavior());

  const recoverBackend = await verifyThreadsLoaded;
  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(config.host, config.port, (socket) => {
      if (socket === false) reject(new Error(`cannot listen on ${config.host}:${config.port}`));
      else resolve(socket);
    });
  });
  const port = uWS.us_socket_local_port(listenSocket);
  const metricsListener = config.metricsPort === null ? null : await listenForMetrics(metrics.registry, config.host, config.metricsPort);

  // Contests: finish those whose markets all became final while the process was down, and settlements a
  // crash cut short. Started only once the start can no longer fail (nothing could stop a settlement left
  // running by a failed start), yet before any request: uWS hands requests over on a later turn, and
  // recover() queues every finish on its contest's lane before its first await, so every later task of such
  // a contest runs after its finish. Not awaited: a settlement of 1,000,000 entries takes ~21 s and the
  // service serves meanwhile; a stop waits for it to reach a page or batch boundary (contests.stop()).
  services.contests.recover().catch((err: unknown) => {
    // Only its reads of the open contests can fail this way (a finish's failure is logged inside): without
    // its index of open contests by market, market resolutions would miss them, so the process stops.
    log.fatal({ err }, 'contest recovery failed');
    crashLater(err);
  });
  // After contests' recover() has indexed the open contests (synchronously, above), so a window resolved now
  // finds its contests: windows whose prices became final before a crash resolve now, and the sweep starts.
  oracle.start();

  return {
    port,
    metricsPort: metricsListener?.port ?? null,
    recoverBackend,
    services,
    close: () =>
      (closing ??= (async () => {
        uWS.us_listen_socket_close(listenSocket);
        shedder.stop();
        metricsListener?.close();
        makerGateway.close();
        dashboard.feed.close();
        // Their timers would otherwise start a batch on a closing store.
        sessions.stopSweeping();
        walletLogin.stopSweeping();
        // No resolution or void starts after this; those running finish once their listeners do, and a
        // contest settlement among them stops at its next batch with contests.stop() below, so neither waits
        // for a long settlement. Windows left unresolved are queued again by the next start.
        const oracleStopped = oracle.stop();
        // Before the store closes: a contest settlement stops between two durable batches.
        services.markets.stopRetries();
        await services.contests.stop();
        await oracleStopped;
        await rfqEngine.close();
        try {
          await store.root.flushed;
        } catch (err) {
          // lmdb-js answers `flushed` with its last commit's promise: after a commit that failed for want of
          // space (answered to its callers, nothing of it kept) and no main-thread commit since, that rejects.
          if ((err as { commitError?: unknown } | null)?.commitError === undefined) throw err;
        }
        await verifyPool.close();
        threadRoles.close();
        await store.close();
      })()),
  };
}
