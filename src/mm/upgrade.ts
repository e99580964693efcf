// Main thread, for the maker gateway (gateway.ts). Whether an HTTP upgrade to the maker socket becomes a socket
// (contract section 2 for the refusals): not while the service closes, not faster than the
// caller's HTTP rate limit, not past its address's or network's share of the places for sockets awaiting
// auth (pending-auth.ts), and, every place taken, only when the longest-waiting idle socket makes room.
// A refusal is an HTTP answer with Retry-After, counted for the periodic summary rather than logged each.
import type { HttpRequest, HttpResponse, us_socket_context_t } from 'uWebSockets.js';
import type { Clock } from '../lib/clock.js';
import { ApiError, errors } from '../lib/errors.js';
import { callerNetwork, callerWideNetwork } from '../lib/caller-network.js';
import { anonymousKey, type RateLimiter } from '../lib/rate-limit.js';
import type { LogCounts } from '../lib/log-counts.js';
import { Connection, type UserData } from './connection.js';
import type { PendingAuth } from './pending-auth.js';

// Upgrade refusals, serialized once: contract errors (section 2) with their codes from errors.ts.
const OVERLOADED_BODY = JSON.stringify(errors.makerAuthPendingFull().toBody());
const RATE_LIMITED_BODY = JSON.stringify(errors.makerAuthPendingFromAddress().toBody());
const UPGRADE_RATE_LIMITED_BODY = JSON.stringify(new ApiError('RATE_LIMITED').toBody());
const NETWORK_RATE_LIMITED_BODY = JSON.stringify(errors.makerAuthPendingFromNetwork().toBody());

export interface UpgradeGateDeps {
  /**
   * The gateway's clock: the time a token is taken from the bucket at. The HTTP server charges the same
   * buckets at Date.now(), so the two agree on the system clock, the one the service runs on.
   */
  clock: Clock;
  /** The HTTP per-IP token bucket (absent: upgrades are not rate limited). */
  rateLimiter: Pick<RateLimiter, 'isEnabled' | 'take'> | undefined;
  pending: Pick<PendingAuth, 'refusalFor' | 'isFull'>;
  /** Closes the oldest pending socket still awaiting its auth_response; false when none is. */
  evictOldestIdle: () => boolean;
  /** True once the gateway is closing: every upgrade is refused. */
  isClosing: () => boolean;
  refusals: LogCounts;
}

export class UpgradeGate {
  #connSeq = 0;

  constructor(private readonly deps: UpgradeGateDeps) {}

  /** uWS's `upgrade` handler: upgrades `res` to a socket with a new Connection, or answers with a refusal. */
  upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    if (this.deps.isClosing()) return this.#refuse(res, 'UPGRADE_CLOSING', '503 Service Unavailable', OVERLOADED_BODY);
    // Only valid inside this handler (uWS): the address is read here and kept on the connection.
    const remote = Buffer.from(res.getRemoteAddressAsText()).toString();
    const remoteNetwork = callerNetwork(remote);
    const remoteWideNetwork = callerWideNetwork(remote);
    // One address (an IPv6 /64), or one block (an IPv4 /24, an IPv6 /48), may not hold the service-wide
    // places alone. A limit per caller is 429 RATE_LIMITED in contract section 2; a place frees when a
    // socket authenticates or closes, at the latest after the auth deadline, so a retry after 1 s is
    // reasonable. These come before eviction, so a caller over its own limit never evicts anyone.
    // A maker login costs a signature recovery: the upgrade spends a token of the caller's HTTP bucket,
    // so sockets cannot be opened faster than any other anonymous request may be made.
    const limiter = this.deps.rateLimiter;
    if (limiter?.isEnabled === true) {
      const retryAfterS = limiter.take(anonymousKey(remoteNetwork), this.deps.clock.nowMs());
      if (retryAfterS > 0)
        return this.#refuse(res, 'UPGRADE_RATE_LIMITED', '429 Too Many Requests', UPGRADE_RATE_LIMITED_BODY, retryAfterS);
    }
    const refusal = this.deps.pending.refusalFor(remoteNetwork, remoteWideNetwork);
    if (refusal === 'PER_ADDRESS') return this.#refuse(res, 'UPGRADE_PER_IP', '429 Too Many Requests', RATE_LIMITED_BODY);
    if (refusal === 'PER_NETWORK') return this.#refuse(res, 'UPGRADE_PER_NETWORK', '429 Too Many Requests', NETWORK_RATE_LIMITED_BODY);
    // Every place taken: the longest-waiting socket that has not answered its challenge makes room (a
    // maker answers within milliseconds of its challenge, so the oldest idle socket is the least likely
    // to be one). Only when every pending socket is being verified is the newcomer refused.
    if (this.deps.pending.isFull && !this.deps.evictOldestIdle()) {
      return this.#refuse(res, 'UPGRADE_OVERLOADED', '503 Service Unavailable', OVERLOADED_BODY);
    }
    const userData: UserData = { conn: new Connection(++this.#connSeq, remote, remoteNetwork, remoteWideNetwork) };
    // uWS opens the socket (the gateway's open handler) inside this call, so the count is right for the next upgrade.
    res.upgrade(
      userData,
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  }

  /** Answers an upgrade with an error instead of a socket; Retry-After 1 s unless given (the refusals clear quickly). */
  #refuse(res: HttpResponse, kind: string, statusLine: string, body: string, retryAfterS = 1): void {
    this.deps.refusals.count(kind);
    res.cork(() => {
      res.writeStatus(statusLine).writeHeader('Retry-After', String(retryAfterS)).writeHeader('Content-Type', 'application/json');
      res.end(body);
    });
  }
}
