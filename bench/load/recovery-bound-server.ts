// `node dist/bench/load/recovery-bound-server.js <bodyBytes>`: a child process that does, for each
// `POST /v1/rfq`, only what every signed admission must do and nothing else: read the body, parse it, encode
// the order's signing bytes, hash them (EIP-191) and recover the signer with the service's backend (native
// when it loads), then answer 201 with a body of `bodyBytes`. No validation, no store, no makers, no thread
// hop: one uWebSockets.js app per core, all listening on one port (SO_REUSEPORT spreads the connections),
// each recovering on its own thread.
//
// Its throughput is an upper bound on signed admission for ANY implementation on this machine with this
// client: the `signed` target's numerator cannot exceed it. Prints {"port": N} on stdout once every thread
// listens. Stopped by a signal (SIGTERM), like ceiling-server.ts.
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import uWS from 'uWebSockets.js';
import { parseAddress } from '../../src/crypto/address.js';
import { recoverPersonalSigner } from '../../src/crypto/recover.js';
import { parseSignatureBase64 } from '../../src/crypto/signature.js';
import { encodeOrder, oddsToE4, type SignableOrder } from '../../src/rfq/codec.js';

interface WireOrder {
  user: string;
  wager_micros: number;
  min_odds: number;
  legs: Array<{ market_id: number; direction: 'up' | 'down' }>;
  nonce: number;
  expires_at_ms: number;
  order_type?: 1 | 2;
  shield_on: boolean;
  signature: string;
}

interface ThreadData {
  port: number;
  bodyBytes: number;
}

/**
 * True when the order's signature recovers to order.user: the one check that needs the recovery. Any other
 * fault of the body is a plain false (a throw inside a uWS handler would end the process).
 */
export function isSignedByUser(body: Buffer): boolean {
  try {
    return recoversToUser((JSON.parse(body.toString('utf8')) as { order: WireOrder }).order);
  } catch {
    return false;
  }
}

function recoversToUser(order: WireOrder): boolean {
  const signature = parseSignatureBase64(order.signature);
  const user = parseAddress(order.user);
  const minOddsE4 = oddsToE4(order.min_odds);
  if (signature === null || user === null || minOddsE4 === null) return false;
  const signable: SignableOrder = {
    user,
    wagerMicros: order.wager_micros,
    minOddsE4,
    nonce: order.nonce,
    expiresAtMs: order.expires_at_ms,
    orderType: order.order_type ?? 2,
    shieldOn: order.shield_on,
    legs: order.legs.map((leg) => ({ marketId: leg.market_id, direction: leg.direction })),
  };
  const recovered = recoverPersonalSigner(encodeOrder(signable), signature);
  return recovered.ok && recovered.address === user;
}

function serve({ port, bodyBytes }: ThreadData): Promise<void> {
  // {"pad":"xxx..."}: valid JSON of exactly bodyBytes bytes, as ceiling-server.ts answers.
  const answer = JSON.stringify({ pad: 'x'.repeat(Math.max(0, bodyBytes - 10)) });
  const app = uWS.App();
  app.post('/*', (res) => {
    const chunks: Buffer[] = [];
    let isAborted = false;
    res.onAborted(() => {
      isAborted = true;
    });
    res.onData((chunk, isLast) => {
      // uWS reuses the chunk's memory after this callback returns: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast || isAborted) return;
      const status = isSignedByUser(Buffer.concat(chunks)) ? '201 Created' : '400 Bad Request';
      res.cork(() => {
        res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(answer);
      });
    });
  });
  return new Promise((done, fail) => {
    app.listen('127.0.0.1', port, (socket) => (socket === false ? fail(new Error(`recovery bound: cannot listen on ${port}`)) : done()));
  });
}

/** A free loopback port: uWS shares a port between threads only when each binds it by number. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => done(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

async function main(): Promise<void> {
  const bodyBytes = Number(process.argv[2] ?? '160');
  const port = await freePort();
  const threads = Math.max(1, availableParallelism());
  const others = Array.from({ length: threads - 1 }, () => new Worker(new URL(import.meta.url), { workerData: { port, bodyBytes } }));
  await Promise.all(
    others.map(
      (worker) =>
        new Promise<void>((done, fail) => {
          worker.once('message', () => done());
          worker.once('error', fail);
        }),
    ),
  );
  await serve({ port, bodyBytes });
  process.stdout.write(JSON.stringify({ port, threads }) + '\n');
}

if (isMainThread) {
  if (process.argv[1]?.endsWith('recovery-bound-server.js') === true) await main();
} else {
  await serve(workerData as ThreadData);
  parentPort!.postMessage('listening');
}
