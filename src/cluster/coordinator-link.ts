// A cluster gateway's link to its coordinator (docs/scaling.md, "The coordinator"; coordinator-door.ts is the
// other end). A gateway keeps nothing durable: it holds copies of what its RFQ path and maker sockets read
// synchronously, and forwards every other request.
// - Sessions: fetched as bearers are first seen, with their users' facts (session-copies.ts).
// - Makers' registry and their protection limits: every registered maker and every limit set, taken in pages
//   when the gateway joins (a maker's limits apply on every gateway its sockets use).
// - Markets: every market record, taken in pages when the gateway joins and written to the gateway's scratch
//   LMDB (what RFQ admission reads them from), as a shard node copies them.
// - Changes: the coordinator publishes what changed (revocations, makers, preferences, markets) on one
//   subject. Core NATS delivers a publisher's messages in order and at most once, losing what is on its way
//   when a connection breaks. So the copies are taken again, whole, when the link may have missed something:
//   at a disconnect from nats-server, at a new incarnation of the coordinator (its beat, or a change message
//   that names it), at a subscription error. While they are taken, changes are held and applied after the
//   pages, which may have been read before those changes committed.
// - Liveness: a beat every BEAT_MS; the coordinator's answers carry its incarnation.
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import type { StoredMarket } from '../contract/markets.js';
import type { Clock } from '../lib/clock.js';
import { errors } from '../lib/errors.js';
import type { MakerRecord } from '../records/makers.js';
import type {
  CoordinatorAnswer,
  CoordinatorCall,
  CoordinatorChange,
  ForwardedReply,
  ForwardedRequest,
  IssuedMakerSession,
  Page,
  ProtectionCopy,
  SessionCopy,
} from './coordinator-wire.js';
import { SessionCopies } from './session-copies.js';
import { decode, encode, subjects } from './wire.js';

const BEAT_MS = 250;
/** A call unanswered this long: the coordinator is out of reach (503 to the request that needed it). */
const CALL_TIMEOUT_MS = 2_000;
/** A forwarded request's deadline: the longest a coordinator route takes (the ledger check waits up to 10 s for its owners). */
const FORWARD_TIMEOUT_MS = 30_000;

export interface CoordinatorLinkOptions {
  nc: NatsConnection;
  adminToken: string;
  clock: Clock;
  log: Logger;
}

/** What the gateway does with what the link hears (boot/gateway-app.ts). */
export interface CopyListeners {
  /** Market records to write to the gateway's scratch LMDB, in order. */
  onMarkets(markets: StoredMarket[]): void;
  /** A maker no longer registered: its sockets here close. */
  onMakerRemoved(address: string): void;
  /** A maker's protection limits of one side, as the coordinator holds them, for this gateway's desk. */
  onProtection(copy: ProtectionCopy): void;
}

interface ChangeMessage {
  incarnation: string;
  changes: CoordinatorChange[];
}

export class CoordinatorLink {
  readonly sessions: SessionCopies;
  readonly #makers = new Map<string, MakerRecord>();
  readonly #changes: Subscription;
  #beat: NodeJS.Timeout | null = null;
  #listeners: CopyListeners | null = null;
  /** The coordinator's incarnation the copies were taken from; null until taken, and while taken again. */
  #incarnation: string | null = null;
  /** Changes heard while the copies are being taken, applied once they are. */
  #held: ChangeMessage[] | null = null;
  #isTaking = false;
  /** Something may have been missed while the copies were being taken: they are taken again after. */
  #isTakenAgainAfter = false;
  #isStopped = false;

