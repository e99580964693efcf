// Load generator, main thread. A farm of N maker connections living on worker threads (maker-worker.ts),
// driven by request/response commands.
import { Worker } from 'node:worker_threads';
import type { BenchServer } from './server.js';
import type { BenchWallet } from './sign.js';
import type { FanoutReceipt, MakerCommand, MakerEvent, MakerPolicy } from './maker-messages.js';

export const DOMAIN_TAG = 'parlayd:mm:ws-auth:v1:localhost.dev';

/** One maker worker thread and its command queue (one command at a time, each waits for its answer). */
class MakerWorker {
  readonly #worker = new Worker(new URL('./maker-worker.js', import.meta.url));
  #queue: Promise<unknown> = Promise.resolve();

  ask<K extends MakerEvent['kind']>(command: MakerCommand, expected: K): Promise<Extract<MakerEvent, { kind: K }>> {
    const run = () =>
      new Promise<Extract<MakerEvent, { kind: K }>>((resolve, reject) => {
        this.#worker.once('message', (event: MakerEvent) => {
          if (event.kind === expected) resolve(event as Extract<MakerEvent, { kind: K }>);
          else reject(new Error(event.kind === 'failed' ? event.message : `maker worker answered ${event.kind}, expected ${expected}`));
        });
        this.#worker.postMessage(command);
      });
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  terminate(): Promise<number> {
    return this.#worker.terminate();
  }
}

/**
 * N maker connections spread over `workerCount` worker threads (connections are added to the least loaded
 * worker), so receiving thousands of frames is not serialized on one client event loop.
 */
export class MakerFarm {
  readonly #workers: MakerWorker[];
  readonly #connected: number[];

  constructor(workerCount = 1) {
    this.#workers = Array.from({ length: workerCount }, () => new MakerWorker());
    this.#connected = this.#workers.map(() => 0);
  }

  /** Connections opened so far in all: the next one's key is makers[#opened % makers.length]. */
  #opened = 0;

  /**
   * Opens `count` more connections, spread over `makers` round-robin across the whole farm and every call
   * (one address may hold several connections, up to the service's PARLAYD_MM_MAX_SOCKETS_PER_MAKER: with
   * makers.length >= total / cap, no address goes past it). Logins the service refuses for now (429/503)
   * are retried after their Retry-After (maker-worker.ts); `retries` counts them.
   */
  async connect(
    server: Pick<BenchServer, 'wsUrl' | 'env'>,
    makers: ReadonlyArray<Pick<BenchWallet, 'privateKey' | 'checksumAddress'>>,
    count: number,
    concurrency = 32,
  ): Promise<{ connected: number; ms: number; retries: number }> {
    const keys = makers.map((m) => ({ privateKey: m.privateKey, checksumAddress: m.checksumAddress }));
    const domainTag = server.env['PARLAYD_MM_DOMAIN_TAG'] ?? DOMAIN_TAG;
    const startMs = performance.now();
    // Even totals per worker: worker i gets what brings it to its share of the new total.
    const total = this.#connected.reduce((a, b) => a + b, 0) + count;
    let retries = 0;
    await Promise.all(
      this.#workers.map(async (worker, i) => {
        const share = Math.floor(total / this.#workers.length) + (i < total % this.#workers.length ? 1 : 0);
        const more = share - this.#connected[i]!;
        if (more <= 0) return;
        const workerKeys = Array.from({ length: more }, () => keys[this.#opened++ % keys.length]!);
        const perWorker = Math.max(1, Math.floor(concurrency / this.#workers.length));
        const event = await worker.ask(
          { kind: 'connect', wsUrl: server.wsUrl, domainTag, keys: workerKeys, concurrency: perWorker },
          'connected',
        );
        this.#connected[i] = event.connected;
        retries += event.retries;
      }),
    );
    return { connected: this.#connected.reduce((a, b) => a + b, 0), ms: performance.now() - startMs, retries };
  }

  async setPolicy(policy: MakerPolicy, isTracking = false): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.ask({ kind: 'policy', policy, isTracking }, 'ok')));
  }

  /** When the rfq reached the first and last connection (all workers), and how many; forgets it. */
  async receipt(requestId: string): Promise<FanoutReceipt | null> {
    const parts = await Promise.all(this.#workers.map((w) => w.ask({ kind: 'receipt', requestId }, 'receipt')));
    let merged: FanoutReceipt | null = null;
    for (const { receipt } of parts) {
      if (receipt === null) continue;
      if (merged === null) merged = { ...receipt };
      else {
        merged.count += receipt.count;
        merged.firstMs = Math.min(merged.firstMs, receipt.firstMs);
        merged.lastMs = Math.max(merged.lastMs, receipt.lastMs);
      }
    }
    return merged;
  }

  async stats() {
    const parts = await Promise.all(this.#workers.map((w) => w.ask({ kind: 'stats' }, 'stats')));
    return {
      connected: parts.reduce((a, p) => a + p.connected, 0),
      rfqsReceived: parts.reduce((a, p) => a + p.rfqsReceived, 0),
      answersSent: parts.reduce((a, p) => a + p.answersSent, 0),
      closedUnexpectedly: parts.reduce((a, p) => a + p.closedUnexpectedly, 0),
    };
  }

  async close(): Promise<void> {
    await Promise.all(
      this.#workers.map(async (w) => {
        await w.ask({ kind: 'close' }, 'closed');
        await w.terminate();
      }),
    );
  }
}

export const nowEpochMs = () => performance.timeOrigin + performance.now();
