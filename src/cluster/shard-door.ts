// One RFQ shard of a shard node, on its owner's thread (shard-node-worker.ts): the door between the
// gateways, over NATS, and the shard actor (rfq/shard-host.ts), which stays what it is in one process: it
// takes batches of MainToShard and emits batches of ShardToMain, with call ids and maker ids of one caller.
// The door makes several gateways look like that one caller:
// - a call's id is the door's own while the shard has it, and the gateway's again in its answer;
// - a frame for a maker goes to the gateway the maker's messages came from (its quotes, declines, answers:
//   the frames a shard sends a maker answer those), an RFQ's end to the gateway that created it, the `rfq`
//   broadcast and the stats to every gateway;
// - an RFQ's audience is complete once every gateway it was sent to has answered with its makers (or has
//   gone silent): the shard then gets one audience, as it would from one process's desk.
// Markets arrive on the same subject, ahead of what follows them (the settlement of a resolved market's
// positions), and are written to the node's LMDB before anything after them reaches the shard.
import { randomUUID } from 'node:crypto';
import type { NatsConnection, Msg, Subscription } from 'nats';
import type { StoredMarket } from '../contract/markets.js';
import type { Logger } from 'pino';
import { Batcher } from '../lib/batcher.js';
import { putCopiedMarketsInTxn } from '../markets/market-table.js';
import type { CallOutcome, MainToShard, ShardToMain } from '../rfq/messages.js';
import { creditRef, userAccount, type AccountId } from '../records/ledger.js';
import { ownerByteOf } from '../rfq/ids.js';
import { decidingName } from './money-schema.js';
import type { Store } from '../store/db.js';
import type { DoorReply, ToShardNode } from './rfq-wire.js';
import { decode, encode, GATEWAY_NAME, RFQ_MESSAGES_PER_PUBLISH, subjects } from './wire.js';

/** The outcome of a call this owner does not decide (ShardDoor.#isOwnCall): 503, as for a node out of reach. */
const MISROUTED: CallOutcome<never> = { ok: false, code: 'OVERLOADED', message: "the gateway's partition map is not this node's" };

/** A gateway silent this long (it beats every GATEWAY_BEAT_MS) is gone: its audiences are no longer awaited. */
export const GATEWAY_SILENCE_MS = 2_000;
const SWEEP_MS = 500;

export interface ShardDoorOptions {
  nc: NatsConnection;
  owner: number;
  /** The cluster's map: whose a name is (a call for another owner's is refused, not decided). */
  ownerOf: (name: AccountId) => number;
  /** The node's LMDB environment the shard reads markets from. */
  store: Store;
  log: Logger;
  nowMs(): number;
  /** The node's LMDB could not be written: the process must stop. */
  onFailure(error: Error): void;
  /** Markets just written to the node's LMDB (and visible to its reads): a resolved one's positions settle here. */
  onMarkets(markets: StoredMarket[]): void;
}

/** What the door needs of the shard: ShardHost. */
export interface ShardInput {
  deliver(batch: MainToShard[]): void;
}

interface Gateway {
  name: string;
  lastHeardMs: number;
  /** A maker is connected there (rfq-wire.ts ToShardNode `makers`): it is sent the `rfq` broadcast, and awaited. */
  hasMakers: boolean;
  out: Batcher<ShardToMain>;
}

/**
 * A broadcast RFQ's audience as the gateways answer: who has not yet, the makers of those who have, and what
 * those makers sent of this RFQ meanwhile. The shard takes a maker's message only from a maker of the RFQ's
 * audience (NOT_IN_AUDIENCE otherwise), and the audience it gets is the merged one: so a quote from a gateway
 * that answered waits here for the others, and follows the audience to the shard in the order it came.
 */
interface Audience {
  waiting: Set<string>;
  makerIds: string[];
  held: MainToShard[];
}

