// Main thread, at start. Puts the dashboard together: its gauges on the service's registry, its
// page's routes and its live feed, so app.ts wires it in three lines.
import type { RateLimiter } from '../lib/rate-limit.js';
import type { AnyRoute } from '../http/route.js';
import { dashboardRoutes } from './routes.js';
import type { Services } from '../http/services.js';
import { loadDashboardAssets } from './assets.js';
import { DashboardFeed } from './feed.js';
import { registerDashboardGauges } from './gauges.js';

export { DASHBOARD_WS_PATH } from './feed.js';

export interface Dashboard {
  routes: AnyRoute[];
  feed: DashboardFeed;
}

/** What the dashboard uses of the services: its gauges' sources, the registry, and the feed's token check. */
type DashboardDeps = Pick<Services, 'clock' | 'contests' | 'log' | 'makerGateway' | 'makers' | 'markets' | 'metrics' | 'sessions'>;

export function createDashboard(s: DashboardDeps, rateLimiter: RateLimiter): Dashboard {
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
    feed: new DashboardFeed({ registry, tokens: s.sessions, rateLimiter, log: s.log }),
  };
}