  constructor(private readonly options: CoordinatorLinkOptions) {
    const { nc, log } = options;
    this.sessions = new SessionCopies(
      {
        session: (sessionKey) => this.#call<SessionCopy | null>({ k: 'session', sessionKey }),
        issueMaker: (address, ttlMs) => this.#call<IssuedMakerSession>({ k: 'issue-maker', address, ttlMs }),
        revoke: (sessionKey) => this.#call<null>({ k: 'revoke', sessionKey }).then(() => undefined),
      },
      options.clock,
      options.adminToken,
    );
    this.#changes = nc.subscribe(subjects.coordinatorChanges, {
      callback: (error, msg) => {
        if (error !== null) {
          log.warn({ err: error }, 'coordinator changes subscription error: copies taken again');
          return this.#takeAgain();
        }
        this.#hear(decode<ChangeMessage>(msg.data));
      },
    });
  }

  /** The registry's copy, as the maker handshake (MakerRegistry.has) and the dashboard's gauge (list) read it. */
  readonly registry = { has: (address: string) => this.#makers.has(address), list: () => [...this.#makers.values()] };

  /** Takes the copies (resolves once they are), then keeps them. */
  async start(listeners: CopyListeners): Promise<void> {
    this.#listeners = listeners;
    while (!this.#isStopped && !(await this.#takeCopies())) await new Promise((resolve) => setTimeout(resolve, BEAT_MS));
    this.#beat = setInterval(() => void this.#beatOnce(), BEAT_MS);
    void this.#watchConnection();
  }

  /** A request this gateway does not serve, answered by the coordinator's HTTP; 503 when it does not answer. */
  async forward(request: ForwardedRequest): Promise<ForwardedReply> {
    try {
      const reply = await this.options.nc.request(subjects.coordinatorHttp, encode(request), { timeout: FORWARD_TIMEOUT_MS });
      return decode<ForwardedReply>(reply.data);
    } catch {
      throw errors.coordinatorUnreachable();
    }
  }

  stop(): void {
    this.#isStopped = true;
    if (this.#beat !== null) clearInterval(this.#beat);
    this.#changes.unsubscribe();
  }

  async #call<T>(call: CoordinatorCall): Promise<T> {
    let answer: CoordinatorAnswer<T>;
    try {
      answer = decode<CoordinatorAnswer<T>>(
        (await this.options.nc.request(subjects.coordinatorCall, encode(call), { timeout: CALL_TIMEOUT_MS })).data,
      );
    } catch {
      throw errors.coordinatorUnreachable(); // no responders, no answer in time, a closed connection
    }
    if (!answer.ok) throw errors.coordinatorUnreachable();
    return answer.value;
  }

  /** Every copy, taken again: false when the coordinator did not answer (tried again a beat later). */
  async #takeCopies(): Promise<boolean> {
    if (this.#isTaking) return true;
    this.#isTaking = true;
    this.#incarnation = null;
    this.#held = [];
    try {
      const incarnation = await this.#call<string>({ k: 'hello' });
      this.sessions.forgetAll();
      const makers = await this.#pages<MakerRecord>((after) => ({ k: 'makers', after }));
      const markets = await this.#pages<StoredMarket>((afterKey) => ({ k: 'markets', afterKey }));
      const protection = await this.#pages<ProtectionCopy>((afterKey) => ({ k: 'protection', afterKey }));
      this.#replaceMakers(makers);
      for (const copy of protection) this.#listeners!.onProtection(copy);
      if (markets.length > 0) this.#listeners!.onMarkets(markets);
      this.#incarnation = incarnation;
      const held = this.#held;
      this.#held = null;
      for (const message of held) this.#hear(message);
      this.options.log.info({ makers: makers.length, markets: markets.length }, "coordinator's copies taken");
      return true;
    } catch {
      this.#held = null;
      return false;
    } finally {
      this.#isTaking = false;
      if (this.#isTakenAgainAfter) {
        this.#isTakenAgainAfter = false;
        this.#takeAgain();
      }
    }
  }

  async #pages<T>(callOf: (after: string | null) => CoordinatorCall): Promise<T[]> {
    const items: T[] = [];
    let after: string | null = null;
    do {
      const page: Page<T> = await this.#call<Page<T>>(callOf(after));
      items.push(...page.items);
      after = page.next;
    } while (after !== null);
    return items;
  }

  #replaceMakers(makers: readonly MakerRecord[]): void {
    const registered = new Set(makers.map((m) => m.address));
    for (const address of [...this.#makers.keys()]) {
      if (!registered.has(address)) this.#removeMaker(address);
    }
    for (const maker of makers) this.#makers.set(maker.address, maker);
  }

  #removeMaker(address: string): void {
    this.#makers.delete(address);
    this.sessions.forgetMaker(address);
    this.#listeners!.onMakerRemoved(address);
  }

  #hear(message: ChangeMessage): void {
    if (this.#held !== null) return void this.#held.push(message);
    if (this.#incarnation === null) return; // not joined: the copies taken next include it
    if (message.incarnation !== this.#incarnation) return this.#takeAgain();
    for (const change of message.changes) this.#apply(change);
  }

  #apply(change: CoordinatorChange): void {
    switch (change.k) {
      case 'revoked':
        return this.sessions.forgetSessions(change.sessionKeys);
      case 'maker-sessions-revoked':
        return this.sessions.forgetMaker(change.address);
      case 'preferences':
        return this.sessions.updatePreferences(change.userId, change.preferences);
      case 'markets':
        return this.#listeners!.onMarkets(change.markets);
      case 'protection':
        return this.#listeners!.onProtection(change);
      case 'maker':
        if (change.maker === null) return this.#removeMaker(change.address);
        this.#makers.set(change.address, change.maker);
    }
  }

  async #beatOnce(): Promise<void> {
    if (this.#incarnation === null) return;
    let incarnation: string | null = null;
    try {
      incarnation = await this.#call<string>({ k: 'hello' });
    } catch {
      return; // out of reach: what needs it is 503 meanwhile; a restart shows as a new incarnation
    }
    if (this.#incarnation !== null && incarnation !== this.#incarnation) this.#takeAgain();
  }

  async #watchConnection(): Promise<void> {
    for await (const status of this.options.nc.status()) {
      if (this.#isStopped) return;
      if (status.type === 'disconnect' || status.type === 'reconnect') this.#takeAgain();
    }
  }

  #takeAgain(): void {
    if (this.#isStopped) return;
    if (this.#isTaking) return void (this.#isTakenAgainAfter = true);
    this.options.log.warn("coordinator's copies taken again");
    const retry = async () => {
      while (!this.#isStopped && !(await this.#takeCopies())) await new Promise((resolve) => setTimeout(resolve, BEAT_MS));
    };
    void retry();
  }
}
