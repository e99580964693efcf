// Main thread. The maker gateway's Prometheus metrics (contract section 10: makers connected), registered on
// the service's registry. Gauges are read at scrape time from the gateway, so they cannot drift.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface GatewayMetrics {
  /** auth outcomes: success, or the auth_result reason. */
  authTotal: Counter<'result'>;
  /** Server-initiated closes by reason text (AUTH_TIMEOUT, HEARTBEAT_TIMEOUT, SLOW_CONSUMER, ...). */
  closedTotal: Counter<'reason'>;
}

export function registerGatewayMetrics(registry: Registry, read: { connected(): number; pending(): number }): GatewayMetrics {
  new Gauge({
    name: 'parlayd_mm_makers_connected',
    help: 'Authenticated maker connections',
    registers: [registry],
    collect() {
      this.set(read.connected());
    },
  });
  new Gauge({
    name: 'parlayd_mm_sockets_pending_auth',
    help: 'Maker sockets connected but not yet authenticated',
    registers: [registry],
    collect() {
      this.set(read.pending());
    },
  });
  return {
    authTotal: new Counter({ name: 'parlayd_mm_auth_total', help: 'Maker auth outcomes', labelNames: ['result'], registers: [registry] }),
    closedTotal: new Counter({
      name: 'parlayd_mm_closed_total',
      help: 'Maker sockets closed by the server, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
  };
}
