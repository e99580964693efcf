// Main thread. The oracle's parts (contract section 12), built and started by app.ts once the resolution
// listeners (RFQ settlement, contests) are registered: reports (prices.ts, intake.ts), window resolution
// (resolver.ts) and the auto-void sweep (auto-void.ts).
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import type { VerifyPool } from '../crypto/verify-pool.js';
import type { Markets } from '../markets/markets.js';
import type { Store } from '../store/db.js';
import { AutoVoidSweep } from './auto-void.js';
import { OracleIntake } from './intake.js';
import { OraclePrices } from './prices.js';
import { OracleResolver } from './resolver.js';

export interface Oracle {
  prices: OraclePrices;
  intake: OracleIntake;
  resolver: OracleResolver;
  sweep: AutoVoidSweep;
  /** Starts resolving and sweeping: the windows already final (a crash in between) are queued now. */
  start(): void;
  /** Stops the sweep and waits for the resolutions running; what is left resolves at the next start. */
  stop(): Promise<void>;
}

export interface OracleDeps {
  store: Store;
  markets: Markets;
  verifyPool: Pick<VerifyPool, 'recoverPersonalSigner'>;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'priceAssets' | 'oracleAddresses' | 'oracleMaxStalenessMs' | 'resolutionGraceMs'>;
}

/** Builds the oracle; it registers its Markets listeners now, so build it before anything can create a window. */
export function createOracle(deps: OracleDeps): Oracle {
  const { store, markets, verifyPool, clock, log, config } = deps;
  const prices = new OraclePrices(store, config.priceAssets);
  const resolver = new OracleResolver(markets, prices, log, { maxStalenessMs: config.oracleMaxStalenessMs });
  const intake = new OracleIntake(prices, resolver, verifyPool, clock, config);
  const sweep = new AutoVoidSweep(markets, clock, log, config.resolutionGraceMs);
  let isStopping = false;
  return {
    prices,
    intake,
    resolver,
    sweep,
    start: () => {
      resolver.start(markets.openPriceWindows());
      // Windows whose prices were final before a stop are resolved from them (contract section 12), so the
      // auto-void sweep starts only once the resolver has worked off what the start queued: run together, a
      // window past its grace after the downtime was voided first (the resolver's pump waits a turn).
      void resolver.whenIdle().then(() => {
        if (!isStopping) sweep.start();
      });
    },
    // Both stop starting work at once (synchronously), then wait for what runs.
    stop: () => {
      isStopping = true;
      return Promise.all([sweep.stop(), resolver.stop()]).then(() => undefined);
    },
  };
}
