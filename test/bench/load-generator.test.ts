// The load generator's own mechanics (bench/load): what its figures rest on, checked against a real HTTP
// server on loopback. No timing is asserted (speed lives in bench/, never in npm test): these check that
// every scheduled request is sent exactly once, and that the raw client never strands a request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { RawHttpPool, encodeRequest } from '../../bench/load/raw-http.js';
import { runOpenLoop } from '../../bench/load/open-loop.js';

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Rejects instead of hanging: a stranded request is the failure these tests look for. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_resolve, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref()),
  ]);
}

test('the raw HTTP pool queues past its size and replaces connections the server closed while idle', async () => {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => res.end(JSON.stringify({ method: req.method, body })));
  });
  server.on('connection', (socket: Socket) => sockets.add(socket));
  const port = await listen(server);
  const pool = await RawHttpPool.open(port, 2);
  try {
    const post = encodeRequest(port, 'POST', '/x', { 'content-type': 'application/json' }, '{"n":"é"}');
    const first = await within(5000, Promise.all(Array.from({ length: 5 }, () => pool.request(post))));
    for (const answer of first)
      assert.deepEqual([answer.status, JSON.parse(answer.body.toString())], [200, { method: 'POST', body: '{"n":"é"}' }]);
    // What uWS does to a keep-alive connection idle for 10 s: the server closes both, and the pool must notice.
    let closed = 0;
    const bothClosed = new Promise<void>((resolve) => {
      for (const socket of sockets) socket.once('close', () => ++closed === sockets.size && resolve());
    });
    server.closeIdleConnections();
    await within(5000, bothClosed);
    await new Promise((resolve) => setTimeout(resolve, 100)); // for the client to read the FINs
    const get = encodeRequest(port, 'GET', '/y', {});
    const second = await within(5000, Promise.all(Array.from({ length: 3 }, () => pool.request(get))));
    assert.deepEqual(
      second.map((a) => a.status),
      [200, 200, 200],
    );
  } finally {
    pool.close();
    server.closeAllConnections();
    server.close();
  }
});

test('the open loop sends every scheduled request exactly once, paced by its thread', async () => {
  const seen: number[] = [];
  const result = await within(
    10_000,
    runOpenLoop({
      ratePerS: 500,
      durationMs: 200,
      maxInFlight: 1000,
      request: async (i) => {
        seen.push(i);
        return i % 10 !== 0; // every tenth counts as an error
      },
    }),
  );
  assert.deepEqual([result.scheduled, result.sent, result.completed, result.errors, result.isSaturated], [100, 100, 90, 10, false]);
  assert.deepEqual(
    seen,
    Array.from({ length: 100 }, (_, i) => i),
    'in order, once each',
  );
  assert.equal(result.latency.count, 100);
  assert.equal(result.sendLag.count, 100);
});
