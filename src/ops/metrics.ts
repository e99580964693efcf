// Main thread. One prom-client registry per service instance (tests run several in one process). Each part
// of the service registers its own metrics on it; this module only holds the HTTP ones.
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { FastHistogram } from './fast-histogram.js';

export interface HttpMetrics {
  registry: Registry;
  requestSeconds: FastHistogram<'route' | 'method' | 'status'>;
  errorsTotal: Counter<'code'>;
  /** Requests refused at the front door (http/load-shedder.ts), by reason. */
  shedTotal: Counter<'reason'>;
  /** Bodies still arriving that were refused (429) or closed at their deadline (http/unread-bodies.ts). */
  slowBodiesTotal: Counter<'outcome'>;
}

/** Latency buckets from 50 µs to 10 s: the interesting range of a fast service spans five decades. */
export const LATENCY_BUCKETS_S = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'parlayd_' });
  return {
    registry,
    requestSeconds: new FastHistogram(
      'parlayd_http_request_seconds',
      'HTTP request latency from first byte to response written, by route pattern',
      ['route', 'method', 'status'],
      LATENCY_BUCKETS_S,
      registry,
    ),
    errorsTotal: new Counter({
      name: 'parlayd_http_errors_total',
      help: 'HTTP error responses by contract error code',
      labelNames: ['code'],
      registers: [registry],
    }),
    shedTotal: new Counter({
      name: 'parlayd_http_shed_total',
      help: 'Requests refused 503 OVERLOADED before any work, by reason (in_flight, event_loop_delay)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    slowBodiesTotal: new Counter({
      name: 'parlayd_http_slow_bodies_total',
      help: 'Request bodies still arriving after their first turn that were refused 429 past a bound (refused) or closed at the create body deadline (expired)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
