// Main thread. The market-maker socket (interface.md "Authentication", "Events", "Limits"; contract
// section 7) on the service's uWS app: the challenge-response handshake, the auth / challenge / session
// deadlines, the JSON heartbeat, fan-out of RFQs to every authenticated maker (a numbered frame per socket,
// written by socket-writer.ts) and hand-off of maker messages to the RFQ engine's dispatcher. This class owns
// every maker connection and its timers; nothing else touches a maker socket.
//
// Bounds: frames <= 16 KiB; sockets waiting for auth <= maxPendingAuth in all, <= mmMaxPendingAuthPerIp
// from one remote address and <= mmMaxPendingAuthPerNetwork from one IPv4 /24 or IPv6 /48, each for at most
// mmAuthTimeoutMs (mmPressureAuthTimeoutMs when more than half the places are taken);
// per-connection send buffer <= mmMaxBufferedBytes (then the maker is closed with SLOW_CONSUMER, never
// buffered further); one timer per pending socket and one per session, one heartbeat interval in all.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import uWS, { type HttpResponse, type TemplatedApp, type WebSocket, type WebSocketBehavior } from 'uWebSockets.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Sessions } from '../auth/sessions.js';
import { assertDomainTag } from '../crypto/maker-challenge.js';
import { ApiError } from '../errors.js';
import { isPoolOverloaded, type VerifyPool } from '../crypto/verify-pool.js';
import type {
  AuthFailureReason,
  DeclineMessage,
  LastLookResponseMessage,
  QuoteCancelMessage,
  QuoteMessage,
  ServerToMakerMessage,
} from '../schemas/mm.js';
import type { ResumeMessage } from '../schemas/mm-stream.js';
import { MakerStreams, type StreamSlot } from './resume.js';
import { ALWAYS_REPLAY, NEVER_REPLAY, bodyOf } from './stream.js';
import type { MakerStats } from './stats.js';
import { challengeMessage, checkAuthResponse, createChallenge, verifySigner, type Challenge } from './handshake.js';
import { decodeFrame, validateMakerMessage } from './inbound.js';
import {
  CLOSE,
  MAKER_ERRORS,
  MAX_DETACHED_STREAMS,
  MAX_MAKER_FRAME_BYTES,
  MAX_UNANSWERED_HEARTBEATS,
  type CloseCause,
  type MakerErrorCode,
} from './protocol.js';
import type { MakerRegistry } from './registry.js';
import { Connection, type MakerId, type UserData } from './connection.js';
import { PendingAuth } from './pending-auth.js';
import { callerNetwork, callerWideNetwork } from '../http/caller-network.js';
import { anonymousKey, type RateLimiter } from '../http/rate-limit.js';
import { LogCounts } from '../log-counts.js';
import { registerGatewayMetrics, type GatewayMetrics } from './metrics.js';
import { HARD_BACKPRESSURE_MARGIN_BYTES, SocketWriter } from './socket-writer.js';

export type { MakerId };

/**
 * The RFQ engine's side. Every method is called synchronously from the uWS callback that caused it (no
 * extra hop), on the main thread. Messages are already validated; quote.last_look is always set (default
 * false). onMakerDisconnected is called once for every authenticated connection that closes, whatever the
 * reason (including a close caused by send/broadcast, which is reported right after that call returns).
 */
export interface MakerDispatcher {
  onQuote(makerId: MakerId, address: string, msg: QuoteMessage): void;
  onDecline(makerId: MakerId, address: string, msg: DeclineMessage): void;
  onQuoteCancel(makerId: MakerId, address: string, msg: QuoteCancelMessage): void;
  onLastLookResponse(makerId: MakerId, address: string, msg: LastLookResponseMessage): void;
  /** quote_cancel_all: every standing quote of the maker's address (issue 22). */
  onQuoteCancelAll(makerId: MakerId, address: string): void;
  onProtectionReset(makerId: MakerId, address: string): void;
  /**
   * A resume replayed these rfqs on `makerId`'s connection: it may now quote them (it joins their audience).
   * Called before the replayed frames are written, so a quote on them can only come after.
   */
  onRfqsReplayed(makerId: MakerId, requestIds: string[]): void;
  onMakerDisconnected(makerId: MakerId, address: string): void;
}

