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
import { recoverPersonalSigner } from '../../src/crypto/recover.js';
import { parseSignatureBase64 } from '../../src/crypto/signature.js';
import { toSignableOrder } from '../../src/rfq/admission.js';
import { encodeOrder } from '../../src/contract/order-codec.js';
import type { Order } from '../../src/contract/rfq.js';

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
    return recoversToUser((JSON.parse(body.toString('utf8')) as { order: Order }).order);
  } catch {
    return false;
  }
}

function recoversToUser(order: Order): boolean {
  const signature = parseSignatureBase64(order.signature);
  if (signature === null) return false;
  // Admission's own reading of the order (it throws on a bad address or odds: the caller's false).
  const signable = toSignableOrder(order);
  const recovered = recoverPersonalSigner(encodeOrder(signable), signature);
  return recovered.ok && recovered.address === signable.user;
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
