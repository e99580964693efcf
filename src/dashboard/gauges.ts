// Main thread. Gauges of state the main thread owns that /metrics did not show: makers connected
// by address, markets due for resolution, open contests with their entries and pots. Each is read from its
// owner at scrape time (prom-client `collect`), like the gateway's gauges, so it cannot drift, and the
// dashboard reads them from the same registry as every other figure (one source).
import { Gauge, type Registry } from 'prom-client';
import type { Contests } from '../contests/contests.js';
import type { Markets } from '../markets/markets.js';
import type { MakerGateway } from '../mm/gateway.js';
import type { MakerRegistry } from '../mm/registry.js';
import type { Clock } from '../lib/clock.js';
import type { ContestSummary } from '../contract/contests.js';

/** Due markets are counted up to this many (one range read of the due index): past it the gauge says so. */
export const MAX_DUE_COUNTED = 1_000;
/** Open contests shown, newest first: a label set each, so a bound on the series this adds. */
export const MAX_CONTESTS_SHOWN = 20;
/** Contest titles are operator text of any length: a label keeps this many characters. */
const MAX_TITLE_CHARS = 60;

export interface MakerConnectionSources {
  makers: Pick<MakerRegistry, 'list'>;
  gateway: Pick<MakerGateway, 'connectionsOf'>;
}

export interface DashboardGaugeSources extends MakerConnectionSources {
  clock: Clock;
  markets: Pick<Markets, 'dueMarketIds'>;
  contests: Pick<Contests, 'list'>;
}

export function registerDashboardGauges(registry: Registry, s: DashboardGaugeSources): void {
  registerMakerConnectionsGauge(registry, s);
  new Gauge({
    name: 'parlayd_markets_due',
    help: `Unresolved markets whose resolution time has passed (counted up to ${MAX_DUE_COUNTED})`,
    registers: [registry],
    collect() {
      this.set(s.markets.dueMarketIds(s.clock.nowMs(), MAX_DUE_COUNTED).length);
    },
  });
  // Each reads the newest open contests when collected (MAX_CONTESTS_SHOWN records from the list index).
  const contestGauge = (name: string, help: string, value: (contest: ContestSummary) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['contest', 'title'],
      registers: [registry],
      collect() {
        this.reset(); // a contest that settled must leave
        for (const contest of s.contests.list({ status: 'open' }, { limit: MAX_CONTESTS_SHOWN }).contests) {
          this.set({ contest: contest.contest_id, title: contest.title.slice(0, MAX_TITLE_CHARS) }, value(contest));
        }
      },
    });
  contestGauge('parlayd_contest_entries', `Entries of the newest ${MAX_CONTESTS_SHOWN} open contests`, (c) => c.entries_filled);
  // One gauge of micros is exact here, unlike the ledger's money gauges (ledger/check-runner.ts MoneyGauge):
  // rules.ts refuses a contest whose pot could pass 2^53 − 1 micros.
  contestGauge(
    'parlayd_contest_pot_micros',
    `Total pot (protocol pool + entries x bet) of the newest ${MAX_CONTESTS_SHOWN} open contests, micros`,
    (c) => c.total_pot_micros,
  );
}

/**
 * Authenticated connections per registered maker, on the sockets of this process: a gateway of a cluster
 * registers only this one (the other gauges are the coordinator's, which the cluster's dashboard adds up).
 */
export function registerMakerConnectionsGauge(registry: Registry, s: MakerConnectionSources): void {
  new Gauge({
    name: 'parlayd_mm_maker_connections',
    help: 'Authenticated connections of each registered maker that has at least one',
    labelNames: ['maker', 'name'],
    registers: [registry],
    collect() {
      // Reset first: a maker that left must not keep its last value. A scan of the registry (in memory,
      // at most MAX_MAKERS) times the connections: only at scrape time, not on any request path.
      this.reset();
      for (const maker of s.makers.list()) {
        const connections = s.gateway.connectionsOf(maker.address);
        if (connections > 0) this.set({ maker: maker.address, name: maker.name }, connections);
      }
    },
  });
}