export interface MakerGatewayDeps {
  config: Pick<
    Config,
    | 'mmDomainTag'
    | 'mmAuthTimeoutMs'
    | 'mmChallengeTtlMs'
    | 'mmHeartbeatMs'
    | 'mmSessionTtlMs'
    | 'mmMaxBufferedBytes'
    | 'mmMaxPendingAuthPerIp'
    | 'mmMaxPendingAuth'
    | 'mmMaxPendingAuthPerNetwork'
    | 'mmPressureAuthTimeoutMs'
    | 'mmRefusalLogIntervalMs'
    | 'mmReplayMs'
    | 'mmReplayMaxMessages'
  >;
  clock: Clock;
  log: Logger;
  registry: Pick<MakerRegistry, 'has'>;
  sessions: Pick<Sessions, 'issueMaker' | 'revoke' | 'resolve'>;
  verifyPool: Pick<VerifyPool, 'recoverPersonalSigner'>;
  /** Where the maker metrics are registered (the service's prom-client registry). */
  metrics?: Registry;
  /** Bound on sockets connected but not yet authenticated (config.mmMaxPendingAuth unless given). */
  maxPendingAuth?: number;
  /**
   * The HTTP per-IP token bucket: an upgrade is an anonymous request and spends a token of its network's
   * bucket, as any HTTP request without a session does (absent: upgrades are not rate limited).
   */
  rateLimiter?: Pick<RateLimiter, 'isEnabled' | 'take'>;
  /** Counts each rfq written to a maker's socket (GET /v1/mm/stats rfqs_received; absent: not counted). */
  stats?: Pick<MakerStats, 'count'>;
}

// Upgrade refusals, serialized once: contract errors (section 2) with their codes from errors.ts.
const OVERLOADED_BODY = JSON.stringify(new ApiError('OVERLOADED', 'too many maker sockets awaiting authentication').toBody());
const RATE_LIMITED_BODY = JSON.stringify(
  new ApiError('RATE_LIMITED', 'too many maker sockets awaiting authentication from this address').toBody(),
);
const UPGRADE_RATE_LIMITED_BODY = JSON.stringify(new ApiError('RATE_LIMITED').toBody());
const NETWORK_RATE_LIMITED_BODY = JSON.stringify(
  new ApiError('RATE_LIMITED', 'too many maker sockets awaiting authentication from this network').toBody(),
);

export class MakerGateway {
  readonly #deps: MakerGatewayDeps;
  readonly #softLimitBytes: number;
  readonly #writer: SocketWriter;
  readonly #all = new Set<Connection>();
  readonly #authenticated = new Map<MakerId, Connection>();
  /** Every authenticated connection's stream, and those of closed ones still held for a resume (resume.ts). */
  readonly #streams: MakerStreams;
  #app: TemplatedApp | null = null;
  #dispatcher: MakerDispatcher | null = null;
  /** Sockets awaiting auth: counts per address and network, and their order (pending-auth.ts). */
  readonly #pending: PendingAuth;
  #connSeq = 0;
  #makerSeq = 0;
  #isClosing = false;
  #heartbeatTimer: NodeJS.Timeout | null = null;
  readonly #metrics: GatewayMetrics | null;
  /** Refused upgrades and sockets closed before auth, logged as counts per interval (log-counts.ts). */
  readonly #refusals: LogCounts;

