// `node dist/bench/load/ceiling-server.js <uws|http> <bodyBytes>`: a child process serving one fixed JSON
// body of `bodyBytes` on every path, with nothing else in the handler. It is the denominator of the HTTP
// ratios: the most this machine, this client and this body size allow through uWebSockets.js (the
// service's own server) and through node:http. Prints {"port": N} on stdout once listening.
import { createServer } from 'node:http';
import uWS from 'uWebSockets.js';

const mode = process.argv[2];
const bodyBytes = Number(process.argv[3] ?? '160');
// {"pad":"xxx..."}: valid JSON of exactly bodyBytes bytes (10 bytes of frame around the padding).
const body = JSON.stringify({ pad: 'x'.repeat(Math.max(0, bodyBytes - 10)) });

if (mode === 'uws') {
  const app = uWS.App();
  app.any('/*', (res) => {
    res.cork(() => {
      res.writeHeader('Content-Type', 'application/json').end(body);
    });
  });
  app.listen('127.0.0.1', 0, (socket) => {
    if (socket === false) throw new Error('uws ceiling: cannot listen');
    process.stdout.write(JSON.stringify({ port: uWS.us_socket_local_port(socket) }) + '\n');
  });
} else if (mode === 'http') {
  const length = String(Buffer.byteLength(body));
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': length });
    res.end(body);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 }) + '\n');
  });
} else {
  process.stderr.write('usage: ceiling-server.js <uws|http> <bodyBytes>\n');
  process.exit(2);
}
