// Main thread. Bounds on request bodies that are still arriving. A body costs the
// service its bytes, its socket and, before this, an RFQ create's load-shedding place for as long as its
// client cared to trickle it (uWS's idle timeout, ~10 s): 2,100 sockets of one unfunded account, each
// sending `{` of a 300-byte create, kept every funded create out. Now:
//
// - bytes: every body in progress holds what it may still grow to (its Content-Length, or the route's limit
//   when chunked) against its IP's budget (an IPv6 caller's /64) and its network's (IPv4 /24, IPv6 /48,
//   caller-network.ts). A body that does not fit is 429 RATE_LIMITED and its connection closed: the limit is
//   that caller's own use, not the service's (a 503 would tell everyone the service is full).
// - creates (routes shed under load): at most `maxShedPerCaller` unread per principal (or per IP when there
//   is none) and `maxShedPerNetwork` per network, 429 past either; and each has `shedDeadlineMs` from its
//   first byte to its last, past which its connection is closed unanswered (nothing ran; the contract has
//   no code for a late body). Their load-shedding place is taken only when the handler starts (server.ts).
//
// A body that arrives with its headers (every client that is not trickling) is never looked at: the bodies
// begun in a turn are checked once, at the end of that turn (one setImmediate per turn, not per request), and
// only those still unread then are charged. So the RFQ hot path pays one array push per create.
import { callerNetwork, callerWideNetwork } from '../lib/caller-network.js';
import type { Exchange } from './exchange.js';

export interface UnreadBodiesOptions {
  /** Bytes of bodies in progress per IP (an IPv6 caller per /64) (PARLAYD_BODY_BYTES_IN_PROGRESS_PER_IP). */
  maxBytesPerIp: number;
  /** The same per IPv4 /24 or IPv6 /48 (PARLAYD_BODY_BYTES_IN_PROGRESS_PER_NETWORK). */
  maxBytesPerNetwork: number;
  /** Creates with an unread body per principal (PARLAYD_MAX_UNREAD_CREATES_PER_CALLER). */
  maxShedPerCaller: number;
  /** Creates with an unread body per IPv4 /24 or IPv6 /48 (PARLAYD_MAX_UNREAD_CREATES_PER_NETWORK). */
  maxShedPerNetwork: number;
  /** How long a create's body may take to arrive, from its request (PARLAYD_CREATE_BODY_TIMEOUT_MS). */
  shedDeadlineMs: number;
}

/** What the server does with a body these bounds refuse (429, then close) or whose deadline passed (close). */
export interface UnreadBodyActions<R> {
  refuse(exchange: Exchange, route: R): void;
  expire(exchange: Exchange): void;
}

/** One slow body's charges; released once, when the body is read, refused, expired or its client gone. */
export class BodyCharge {
  #isReleased = false;
  timer: NodeJS.Timeout | null = null;
  constructor(
    private readonly owner: UnreadBodies<unknown>,
    readonly ipKey: string,
    readonly networkKey: string,
    readonly bytes: number,
    /** The principal (or IP) key when the body is a create's, counted against maxShedPerCaller; else null. */
    readonly callerKey: string | null,
  ) {}

  release(): void {
    if (this.#isReleased) return;
    this.#isReleased = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.owner.uncharge(this);
  }
}

export class UnreadBodies<R> {
  readonly #options: UnreadBodiesOptions;
  readonly #actions: UnreadBodyActions<R>;
  // The bodies begun in this turn, as parallel arrays so that starting one allocates nothing.
  readonly #exchanges: Exchange[] = [];
  readonly #routes: R[] = [];
  readonly #declaredBytes: number[] = [];
  readonly #callerKeys: Array<string | null> = [];
  #isCheckScheduled = false;
  // Charged keys only: each entry is a slow body in progress, so each map is bounded by the open sockets.
  readonly #bytesByIp = new Map<string, number>();
  readonly #bytesByNetwork = new Map<string, number>();
  readonly #shedByCaller = new Map<string, number>();
  readonly #shedByNetwork = new Map<string, number>();