  constructor(deps: MakerGatewayDeps) {
    assertDomainTag(deps.config.mmDomainTag);
    this.#deps = deps;
    this.#pending = new PendingAuth({
      maxPending: deps.maxPendingAuth ?? deps.config.mmMaxPendingAuth,
      maxPerAddress: deps.config.mmMaxPendingAuthPerIp,
      maxPerNetwork: deps.config.mmMaxPendingAuthPerNetwork,
    });
    this.#softLimitBytes = deps.config.mmMaxBufferedBytes;
    this.#writer = new SocketWriter(this.#softLimitBytes, (conn) => this.#close(conn, 'SLOW_CONSUMER'));
    this.#streams = new MakerStreams({
      replayMs: deps.config.mmReplayMs,
      maxMessages: deps.config.mmReplayMaxMessages,
      maxDetached: MAX_DETACHED_STREAMS,
    });
    this.#refusals = new LogCounts(deps.log, 'maker sockets refused or closed before authentication', deps.config.mmRefusalLogIntervalMs);
    this.#metrics =
      deps.metrics === undefined
        ? null
        : registerGatewayMetrics(deps.metrics, { connected: () => this.connectedCount, pending: () => this.#pending.count });
  }

  setDispatcher(d: MakerDispatcher): void {
    this.#dispatcher = d;
  }

  /**
   * Remembers the app (broadcast publishes on it) and returns the socket behavior to register with
   * `app.ws(MAKER_WS_PATH, gateway.attach(app))`. Starts the heartbeat.
   */
  attach(app: TemplatedApp): WebSocketBehavior<UserData> {
    if (this.#app !== null) throw new Error('MakerGateway.attach called twice'); // a wiring bug
    this.#app = app;
    this.#heartbeatTimer = setInterval(() => this.#tickHeartbeat(), this.#deps.config.mmHeartbeatMs);
    this.#heartbeatTimer.unref();
    return {
      maxPayloadLength: MAX_MAKER_FRAME_BYTES,
      // Liveness is our JSON heartbeat (interface.md), not uWS's idle timer or protocol pings.
      idleTimeout: 0,
      sendPingsAutomatically: false,
      compression: uWS.DISABLED,
      maxBackpressure: this.#softLimitBytes + HARD_BACKPRESSURE_MARGIN_BYTES,
      closeOnBackpressureLimit: 1,
      upgrade: (res, req, context) => {
        if (this.#isClosing) return this.#refuseUpgrade(res, 'UPGRADE_CLOSING', '503 Service Unavailable', OVERLOADED_BODY);
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
        const limiter = this.#deps.rateLimiter;
        if (limiter?.isEnabled === true) {
          const retryAfterS = limiter.take(anonymousKey(remoteNetwork), Date.now());
          if (retryAfterS > 0) return this.#refuseUpgrade(res, 'UPGRADE_RATE_LIMITED', '429 Too Many Requests', UPGRADE_RATE_LIMITED_BODY, retryAfterS);
        }
        const refusal = this.#pending.refusalFor(remoteNetwork, remoteWideNetwork);
        if (refusal === 'PER_ADDRESS') return this.#refuseUpgrade(res, 'UPGRADE_PER_IP', '429 Too Many Requests', RATE_LIMITED_BODY);
        if (refusal === 'PER_NETWORK') return this.#refuseUpgrade(res, 'UPGRADE_PER_NETWORK', '429 Too Many Requests', NETWORK_RATE_LIMITED_BODY);
        // Every place taken: the longest-waiting socket that has not answered its challenge makes room (a
        // maker answers within milliseconds of its challenge, so the oldest idle socket is the least likely
        // to be one). Only when every pending socket is being verified is the newcomer refused.
        if (this.#pending.isFull && !this.#evictOldestIdle()) {
          return this.#refuseUpgrade(res, 'UPGRADE_OVERLOADED', '503 Service Unavailable', OVERLOADED_BODY);
        }
        const userData: UserData = { conn: new Connection(++this.#connSeq, remote, remoteNetwork, remoteWideNetwork) };
        // uWS opens the socket (#onOpen) inside this call, so the count is right for the next upgrade.
        res.upgrade(userData, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
      },
      open: (ws) => this.#onOpen(ws),
      message: (ws, frame, isBinary) => this.#onMessage(ws.getUserData().conn, frame, isBinary),
      close: (ws, code) => this.#onClose(ws.getUserData().conn, code),
    };
  }

  /**
   * Sends one message to every authenticated maker; returns how many it went to. Serialized once; each socket
   * gets it behind its own seq (a concatenation), so this is a loop of sends, not one uWS publish.
   */
  broadcast(message: ServerToMakerMessage): number {
    if (this.#authenticated.size === 0) return 0;
    const body = bodyOf(JSON.stringify(message));
    const deadlineMs = replayDeadlineOf(message);
    const nowMs = this.#deps.clock.nowMs();
    const stats = message.type === 'rfq' ? this.#deps.stats : undefined;
    let count = 0;
    for (const conn of this.#authenticated.values()) {
      if (conn.isSlow || conn.stream === null) continue;
      count++;
      stats?.count(conn.address!, 'rfqsReceived', nowMs);
      this.#writer.queue(conn, conn.stream.stream.append(body, nowMs, deadlineMs));
    }
    return count;
  }

  /** Sends to one connection; false if it is gone (or is being closed as a slow consumer). */
  send(makerId: MakerId, message: ServerToMakerMessage): boolean {
    const conn = this.#authenticated.get(makerId);
    return conn !== undefined && this.#send(conn, message);
  }

  /**
   * Frames already serialized (by an RFQ shard) to one connection, corked (SocketWriter.writeAll); false
   * when it is gone or too far behind.
   */
  sendFrames(makerId: MakerId, frames: readonly string[]): boolean {
    // The stream, not the connection: a closed connection's frames are kept for its resume, and a resumed
    // one's go to the connection that resumed it (resume.ts).
    const slot = this.#streams.of(makerId);
    if (slot === undefined) return false;
    const nowMs = this.#deps.clock.nowMs();
    const stamped = frames.map((frame) => slot.stream.append(bodyOf(frame), nowMs, ALWAYS_REPLAY));
    return slot.conn !== null && this.#writer.writeAll(slot.conn, stamped);
  }

  /** The connection ids of `address`'s authenticated connections. */
  makerIdsOf(address: string): MakerId[] {
    const ids: MakerId[] = [];
    for (const [makerId, conn] of this.#authenticated) if (conn.address === address) ids.push(makerId);
    return ids;
  }

  /** The address behind a connection id, live or held for a resume. */
  addressOf(makerId: MakerId): string | null {
    return this.#streams.of(makerId)?.stream.address ?? null;
  }

  /** Sends to every authenticated connection of `address` (protection_tripped). */
  sendToAddress(address: string, message: ServerToMakerMessage): void {
    for (const conn of this.#authenticated.values()) if (conn.address === address) this.#send(conn, message);
  }

  /** Authenticated connections, less any being closed as a slow consumer. */
  connectedMakerIds(): MakerId[] {
    const ids: MakerId[] = [];
    for (const [makerId, conn] of this.#authenticated) if (!conn.isSlow) ids.push(makerId);
    return ids;
  }

  get connectedCount(): number {
    let count = 0;
    for (const conn of this.#authenticated.values()) if (!conn.isSlow) count++;
    return count;
  }

  /** Sockets connected and not yet authenticated. */
  get pendingCount(): number {
    return this.#pending.count;
  }

  /** Authenticated connections of one maker address. */
  connectionsOf(address: string): number {
    let count = 0;
    for (const conn of this.#authenticated.values()) if (conn.address === address) count++;
    return count;
  }

  /** Closes every connection of `address` (maker removed from the registry); returns how many. */
  disconnectAddress(address: string): number {
    let closed = 0;
    for (const conn of [...this.#all]) {
      if (conn.address !== address || conn.isClosed) continue;
      this.#fail(conn, 'MAKER_REMOVED');
      closed++;
    }
    return closed;
  }

  /** Closes every socket (service shutdown) and refuses new ones. */
  close(): void {
    this.#isClosing = true;
    this.#refusals.flush();
    if (this.#heartbeatTimer !== null) clearInterval(this.#heartbeatTimer);
    this.#heartbeatTimer = null;
    for (const conn of [...this.#all]) this.#close(conn, 'SHUTDOWN');
  }

  // --- connection lifecycle ----------------------------------------------------------------------------

  #onOpen(ws: WebSocket<UserData>): void {
    const conn = ws.getUserData().conn;
    conn.ws = ws;
    this.#all.add(conn);
    if (this.#isClosing) return this.#close(conn, 'SHUTDOWN');
    // The upgrade made room (uWS opens the socket inside res.upgrade); checked again so that the bound holds
    // even if an open ever came apart from its upgrade.
    if (this.#pending.isFull && !this.#evictOldestIdle()) return this.#fail(conn, 'OVERLOADED');
    this.#pending.add(conn);
    const { config, clock } = this.#deps;
    conn.challenge = createChallenge(config.mmDomainTag, clock.nowMs(), config.mmChallengeTtlMs);
    // interface.md Limits: auth must complete within 10 s of connecting, whatever happens meanwhile. Under
    // pressure (more than half the places taken, this socket included) a new socket gets less: a maker
    // answers in milliseconds, and idle sockets then give their places back sooner.
    const deadlineMs = this.#pending.isUnderPressure ? Math.min(config.mmAuthTimeoutMs, config.mmPressureAuthTimeoutMs) : config.mmAuthTimeoutMs;
    conn.authTimer = setTimeout(() => this.#fail(conn, 'AUTH_TIMEOUT'), deadlineMs);
    this.#send(conn, challengeMessage(conn.challenge));
  }

  #onMessage(conn: Connection, frame: ArrayBuffer, isBinary: boolean): void {
    if (conn.isClosed) return;
    const value = decodeFrame(frame, isBinary);
    if (conn.phase !== 'authenticated') return this.#onPreAuthMessage(conn, value);
    if (value === null) return this.#sendError(conn, 'INVALID_JSON');
    const inbound = validateMakerMessage(value);
    if (!inbound.ok) return void this.#send(conn, { type: 'error', ...inbound.error });
    const msg = inbound.message;
    const makerId = conn.makerId!;
    const address = conn.address!;
    if (msg.type === 'pong') {
      conn.unansweredHeartbeats = 0;
      return;
    }
    if (msg.type === 'auth_response') return this.#sendError(conn, 'ALREADY_AUTHENTICATED');
    if (msg.type === 'resume') return this.#resume(conn, msg);
    const dispatcher = this.#dispatcher;
    if (dispatcher === null) return this.#sendError(conn, 'NOT_ACCEPTING', 'request_id' in msg ? idsOf(msg) : {});
    switch (msg.type) {
      case 'quote':
        msg.last_look ??= false;
        return dispatcher.onQuote(makerId, address, msg);
      case 'decline':
        return dispatcher.onDecline(makerId, address, msg);
      case 'quote_cancel':
        return dispatcher.onQuoteCancel(makerId, address, msg);
      case 'last_look_response':
        return dispatcher.onLastLookResponse(makerId, address, msg);
      case 'quote_cancel_all':
        return dispatcher.onQuoteCancelAll(makerId, address);
      case 'protection_reset':
        return dispatcher.onProtectionReset(makerId, address);
      default:
        return assertNever(msg);
    }
  }

  #onPreAuthMessage(conn: Connection, value: Record<string, unknown> | null): void {
    if (value === null || value['type'] !== 'auth_response') return this.#fail(conn, 'NOT_AUTHENTICATED');
    const challenge = conn.challenge;
    if (challenge === null) return this.#sendError(conn, 'AUTH_IN_PROGRESS');
    conn.challenge = null; // one challenge per connection, used once (contract section 7)
    const checked = checkAuthResponse(challenge, value, this.#deps.clock.nowMs());
    if (!checked.ok) return this.#rejectAuth(conn, checked.reason, checked.detail);
    conn.phase = 'verifying';
    conn.address = checked.address;
    this.#verify(conn, challenge, checked).catch((err: unknown) => {
      if (isPoolOverloaded(err)) return this.#fail(conn, 'OVERLOADED');
      this.#deps.log.error({ err, connId: conn.connId }, 'maker auth failed unexpectedly');
      this.#close(conn, 'INTERNAL');
    });
  }

  async #verify(conn: Connection, challenge: Challenge, checked: { address: string; signature65: Uint8Array }): Promise<void> {
    const isSigner = await verifySigner(this.#deps.verifyPool, challenge, checked);
    if (conn.isClosed) return;
    if (!isSigner) return this.#rejectAuth(conn, 'INVALID_SIGNATURE', 'the signature does not recover to the address');
    // Registry after the signature, so only the key's owner learns whether an address is registered.
    if (!this.#deps.registry.has(checked.address)) return this.#rejectAuth(conn, 'UNKNOWN_MAKER', 'not a registered maker');
    const session = await this.#deps.sessions.issueMaker(checked.address, this.#deps.config.mmSessionTtlMs);
    // The socket may have closed, or the maker been removed, while the session was being made durable: the
    // token was never handed out, so it is revoked rather than left valid.
    if (conn.isClosed || !this.#deps.registry.has(checked.address)) {
      await this.#deps.sessions.revoke(session.sessionKey);
      if (!conn.isClosed) this.#rejectAuth(conn, 'UNKNOWN_MAKER', 'maker removed during authentication');
      return;
    }
    this.#authenticate(conn, checked.address, session);
  }

  #authenticate(conn: Connection, address: string, session: { token: string; sessionKey: string; expiresAtMs: number }): void {
    const { token: sessionToken, expiresAtMs } = session;
    this.#leavePending(conn);
    const makerId = `mk-${(++this.#makerSeq).toString(36)}`;
    conn.phase = 'authenticated';
    conn.makerId = makerId;
    this.#authenticated.set(makerId, conn);
    const delayMs = Math.max(0, expiresAtMs - this.#deps.clock.nowMs());
    conn.sessionTimer = setTimeout(() => this.#expireSession(conn, expiresAtMs), delayMs);
    this.#metrics?.authTotal.inc({ result: 'success' });
    this.#deps.log.info({ connId: conn.connId, makerId, address, remote: conn.remote }, 'maker authenticated');
    this.#send(conn, { type: 'auth_result', success: true, session_token: sessionToken, expires_at_ms: expiresAtMs });
    // Every message after auth_result is numbered (issue 22): the stream starts here, at seq 1.
    conn.stream = this.#streams.open(conn, makerId, session.sessionKey, address);
  }

  /**
   * `resume` (docs/maker-protocol.md section 3.5): the named session must be a live one of this connection's
   * address. A stream still attached to a socket the maker gave up (half-open, not yet noticed here) is
   * closed first, which withdraws its quotes as any disconnect does, then resumed.
   */
  #resume(conn: Connection, msg: ResumeMessage): void {
    const slot = conn.stream!;
    const principal = this.#deps.sessions.resolve(msg.session_token);
    const nowMs = this.#deps.clock.nowMs();
    let decision;
    if (principal?.kind !== 'maker' || principal.address !== conn.address) {
      decision = { ok: false as const, reason: 'UNKNOWN_SESSION' as const, oldestSeq: null };
    } else {
      const stale = this.#streams.attachedConnOf(principal.sessionKey);
      if (stale !== null && stale !== conn) this.#close(stale, 'RESUMED_ELSEWHERE');
      decision = this.#streams.resume(slot, principal.sessionKey, msg.last_seq, nowMs);
    }
    if (!decision.ok) return void this.#send(conn, { type: 'resume_failed', reason: decision.reason, oldest_seq: decision.oldestSeq });
    const requestIds: string[] = [];
    for (const body of decision.bodies) {
      if (body.startsWith(RFQ_BODY_PREFIX)) requestIds.push((JSON.parse('{' + body) as { request_id: string }).request_id);
    }
    if (requestIds.length > 0) this.#dispatcher?.onRfqsReplayed(conn.makerId!, requestIds);
    for (const body of decision.bodies) this.#writer.write(conn, slot.stream.append(body, nowMs, ALWAYS_REPLAY));
    this.#deps.log.info({ connId: conn.connId, makerId: conn.makerId, replayed: decision.bodies.length }, 'maker stream resumed');
    this.#send(conn, { type: 'resumed', replayed: decision.bodies.length, next_seq: slot.stream.nextSeq + 1 });
  }

  #expireSession(conn: Connection, expiresAtMs: number): void {
    conn.sessionTimer = null;
    this.#send(conn, { type: 'AUTH_EXPIRED', expired_at_ms: expiresAtMs });
    this.#close(conn, 'AUTH_EXPIRED');
  }

  #rejectAuth(conn: Connection, reason: AuthFailureReason, detail: string): void {
    this.#metrics?.authTotal.inc({ result: reason });
    // Debug only: anyone can cause this at will. The close below counts it for the periodic summary.
    this.#deps.log.debug({ connId: conn.connId, reason, detail, address: conn.address, remote: conn.remote }, 'maker auth refused');
    this.#send(conn, { type: 'auth_result', success: false, reason });
    this.#close(conn, reason);
  }

  #onClose(conn: Connection, code: number): void {
    conn.isClosed = true;
    this.#all.delete(conn);
    this.#leavePending(conn);
    if (conn.sessionTimer !== null) clearTimeout(conn.sessionTimer);
    conn.sessionTimer = null;
    const makerId = conn.makerId;
    if (makerId === null) return;
    this.#authenticated.delete(makerId);
    if (conn.stream !== null) this.#streams.detach(conn.stream, this.#deps.clock.nowMs());
    this.#deps.log.info({ connId: conn.connId, makerId, address: conn.address, code }, 'maker disconnected');
    this.#dispatcher?.onMakerDisconnected(makerId, conn.address!);
  }

  #leavePending(conn: Connection): void {
    if (conn.authTimer !== null) clearTimeout(conn.authTimer);
    conn.authTimer = null;
    this.#pending.remove(conn);
  }

  /** Closes the oldest pending socket still awaiting its auth_response (AUTH_EVICTED); false when none is. */
  #evictOldestIdle(): boolean {
    const conn = this.#pending.oldestIdle();
    if (conn === null) return false;
    this.#metrics?.authTotal.inc({ result: 'AUTH_EVICTED' });
    this.#fail(conn, 'AUTH_EVICTED'); // closes at once: #onClose takes it out of the pending set
    return true;
  }

  #refuseUpgrade(res: HttpResponse, kind: string, statusLine: string, body: string, retryAfterS = 1): void {
    this.#refusals.count(kind);
    refuseUpgrade(res, statusLine, body, retryAfterS);
  }

  // --- heartbeat ---------------------------------------------------------------------------------------

  /** One interval for all makers: a maker that left MAX_UNANSWERED_HEARTBEATS unanswered is closed. */
  #tickHeartbeat(): void {
    const message = { type: 'heartbeat', ts: this.#deps.clock.nowMs() } as const;
    this.#streams.sweep(message.ts);
    for (const conn of [...this.#authenticated.values()]) {
      if (conn.unansweredHeartbeats >= MAX_UNANSWERED_HEARTBEATS) {
        this.#fail(conn, 'HEARTBEAT_TIMEOUT');
        continue;
      }
      conn.unansweredHeartbeats++;
      this.#send(conn, message);
    }
  }

  // --- sending -----------------------------------------------------------------------------------------

  /** The one place a message is written to a socket. False when the socket is gone or too far behind. */
  #send(conn: Connection, message: ServerToMakerMessage): boolean {
    if (conn.isClosed || conn.ws === null) return false;
    const serialized = JSON.stringify(message);
    // After auth_result every message is numbered and held for a resume (stream.ts); before it, none is.
    const frame = conn.stream === null ? serialized : conn.stream.stream.append(bodyOf(serialized), this.#deps.clock.nowMs(), replayDeadlineOf(message));
    return this.#writer.write(conn, frame);
  }

  #sendError(conn: Connection, code: MakerErrorCode, ids: { request_id?: string; quote_id?: string } = {}): void {
    this.#send(conn, { type: 'error', code, message: MAKER_ERRORS[code].message, ...ids });
  }

  /** error message with the code, then close with it as the reason (the `closes: true` codes). */
  #fail(conn: Connection, cause: CloseCause & MakerErrorCode): void {
    this.#sendError(conn, cause);
    this.#close(conn, cause);
  }

  #close(conn: Connection, cause: CloseCause): void {
    if (conn.isClosed || conn.ws === null) return;
    const { code, reason } = CLOSE[cause];
    this.#metrics?.closedTotal.inc({ reason });
    if (conn.phase !== 'authenticated' && cause !== 'SHUTDOWN') {
      // Before auth anyone can cause a close at will (a bad signature, silence, eviction): counted, and
      // logged as one summary line per interval; each at debug level.
      this.#refusals.count(reason);
      this.#deps.log.debug({ connId: conn.connId, address: conn.address, remote: conn.remote, reason }, 'closing maker socket before auth');
    } else if (cause !== 'SHUTDOWN' && cause !== 'AUTH_EXPIRED') {
      this.#deps.log.info({ connId: conn.connId, makerId: conn.makerId, address: conn.address, reason }, 'closing maker socket');
    }
    // Frames queued for a socket too slow to read them are only in its stream (held for a resume); for any
    // other close they go out before the close frame.
    if (cause === 'SLOW_CONSUMER') this.#writer.drop(conn);
    else this.#writer.flush(conn);
    if (conn.isClosed || conn.ws === null) return;
    conn.ws.end(code, reason); // runs #onClose synchronously
  }
}

/** Answers an upgrade with an error instead of a socket; Retry-After 1 s unless given (the refusals clear quickly). */
function refuseUpgrade(res: HttpResponse, statusLine: string, body: string, retryAfterS = 1): void {
  res.cork(() => {
    res.writeStatus(statusLine).writeHeader('Retry-After', String(retryAfterS)).writeHeader('Content-Type', 'application/json');
    res.end(body);
  });
}

/** The start of a serialized rfq's body (stream.ts bodyOf): how a replay finds the rfqs among its frames. */
const RFQ_BODY_PREFIX = '"type":"rfq",';

/**
 * Whether a resume replays a message (stream.ts): an rfq until its quote deadline, liveness and stream
 * control never (a stale heartbeat, AUTH_EXPIRED or closing error would mislead the new socket), the rest always.
 */
function replayDeadlineOf(message: ServerToMakerMessage): number {
  switch (message.type) {
    case 'rfq':
      return message.quote_deadline_ms;
    case 'error': // one that closed the old socket (HEARTBEAT_TIMEOUT...) is about that socket, not the stream
      return (MAKER_ERRORS as Record<string, { closes: boolean } | undefined>)[message.code]?.closes === true ? NEVER_REPLAY : ALWAYS_REPLAY;
    case 'heartbeat':
    case 'AUTH_EXPIRED':
    case 'resumed':
    case 'resume_failed':
      return NEVER_REPLAY;
    default:
      return ALWAYS_REPLAY;
  }
}

function idsOf(msg: { request_id: string; quote_id?: string }): { request_id: string; quote_id?: string } {
  return msg.quote_id === undefined ? { request_id: msg.request_id } : { request_id: msg.request_id, quote_id: msg.quote_id };
}

function assertNever(value: never): never {
  throw new TypeError(`unhandled maker message ${JSON.stringify(value)}`);
}