export class ShardDoor {
  readonly #gateways = new Map<string, Gateway>();
  /** The shard's call id -> the gateway's and its own id there. */
  readonly #calls = new Map<number, { gateway: string; callId: number }>();
  #nextCallId = 1;
  /** Maker connection -> the gateway it is on, from the messages it sent (dropped when it disconnects). */
  readonly #makerGateways = new Map<string, string>();
  /** RFQ -> the gateway that created it, until its end is told. */
  readonly #creators = new Map<string, string>();
  readonly #audiences = new Map<string, Audience>();
  /** Envelopes that came while markets before them were being written, in order. */
  #held: Msg[] | null = null;
  /** Set once the shard's start is done: hello is answered from then on. */
  #failedRfqs: number | null = null;
  readonly #helloWaiting: Msg[] = [];
  #shard: ShardInput | null = null;
  #subscription: Subscription | null = null;
  readonly #sweep: NodeJS.Timeout;
  readonly #incarnation = randomUUID();

  constructor(private readonly options: ShardDoorOptions) {
    this.#sweep = setInterval(() => this.#forgetSilent(), SWEEP_MS).unref();
  }

  /** Opens the door to `shard` (the shard is built with `emit` as its way out, so after the door). */
  open(shard: ShardInput): void {
    this.#shard = shard;
    const { nc, owner, log } = this.options;
    this.#subscription = nc.subscribe(subjects.ownerRfq(owner), {
      callback: (error, msg) => {
        if (error !== null) return log.warn({ err: error }, 'RFQ subscription error');
        this.#arrive(msg);
      },
    });
  }

  /** The shard's events (its emitBatch): each to the gateway it is for. */
  readonly emit = (batch: ShardToMain[]): void => {
    for (const event of batch) this.#route(event);
  };

  close(): void {
    clearInterval(this.#sweep);
    this.#subscription?.unsubscribe();
  }

  #reply(msg: Msg): void {
    msg.respond(encode({ incarnation: this.#incarnation, failedRfqs: this.#failedRfqs ?? 0 } satisfies DoorReply));
  }

  /** In order: held while markets before it are being written. */
  #arrive(msg: Msg): void {
    if (this.#held !== null) this.#held.push(msg);
    else this.#take(msg);
  }

  #take(msg: Msg): void {
    let envelope: ToShardNode;
    try {
      envelope = decode<ToShardNode>(msg.data);
    } catch {
      return this.options.log.warn('an RFQ envelope that is not msgpack: dropped');
    }
    if (typeof envelope?.gateway !== 'string' || !GATEWAY_NAME.test(envelope.gateway)) return;
    const gateway = this.#heard(envelope.gateway);
    if ('makers' in envelope && typeof envelope.makers === 'boolean') gateway.hasMakers = envelope.makers;
    switch (envelope.k) {
      case 'makers':
        // Answered at once: the gateway's new maker waits for it before it is told it is authenticated.
        return void msg.respond(encode(true));
      case 'hello':
        // Answered once the shard's start is done: until then the gateway cannot send it work.
        if (this.#failedRfqs === null) this.#helloWaiting.push(msg);
        else this.#reply(msg);
        return;
      case 'beat':
        // Unanswered during the start: to the gateway that is a shard it cannot reach, which is so.
        if (this.#failedRfqs !== null) this.#reply(msg);
        return;
      case 'markets':
        return this.#writeMarkets(envelope.markets);
      case 'batch':
        return this.#deliver(gateway, envelope.batch);
      default:
        this.options.log.warn('an RFQ envelope of no known kind: dropped');
    }
  }

  #heard(name: string): Gateway {
    let gateway = this.#gateways.get(name);
    if (gateway === undefined) {
      const subject = subjects.gatewayEvents(name, this.options.owner);
      gateway = { name, lastHeardMs: 0, hasMakers: true, out: new Batcher((events) => this.#publish(subject, events)) };
      this.#gateways.set(name, gateway);
    }
    gateway.lastHeardMs = this.options.nowMs();
    return gateway;
  }

  /** The gateway's batch, its call ids made the door's and its makers noted, then to the shard in its order. */
  #deliver(gateway: Gateway, batch: MainToShard[]): void {
    const forwarded: MainToShard[] = [];
    for (const message of batch) {
      // A gateway with another map than this node's (a stale one) sends calls this owner must not decide: it
      // would decide them against a book that does not hold the account (a create refused INSUFFICIENT_BALANCE
      // for a user funded elsewhere, or an assertion that stops the owner). Refused 503, nothing decided.
      if ((message.kind === 'create' || message.kind === 'money') && !this.#isOwnCall(message)) {
        this.options.log.warn(
          { gateway: gateway.name, kind: message.kind },
          "a call for another owner's account: refused (the gateway's map is not this node's)",
        );
        gateway.out.add(
          message.kind === 'create'
            ? { kind: 'created', callId: message.callId, outcome: MISROUTED }
            : { kind: 'money', callId: message.callId, outcome: MISROUTED },
        );
        continue;
      }
      // A call (every message with a call id): the door's own id while the shard has it (#route gives it back).
      if ('callId' in message) {
        const callId = this.#nextCallId++;
        this.#calls.set(callId, { gateway: gateway.name, callId: message.callId });
        message.callId = callId;
        forwarded.push(message);
        continue;
      }
      switch (message.kind) {
        case 'audience': {
          const merged = this.#answered(gateway.name, message.requestId, message.makerIds);
          if (merged !== null) forwarded.push(...merged);
          continue;
        }
        case 'quote':
        case 'decline':
        case 'quote_cancel':
        case 'last_look_response':
          this.#makerGateways.set(message.makerId, gateway.name);
          if (this.#holdForAudience(message)) continue;
          break;
        case 'declines':
          for (const makerId of message.makerIds) this.#makerGateways.set(makerId, gateway.name);
          if (this.#holdForAudience(message)) continue;
          break;
        case 'maker_disconnected':
          this.#makerGateways.delete(message.makerId);
          break;
      }
      forwarded.push(message);
    }
    if (forwarded.length > 0) this.#shard?.deliver(forwarded);
  }

  /**
   * Whether this owner decides the call: a create's or a debit's user, a credit's key, an owner call's deciding
   * name, every position a settlement names (its request id's first byte is the owner that created it). A
   * contest's collection and settlement name entries the contest's lane routed, as in one process.
   */
  #isOwnCall(message: Extract<MainToShard, { kind: 'create' | 'money' }>): boolean {
    const { owner, ownerOf } = this.options;
    if (message.kind === 'create') return ownerOf(userAccount(message.userId)) === owner;
    const { op } = message;
    switch (op.op) {
      case 'credit':
        return ownerOf(creditRef(op.idempotencyKey)) === owner;
      case 'reserve':
      case 'withdraw':
        return ownerOf(userAccount(op.userId)) === owner;
      case 'owner_call': {
        const name = decidingName(op.call);
        return name === null || ownerOf(name) === owner;
      }
      case 'settle_positions':
        return op.requestIds.every((requestId) => ownerByteOf(requestId) === owner);
      default:
        return true;
    }
  }

  /**
   * One gateway's audience of an RFQ: once none is awaited any more, the merged audience and what its makers
   * sent meanwhile, for the shard; else null.
   */
  #answered(gateway: string, requestId: string, makerIds: string[]): MainToShard[] | null {
    const audience = this.#audiences.get(requestId);
    if (audience === undefined || !audience.waiting.delete(gateway)) return null; // not sent it, or said already
    for (const makerId of makerIds) audience.makerIds.push(makerId);
    if (audience.waiting.size > 0) return null;
    return this.#merged(requestId, audience);
  }

  #merged(requestId: string, audience: Audience): MainToShard[] {
    this.#audiences.delete(requestId);
    return [{ kind: 'audience', requestId, makerIds: audience.makerIds }, ...audience.held];
  }

  /** A maker's message of an RFQ whose audience is still being gathered: held until it is (true). */
  #holdForAudience(message: Extract<MainToShard, { requestId: string }>): boolean {
    const audience = this.#audiences.get(message.requestId);
    if (audience === undefined) return false;
    audience.held.push(message);
    return true;
  }

  #route(event: ShardToMain): void {
    // A call's answer (every event with a call id): to the gateway that made the call, under its own id.
    if ('callId' in event) {
      const caller = this.#calls.get(event.callId);
      this.#calls.delete(event.callId);
      if (caller === undefined) return;
      if (event.kind === 'created' && event.outcome.ok && !event.outcome.value.isReplay) {
        this.#creators.set(event.outcome.value.result.request_id, caller.gateway);
      }
      event.callId = caller.callId;
      return this.#gateways.get(caller.gateway)?.out.add(event);
    }
    switch (event.kind) {
      case 'ready':
        this.#failedRfqs = event.failedRfqs;
        for (const msg of this.#helloWaiting.splice(0)) this.#reply(msg);
        return;
      case 'broadcast': {
        const requestId = event.message.request_id;
        const waiting = new Set<string>();
        for (const gateway of this.#gateways.values()) {
          if (!gateway.hasMakers) continue;
          waiting.add(gateway.name);
          gateway.out.add(event);
        }
        // No maker anywhere: the audience is empty at once, as one process's desk would answer it (after this
        // emit returns: the shard is not entered again from inside its own output).
        if (waiting.size === 0) queueMicrotask(() => this.#shard?.deliver([{ kind: 'audience', requestId, makerIds: [] }]));
        else this.#audiences.set(requestId, { waiting, makerIds: [], held: [] });
        return;
      }
      case 'to_maker': {
        const gateway = this.#makerGateways.get(event.makerId);
        if (gateway !== undefined) this.#gateways.get(gateway)?.out.add(event);
        return;
      }
      case 'terminal': {
        const gateway = this.#creators.get(event.result.request_id);
        this.#creators.delete(event.result.request_id);
        if (gateway !== undefined) this.#gateways.get(gateway)?.out.add(event);
        return;
      }
      case 'stats':
        for (const gateway of this.#gateways.values()) gateway.out.add(event);
        return;
      default: {
        const unknown: never = event;
        throw new Error(`unknown shard event ${JSON.stringify(unknown)}`);
      }
    }
  }

  /**
   * Markets as a gateway wrote them, into the node's LMDB before anything that came after them reaches the
   * shard (a fill checks its legs' markets; a settlement reads their outcomes).
   */
  #writeMarkets(markets: StoredMarket[]): void {
    const { store, onFailure } = this.options;
    this.#held = [];
    store
      .transact(() => putCopiedMarketsInTxn(store, markets))
      .then(
        () => {
          store.root.resetReadTxn();
          this.options.onMarkets(markets);
          const held = this.#held ?? [];
          this.#held = null;
          for (const msg of held) this.#arrive(msg);
        },
        // A store that cannot be written cannot decide fills on current markets: the node must stop.
        (error: unknown) => onFailure(error instanceof Error ? error : new Error(String(error))),
      );
  }

  /**
   * Gateways not heard from for GATEWAY_SILENCE_MS are gone: the audiences they still owe are complete
   * without them, and their calls' answers, their RFQs' ends and their makers' frames would reach nobody.
   */
  #forgetSilent(): void {
    const oldestMs = this.options.nowMs() - GATEWAY_SILENCE_MS;
    const gone = [...this.#gateways.values()].filter((gateway) => gateway.lastHeardMs < oldestMs).map((gateway) => gateway.name);
    if (gone.length === 0) return;
    for (const name of gone) this.#gateways.delete(name);
    this.options.log.info({ gateways: gone }, 'gateways gone silent: no longer awaited');
    const merged: MainToShard[] = [];
    for (const [requestId, audience] of this.#audiences) {
      for (const name of gone) audience.waiting.delete(name);
      if (audience.waiting.size > 0) continue;
      merged.push(...this.#merged(requestId, audience));
    }
    for (const [callId, caller] of this.#calls) if (gone.includes(caller.gateway)) this.#calls.delete(callId);
    for (const [requestId, gateway] of this.#creators) if (gone.includes(gateway)) this.#creators.delete(requestId);
    for (const [makerId, gateway] of this.#makerGateways) if (gone.includes(gateway)) this.#makerGateways.delete(makerId);
    if (merged.length > 0) this.#shard?.deliver(merged);
  }

  #publish(subject: string, events: ShardToMain[]): void {
    for (let from = 0; from < events.length; from += RFQ_MESSAGES_PER_PUBLISH) {
      try {
        this.options.nc.publish(subject, encode(events.slice(from, from + RFQ_MESSAGES_PER_PUBLISH)));
      } catch (error) {
        // A closed or draining connection: lost as on a broken link; the gateway's calls end 503 on its side.
        this.options.log.warn({ err: error, subject }, 'RFQ events could not be published');
        return;
      }
    }
  }
}