  constructor(options: UnreadBodiesOptions, actions: UnreadBodyActions<R>) {
    this.#options = options;
    this.#actions = actions;
  }

  /**
   * A body begins: `declaredBytes` is what it may grow to; `shedCallerKey` is set (the principal's key) for a
   * route shed under load, null otherwise. Checked at the end of this turn if it is still unread then.
   */
  begin(exchange: Exchange, route: R, declaredBytes: number, shedCallerKey: string | null): void {
    this.#exchanges.push(exchange);
    this.#routes.push(route);
    this.#declaredBytes.push(declaredBytes);
    this.#callerKeys.push(shedCallerKey);
    if (!this.#isCheckScheduled) {
      this.#isCheckScheduled = true;
      setImmediate(this.#checkTurn);
    }
  }

  /** Bytes of slow bodies charged to `ipKey` (tests and metrics). */
  bytesOfIp(ipKey: string): number {
    return this.#bytesByIp.get(ipKey) ?? 0;
  }

  readonly #checkTurn = (): void => {
    this.#isCheckScheduled = false;
    const count = this.#exchanges.length;
    for (let i = 0; i < count; i++) {
      const exchange = this.#exchanges[i]!;
      if (exchange.isBodyRead || exchange.isAborted || exchange.isAnswered) continue;
      this.#charge(exchange, this.#routes[i]!, this.#declaredBytes[i]!, this.#callerKeys[i]!);
    }
    this.#exchanges.length = 0;
    this.#routes.length = 0;
    this.#declaredBytes.length = 0;
    this.#callerKeys.length = 0;
  };

  #charge(exchange: Exchange, route: R, bytes: number, callerKey: string | null): void {
    const o = this.#options;
    // The request is neither aborted nor answered (checked above), so its response is still valid to read.
    const address = Buffer.from(exchange.res.getRemoteAddressAsText()).toString();
    const ipKey = callerNetwork(address);
    const networkKey = callerWideNetwork(address);
    const isOverBytes =
      (this.#bytesByIp.get(ipKey) ?? 0) + bytes > o.maxBytesPerIp ||
      (this.#bytesByNetwork.get(networkKey) ?? 0) + bytes > o.maxBytesPerNetwork;
    const isOverShed =
      callerKey !== null &&
      ((this.#shedByCaller.get(callerKey) ?? 0) >= o.maxShedPerCaller || (this.#shedByNetwork.get(networkKey) ?? 0) >= o.maxShedPerNetwork);
    if (isOverBytes || isOverShed) return this.#actions.refuse(exchange, route);
    const charge = new BodyCharge(this as UnreadBodies<unknown>, ipKey, networkKey, bytes, callerKey);
    add(this.#bytesByIp, ipKey, bytes);
    add(this.#bytesByNetwork, networkKey, bytes);
    if (callerKey !== null) {
      add(this.#shedByCaller, callerKey, 1);
      add(this.#shedByNetwork, networkKey, 1);
      const leftMs = Math.max(0, o.shedDeadlineMs - (performance.now() - exchange.startMs));
      charge.timer = setTimeout(() => this.#actions.expire(exchange), leftMs);
    }
    exchange.bodyCharge = charge;
  }

  /** Called by BodyCharge.release only. */
  uncharge(charge: BodyCharge): void {
    add(this.#bytesByIp, charge.ipKey, -charge.bytes);
    add(this.#bytesByNetwork, charge.networkKey, -charge.bytes);
    if (charge.callerKey !== null) {
      add(this.#shedByCaller, charge.callerKey, -1);
      add(this.#shedByNetwork, charge.networkKey, -1);
    }
  }
}

/** Adds `delta` to `key`'s count, dropping the key at 0 so the map holds only callers with a body in progress. */
function add(map: Map<string, number>, key: string, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  if (next === 0) map.delete(key);
  else map.set(key, next);
}
