// Main thread. An optional listener of its own for GET /metrics (PARLAYD_METRICS_PORT), for deployments that
// scrape from a private interface or port a firewall keeps from the public: there it needs no token. On the
// main port /metrics always takes the admin bearer (routes/ops.ts). Anything but GET /metrics is 404.
import uWS, { type us_listen_socket } from 'uWebSockets.js';
import type { Registry } from 'prom-client';
import { ApiError } from '../lib/errors.js';

const NOT_FOUND_BODY = JSON.stringify(new ApiError('NOT_FOUND').toBody());

export interface MetricsListener {
  port: number;
  close(): void;
}

export async function listenForMetrics(registry: Registry, host: string, port: number): Promise<MetricsListener> {
  const app = uWS.App();
  app.get('/metrics', (res) => {
    let isAborted = false;
    res.onAborted(() => (isAborted = true));
    registry.metrics().then(
      (text) => {
        if (isAborted) return;
        res.cork(() => res.writeHeader('Content-Type', registry.contentType).end(text));
      },
      () => {
        if (isAborted) return;
        res.cork(() =>
          res
            .writeStatus('500 Internal Server Error')
            .writeHeader('Content-Type', 'application/json')
            .end(JSON.stringify(new ApiError('INTERNAL').toBody())),
        );
      },
    );
  });
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').writeHeader('Content-Type', 'application/json').end(NOT_FOUND_BODY);
  });
  const socket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(host, port, (s) => (s === false ? reject(new Error(`cannot listen for metrics on ${host}:${port}`)) : resolve(s)));
  });
  return { port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) };
}
