// A gateway's way to one RFQ shard on a shard node (rfq/shard-transport.ts is the seam; shard-door.ts the
// other end). The shard pool sends it batches as it sends a worker thread; they leave as one NATS message per
// batch on the shard's subject, in order behind the markets sent before them. The shard's events for this
// gateway come back on a subject of its own.
//
// Joining: `hello` is asked until the shard answers (it answers once its start is done); then every market
// the gateway holds is sent, and the pool hears `ready`. Liveness: a `beat` every GATEWAY_BEAT_MS, answered
// by the shard with the incarnation it drew at its start. A beat unanswered in BEAT_TIMEOUT_MS (the node is
// gone: "no responders" at once once nats-server has dropped it) or answered by a new incarnation (it
// restarted in between) makes the shard unreachable: the pool ends the calls it had outstanding with 503 and
// refuses new ones until the join is made again. So does a disconnect from nats-server, which may have lost
// messages either way while no beat went unanswered.
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import type { StoredMarket } from '../contract/markets.js';
import type { MainToShard, ShardToMain } from '../rfq/messages.js';
import type { ShardEvents, ShardTransport, ShardTransportFactory } from '../rfq/shard-transport.js';
import { errors } from '../lib/errors.js';
import type { DoorReply, OwnedViewReply, ToShardNode } from './rfq-wire.js';
import { decode, encode, RFQ_MESSAGES_PER_PUBLISH, subjects } from './wire.js';

export const GATEWAY_BEAT_MS = 250;
const BEAT_TIMEOUT_MS = 1_000;
/** A view's answer waits at most this long (its node's read barrier, then the read). */
const VIEW_TIMEOUT_MS = 2_000;
/** Markets per message when a shard joins: a market record encodes in ~400 bytes. */
const MARKETS_PER_PUBLISH = 512;

export interface NatsShardTransportOptions {
  nc: NatsConnection;
  /** This gateway's name on subjects (wire.ts GATEWAY_NAME). */
  gateway: string;
  log: Logger;
}

export function natsShardTransport(options: NatsShardTransportOptions): ShardTransportFactory {
  return (init, events) => new NatsShardTransport(options, init.shard, events);
}

class NatsShardTransport implements ShardTransport {
  readonly #subject: string;
  readonly #events: Subscription;
  readonly #beat: NodeJS.Timeout;
  /** The shard's incarnation this gateway joined; null until joined, and while joining again. */
  #incarnation: string | null = null;
  #isReady = false;
  #isJoining = false;
  #isBeating = false;
  #isStopped = false;

