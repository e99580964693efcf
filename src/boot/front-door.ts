// Main thread. The HTTP front door both assemblies open (app.ts, the service; gateway-app.ts, a cluster's
// gateway): the load shedder, the uWS app on their routes, and the `http` area that listens last and stops
// taking requests first.
import uWS, { type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import { Gauge } from 'prom-client';
import type { Config } from '../config/config.js';
import type { TokenResolver } from '../contract/principal.js';
import type { CursorCodec } from '../contract/paging.js';
import type { Clock } from '../lib/clock.js';
import { RateLimiter } from '../lib/rate-limit.js';
import type { HttpMetrics } from '../ops/metrics.js';
import { listenForMetrics, type MetricsListener } from '../ops/metrics-listener.js';
import { LoadShedder } from '../http/load-shedder.js';
import { withReadBarriers } from '../http/read-barriers.js';
import type { AnyRoute } from '../http/route.js';
import { createHttpApp, type HttpDeps } from '../http/server.js';
import type { Logger } from 'pino';
import type { Areas } from './areas.js';

export interface FrontDoorParts {
  config: Config;
  log: Logger;
  clock: Clock;
  metrics: HttpMetrics;
  routes: readonly AnyRoute[];
  tokens: TokenResolver;
  /** The per-IP bucket, shared with the maker socket's upgrades. */
  rateLimiter: RateLimiter;
  /** The shards' read barrier: on the journal engine every route passes it (a read after a write's answer sees it). */
  readBarrier: () => Promise<void>;
  cursors: CursorCodec;
  /** Resolves once the verify threads loaded, with the recovery backend they use: listening waits for it. */
  verifyThreadsLoaded: Promise<'native' | 'noble'>;
  /** What only one of the assemblies gives (a gateway's forwarder, a coordinator's forwarded key). */
  extra?: Pick<HttpDeps, 'forward' | 'forwardedKey'>;
}

export interface Listened {
  port: number;
  metricsPort: number | null;
  recoverBackend: 'native' | 'noble';
}

/** The app (for its sockets' paths) and, once the `http` area started, where it listens. */
export function openFrontDoor(areas: Areas, parts: FrontDoorParts): { app: TemplatedApp; listened(): Listened } {
  const { config, metrics } = parts;
  const shedder = new LoadShedder({ maxInFlight: config.maxInFlightCreates, maxDelayMs: config.maxEventLoopDelayMs });
  new Gauge({
    name: 'parlayd_http_in_flight_creates',
    help: 'RFQ creates admitted by the load shedder and not yet answered (bound: PARLAYD_MAX_IN_FLIGHT_CREATES)',
    registers: [metrics.registry],
    collect() {
      this.set(shedder.inFlight);
    },
  });
  const app = createHttpApp({
    routes: config.engine === 'journal' ? withReadBarriers(parts.routes, parts.readBarrier) : parts.routes,
    tokens: parts.tokens,
    rateLimiter: parts.rateLimiter,
    authRateLimiter: new RateLimiter(config.authRateLimit),
    authNetworkRateLimiter: new RateLimiter(config.authNetworkRateLimit),
    log: parts.log,
    metrics,
    isStopping: () => areas.isStopping,
    shedder,
    unreadBodies: config.unreadBodies,
    clock: parts.clock,
    cursors: parts.cursors,
    ...parts.extra,
  });
  let listening: { socket: us_listen_socket; metricsListener: MetricsListener | null; recoverBackend: 'native' | 'noble' } | null = null;
  areas.add({
    name: 'http',
    start: async () => {
      const recoverBackend = await parts.verifyThreadsLoaded;
      shedder.start();
      const socket = await listen(app, config.host, config.port);
      listening = { socket, recoverBackend, metricsListener: null };
      if (config.metricsPort !== null)
        listening.metricsListener = await listenForMetrics(metrics.registry, config.host, config.metricsPort);
    },
    stop: () => {
      if (listening !== null) uWS.us_listen_socket_close(listening.socket);
      shedder.stop();
      listening?.metricsListener?.close();
    },
  });
  return {
    app,
    listened: () => {
      if (listening === null) throw new Error('the service is read before its http area started'); // a wiring bug
      return {
        port: uWS.us_socket_local_port(listening.socket),
        metricsPort: listening.metricsListener?.port ?? null,
        recoverBackend: listening.recoverBackend,
      };
    },
  };
}

function listen(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  return new Promise((resolve, reject) =>
    app.listen(host, port, (socket) => (socket === false ? reject(new Error(`cannot listen on ${host}:${port}`)) : resolve(socket))),
  );
}
