// Main thread, for the maker gateway (gateway.ts). A socket's life before and at the end of its session
// (interface.md "Market-maker WebSocket flow", contract section 7): the challenge on open, the auth deadline,
// the auth_response (checked by handshake.ts, recovered on the verify pool), the session, its expiry, and the
// bookkeeping of sockets waiting for auth (pending-auth.ts) with the eviction that makes room among them.
// handshake.ts decides; this module acts on the socket through the sender.
//
// Bounds: sockets waiting for auth <= maxPending (pending-auth.ts), each for at most mmAuthTimeoutMs
// (mmPressureAuthTimeoutMs when more than half the places are taken); one timer per pending socket and one
// per session.
import type { Logger } from 'pino';
import type { Timer, TimerClock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import type { Sessions } from '../auth/sessions.js';
import { isPoolOverloaded, type VerifyPool } from '../crypto/verify-pool.js';
import type { AuthFailureReason } from '../contract/mm.js';
import { makerAddressOf, type Connection, type MakerId, type Verifying } from './connection.js';
import { AUTH_REFUSAL_DETAILS, challengeMessage, checkAuthResponse, createChallenge, verifySigner, type Challenge } from './handshake.js';
import type { GatewayMetrics } from './metrics.js';
import { PendingAuth } from './pending-auth.js';
import type { MakerRegistry } from './registry.js';
import type { MakerStreams } from './resume.js';
import type { MakerSender } from './sender.js';

export interface MakerAuthenticatorDeps {
  config: Pick<
    Config,
    | 'mmDomainTag'
    | 'mmAuthTimeoutMs'
    | 'mmChallengeTtlMs'
    | 'mmSessionTtlMs'
    | 'mmMaxPendingAuth'
    | 'mmMaxPendingAuthPerIp'
    | 'mmMaxPendingAuthPerNetwork'
    | 'mmPressureAuthTimeoutMs'
    | 'mmMaxSocketsPerMaker'
    | 'cluster'
  >;
  /** Bound on sockets connected but not yet authenticated (config.mmMaxPendingAuth unless given). */
  maxPendingAuth: number | undefined;
  /** "Now" for the challenge and the session, and the timers of the auth deadline and the session's expiry. */
  clock: TimerClock;
  log: Logger;
  registry: Pick<MakerRegistry, 'has'>;
  sessions: Pick<Sessions, 'issueMaker' | 'revoke'>;
  verifyPool: Pick<VerifyPool, 'recoverPersonalSigner'>;
  /** Awaited last before the socket is authenticated: nothing awaits between it and auth_result (gateway.ts). */
  beforeAuthenticated?: () => Promise<void>;
  metrics: GatewayMetrics | null;
  sender: MakerSender;
  /** The gateway's authenticated connections: a socket joins them here, and leaves in the gateway's close handler. */
  authenticated: Map<MakerId, Connection>;
  streams: Pick<MakerStreams, 'open'>;
}

export class MakerAuthenticator {
  /** Sockets awaiting auth: counts per address and network, and their order. */
  readonly pending: PendingAuth<Connection>;
  #makerSeq = 0;

  constructor(private readonly deps: MakerAuthenticatorDeps) {
    const { config } = deps;
    this.pending = new PendingAuth({
      maxPending: deps.maxPendingAuth ?? config.mmMaxPendingAuth,
      maxPerAddress: config.mmMaxPendingAuthPerIp,
      maxPerNetwork: config.mmMaxPendingAuthPerNetwork,
    });
  }

  /** A socket just opened: it takes a pending place, its challenge and its auth deadline. */
  start(conn: Connection): void {
    const { config, clock, sender } = this.deps;
    // The upgrade made room (uWS opens the socket inside res.upgrade); checked again so that the bound holds
    // even if an open ever came apart from its upgrade.
    if (this.pending.isFull && !this.evictOldestIdle()) return sender.fail(conn, 'OVERLOADED');
    this.pending.add(conn);
    const challenge = createChallenge(config.mmDomainTag, clock.nowMs(), config.mmChallengeTtlMs);
    // interface.md Limits: auth must complete within 10 s of connecting, whatever happens meanwhile. Under
    // pressure (more than half the places taken, this socket included) a new socket gets less: a maker
    // answers in milliseconds, and idle sockets then give their places back sooner.
    const deadlineMs = this.pending.isUnderPressure
      ? Math.min(config.mmAuthTimeoutMs, config.mmPressureAuthTimeoutMs)
      : config.mmAuthTimeoutMs;
    const authTimer = clock.setTimer(() => sender.fail(conn, 'AUTH_TIMEOUT'), deadlineMs);
    conn.auth = { phase: 'awaiting_response', challenge, authTimer };
    sender.send(conn, challengeMessage(challenge));
  }

  /** A message before authentication: only the one auth_response is accepted. */
  onMessage(conn: Connection, value: Record<string, unknown> | null): void {
    const { sender } = this.deps;
    if (value === null || value['type'] !== 'auth_response') return sender.fail(conn, 'NOT_AUTHENTICATED');
    const awaiting = conn.auth;
    if (awaiting.phase !== 'awaiting_response') return sender.sendError(conn, 'AUTH_IN_PROGRESS');
    // One challenge per connection, used once (contract section 7): a bad response closes the socket here,
    // a good one leaves the phase that holds the challenge.
    const { challenge } = awaiting;
    const checked = checkAuthResponse(challenge, value, this.deps.clock.nowMs());
    if (!checked.ok) return this.#rejectAuth(conn, checked.reason, checked.detail);
    const verifying: Verifying = { phase: 'verifying', address: checked.address, authTimer: awaiting.authTimer };
    conn.auth = verifying;
    this.#verify(conn, verifying, challenge, checked).catch((err: unknown) => {
      if (isPoolOverloaded(err)) return sender.fail(conn, 'OVERLOADED');
      this.deps.log.error({ err, connId: conn.connId }, 'maker auth failed unexpectedly');
      sender.close(conn, 'INTERNAL');
    });
  }

  /** The socket closed: its pending place and its timers go. */
  end(conn: Connection): void {
    const auth = conn.auth;
    // A session timer that already fired (the expiry closed the socket) clears as nothing.
    if (auth.phase === 'authenticated') this.deps.clock.clearTimer(auth.sessionTimer);
    else if (auth.phase !== 'opening') this.#leavePending(conn, auth.authTimer);
  }

  /** Closes the oldest pending socket still awaiting its auth_response (AUTH_EVICTED); false when none is. */
  evictOldestIdle(): boolean {
    const conn = this.pending.oldestIdle();
    if (conn === null) return false;
    this.deps.metrics?.authTotal.inc({ result: 'AUTH_EVICTED' });
    this.deps.sender.fail(conn, 'AUTH_EVICTED'); // closes at once: the close handler takes it out of the pending set
    return true;
  }

  async #verify(
    conn: Connection,
    verifying: Verifying,
    challenge: Challenge,
    checked: { address: string; signature65: Uint8Array },
  ): Promise<void> {
    const { registry, sessions } = this.deps;
    const isSigner = await verifySigner(this.deps.verifyPool, challenge, checked);
    if (conn.isClosed) return;
    if (!isSigner) return this.#rejectAuth(conn, 'INVALID_SIGNATURE', AUTH_REFUSAL_DETAILS.notSigner);
    // Registry after the signature, so only the key's owner learns whether an address is registered.
    if (!registry.has(checked.address)) return this.#rejectAuth(conn, 'UNKNOWN_MAKER', AUTH_REFUSAL_DETAILS.notRegistered);
    // Before the session is made (a durable write), and again after it: two sockets verified together must
    // not both take the last place.
    if (this.#isAtSocketLimit(checked.address)) return this.deps.sender.fail(conn, 'TOO_MANY_SOCKETS');
    const session = await sessions.issueMaker(checked.address, this.deps.config.mmSessionTtlMs);
    // The last wait: from its end to auth_result everything is synchronous, so a cluster's shard doors know of
    // this process's makers before this one can see an RFQ's absence (an `rfq` created later reaches it).
    if (this.deps.beforeAuthenticated !== undefined) await this.deps.beforeAuthenticated();
    // The socket may have closed, or the maker been removed, while the session was being made durable: the
    // token was never handed out, so it is revoked rather than left valid.
    if (conn.isClosed || !registry.has(checked.address)) {
      await sessions.revoke(session.sessionKey);
      if (!conn.isClosed) this.#rejectAuth(conn, 'UNKNOWN_MAKER', AUTH_REFUSAL_DETAILS.removedMeanwhile);
      return;
    }
    if (this.#isAtSocketLimit(checked.address)) {
      await sessions.revoke(session.sessionKey);
      if (!conn.isClosed) this.deps.sender.fail(conn, 'TOO_MANY_SOCKETS');
      return;
    }
    this.#authenticate(conn, verifying, session);
  }

  /**
   * The address has its whole share of authenticated sockets (each socket multiplied what one
   * maker could make an RFQ hold). A scan of the authenticated sockets, once per login of a registered maker.
   */
  #isAtSocketLimit(address: string): boolean {
    let count = 0;
    for (const conn of this.deps.authenticated.values()) if (makerAddressOf(conn) === address) count++;
    return count >= this.deps.config.mmMaxSocketsPerMaker;
  }

  #authenticate(conn: Connection, verifying: Verifying, session: { token: string; sessionKey: string; expiresAtMs: number }): void {
    const { token: sessionToken, expiresAtMs } = session;
    const { address } = verifying;
    this.#leavePending(conn, verifying.authTimer);
    // A connection's id is unique in the process; in a cluster, across gateways too (an RFQ shard on a shard
    // node tells connections of every gateway apart by it: cluster/shard-door.ts).
    const gateway = this.deps.config.cluster === null ? '' : `${this.deps.config.cluster.nodeId}-`;
    const makerId = `mk-${gateway}${(++this.#makerSeq).toString(36)}`;
    const { clock } = this.deps;
    const sessionTimer = clock.setTimer(() => this.#expireSession(conn, expiresAtMs), expiresAtMs - clock.nowMs());
    this.deps.metrics?.authTotal.inc({ result: 'success' });
    this.deps.log.info({ connId: conn.connId, makerId, address, remote: conn.remote }, 'maker authenticated');
    // The last message not numbered: sent while the socket is still verifying (sender.ts numbers only an
    // authenticated socket's). Every message after it is: the stream starts here, at seq 1.
    this.deps.sender.send(conn, { type: 'auth_result', success: true, session_token: sessionToken, expires_at_ms: expiresAtMs });
    const stream = this.deps.streams.open(conn, makerId, session.sessionKey, address);
    conn.auth = { phase: 'authenticated', makerId, address, stream, sessionTimer };
    this.deps.authenticated.set(makerId, conn);
  }

  #expireSession(conn: Connection, expiresAtMs: number): void {
    this.deps.sender.send(conn, { type: 'AUTH_EXPIRED', expired_at_ms: expiresAtMs });
    this.deps.sender.close(conn, 'AUTH_EXPIRED');
  }

  #rejectAuth(conn: Connection, reason: AuthFailureReason, detail: string): void {
    this.deps.metrics?.authTotal.inc({ result: reason });
    // Debug only: anyone can cause this at will. The close below counts it for the periodic summary.
    this.deps.log.debug({ connId: conn.connId, reason, detail, address: makerAddressOf(conn), remote: conn.remote }, 'maker auth refused');
    this.deps.sender.send(conn, { type: 'auth_result', success: false, reason });
    this.deps.sender.close(conn, reason);
  }

  #leavePending(conn: Connection, authTimer: Timer): void {
    this.deps.clock.clearTimer(authTimer);
    this.pending.remove(conn);
  }
}