  constructor(
    private readonly options: NatsShardTransportOptions,
    private readonly shard: number,
    private readonly events: ShardEvents,
  ) {
    const { nc, gateway, log } = options;
    this.#subject = subjects.ownerRfq(shard);
    this.#events = nc.subscribe(subjects.gatewayEvents(gateway, shard), {
      callback: (error, msg) => {
        if (error !== null) return log.warn({ err: error, shard }, 'RFQ events subscription error');
        events.onBatch(decode<ShardToMain[]>(msg.data));
      },
    });
    this.#beat = setInterval(() => void this.#beatOnce(), GATEWAY_BEAT_MS);
    void this.#join();
    void this.#watchConnection();
  }

  send(batch: MainToShard[]): void {
    for (let from = 0; from < batch.length; from += RFQ_MESSAGES_PER_PUBLISH) {
      this.#publish({ k: 'batch', gateway: this.options.gateway, batch: batch.slice(from, from + RFQ_MESSAGES_PER_PUBLISH) });
    }
  }

  sendMarkets(markets: StoredMarket[]): void {
    for (let from = 0; from < markets.length; from += MARKETS_PER_PUBLISH) {
      this.#publish({ k: 'markets', gateway: this.options.gateway, markets: markets.slice(from, from + MARKETS_PER_PUBLISH) });
    }
  }

  async announceMakers(): Promise<void> {
    // Sent whether joined or not: a hello in flight was asked before it, and the door answers it at once.
    try {
      const envelope: ToShardNode = { k: 'makers', gateway: this.options.gateway, makers: true };
      await this.options.nc.request(this.#subject, encode(envelope), { timeout: BEAT_TIMEOUT_MS });
    } catch {
      // Out of reach: the beat finds it so, and the join made again carries it.
    }
  }

  async readView(name: string, args: unknown): Promise<unknown> {
    let reply: OwnedViewReply;
    try {
      reply = decode<OwnedViewReply>(
        (await this.options.nc.request(subjects.ownerView(this.shard), encode({ name, args }), { timeout: VIEW_TIMEOUT_MS })).data,
      );
    } catch {
      throw errors.shardUnreachable(); // no responders, no answer in time, a closed connection
    }
    if (!reply.ok) throw errors.shardUnreachable();
    return reply.value;
  }

  stop(): Promise<void> {
    this.#isStopped = true;
    clearInterval(this.#beat);
    this.#events.unsubscribe();
    return Promise.resolve();
  }

  /** Asks `hello` until answered, then sends every market; the pool hears `ready` (first) or reachable (again). */
  async #join(): Promise<void> {
    if (this.#isJoining) return;
    this.#isJoining = true;
    let reply: DoorReply | null = null;
    while (reply === null && !this.#isStopped) {
      reply = await this.#ask('hello');
      if (reply === null) await new Promise((resolve) => setTimeout(resolve, GATEWAY_BEAT_MS));
    }
    this.#isJoining = false;
    if (reply === null) return;
    this.sendMarkets([...this.events.allMarkets()]);
    this.#incarnation = reply.incarnation;
    if (!this.#isReady) {
      this.#isReady = true;
      this.events.onBatch([{ kind: 'ready', failedRfqs: reply.failedRfqs }]);
    } else {
      this.options.log.info({ shard: this.shard }, 'RFQ shard reachable again');
      this.events.onReachable(true);
    }
  }

  async #beatOnce(): Promise<void> {
    if (this.#incarnation === null || this.#isBeating) return;
    this.#isBeating = true;
    const reply = await this.#ask('beat');
    this.#isBeating = false;
    if (this.#isStopped || this.#incarnation === null || reply?.incarnation === this.#incarnation) return;
    this.#becomeUnreachable(reply === null ? 'no answer to its beat' : 'it restarted');
  }

  /**
   * A broken connection to nats-server loses what was on its way, both ways (core NATS: at most once), and a
   * restart of the server can be over before a beat goes unanswered: so a disconnect alone makes the shard
   * unreachable, its calls end 503, and the join is made again once the connection is back.
   */
  async #watchConnection(): Promise<void> {
    for await (const status of this.options.nc.status()) {
      if (this.#isStopped) return;
      if (status.type === 'disconnect' || status.type === 'reconnect') this.#becomeUnreachable(`the NATS connection's ${status.type}`);
    }
  }

  #becomeUnreachable(why: string): void {
    if (this.#isStopped || this.#incarnation === null) return; // not joined yet, or already joining again
    this.options.log.warn({ shard: this.shard, why }, 'RFQ shard unreachable: its calls end 503');
    this.#incarnation = null;
    this.events.onReachable(false);
    void this.#join();
  }

  /** The shard's answer, or null: no responders, no answer in time, a closed connection. */
  async #ask(k: 'hello' | 'beat'): Promise<DoorReply | null> {
    try {
      // Whether a maker is connected, or is being announced (ShardPool.announceMakers): as of now.
      const envelope: ToShardNode = { k, gateway: this.options.gateway, makers: this.events.hasMakers() };
      const msg = await this.options.nc.request(this.#subject, encode(envelope), {
        timeout: BEAT_TIMEOUT_MS,
      });
      return decode<DoorReply>(msg.data);
    } catch {
      return null;
    }
  }

  #publish(envelope: ToShardNode): void {
    try {
      this.options.nc.publish(this.#subject, encode(envelope));
    } catch (error) {
      // A closed or draining connection: lost, as on a broken link; the next beat finds the shard unreachable.
      this.options.log.warn({ err: error, shard: this.shard }, 'RFQ batch could not be published');
    }
  }
}
