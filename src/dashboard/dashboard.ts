// Main thread, at start. Puts the dashboard together: its gauges on the service's registry, its
// page's routes and its live feed, so app.ts wires it in three lines; and a cluster gateway's part (its
// makers' connections and the feed, the page being the coordinator's).
import type { RateLimiter } from '../lib/rate-limit.js';
import type { AnyRoute } from '../http/route.js';
import { dashboardRoutes } from './routes.js';
import type { Services } from '../http/services.js';
import type { TokenResolver } from '../contract/principal.js';
import { loadDashboardAssets } from './assets.js';
import { DashboardFeed } from './feed.js';
import { registerDashboardGauges, registerMakerConnectionsGauge, type MakerConnectionSources } from './gauges.js';
import { localSamples, type SamplesOf } from './sample.js';

export { DASHBOARD_WS_PATH } from './feed.js';

export interface Dashboard {
  routes: AnyRoute[];
  feed: DashboardFeed;
}

/** What the dashboard uses of the services: its gauges' sources, the registry, and the feed's token check. */
type DashboardDeps = Pick<Services, 'clock' | 'contests' | 'log' | 'makerGateway' | 'makers' | 'markets' | 'metrics' | 'sessions'>;

/**
 * `samplesOf`: where the feed reads its figures, given this process's registry (this process alone unless
 * a cluster says otherwise: cluster/dashboard-samples.ts).
 */
export function createDashboard(s: DashboardDeps, rateLimiter: RateLimiter, samplesOf: SamplesOf = localSamples): Dashboard {
  const registry = s.metrics.registry;
  registerDashboardGauges(registry, {
    clock: s.clock,
    makers: s.makers,
    gateway: s.makerGateway,
    markets: s.markets,
    contests: s.contests,
  });
  return {
    routes: dashboardRoutes(loadDashboardAssets()),
    feed: new DashboardFeed({ samples: samplesOf(registry), tokens: s.sessions, rateLimiter, log: s.log }),
  };
}

/**
 * A cluster gateway's dashboard: the feed its sockets watch (the page is the coordinator's, forwarded), from
 * every front process's figures, and the one gauge this process owns, its makers' connections.
 */
export function createGatewayDashboardFeed(
  s: Pick<Services, 'log' | 'metrics'> & MakerConnectionSources & { tokens: TokenResolver },
  rateLimiter: RateLimiter,
  samplesOf: SamplesOf,
): DashboardFeed {
  registerMakerConnectionsGauge(s.metrics.registry, s);
  return new DashboardFeed({ samples: samplesOf(s.metrics.registry), tokens: s.tokens, rateLimiter, log: s.log });
}
