// Main thread. The market-maker socket (interface.md "Authentication", "Events", "Limits"; contract
// section 7) on the service's uWS app. This class owns every maker connection and composes the parts that
// act on them; nothing else touches a maker socket:
//   upgrade.ts        which upgrades become sockets (rate limit, pending-auth shares, eviction)
//   authenticator.ts  challenge, auth deadline, verification, session and its expiry
//   dispatch.ts       each frame a maker sends: to the authenticator, the RFQ engine, or answered (resume)
//   heartbeat.ts      the JSON heartbeat, one interval for every maker
//   sender.ts         the one place a message is written (numbered, socket-writer.ts) or a socket closed
// Here: the sockets' life in uWS (open, close), fan-out of RFQs to every authenticated maker, and the queries
// the desk and the dashboard ask.
//
// Bounds: frames <= 16 KiB; sockets waiting for auth <= maxPendingAuth in all, <= mmMaxPendingAuthPerIp
// from one remote address and <= mmMaxPendingAuthPerNetwork from one IPv4 /24 or IPv6 /48, each for at most
// mmAuthTimeoutMs (mmPressureAuthTimeoutMs when more than half the places are taken);
// frames from one socket <= mmFrameBurst at once and mmFramesPerS on average (frame-rate.ts: then it is
// closed RATE_LIMITED); authenticated sockets of one maker address <= mmMaxSocketsPerMaker;
// per-connection send buffer <= mmMaxBufferedBytes (then the maker is closed with SLOW_CONSUMER, never
// buffered further); one timer per pending socket and one per session, one heartbeat interval in all.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import uWS, { type WebSocket, type WebSocketBehavior } from 'uWebSockets.js';
import type { TimerClock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import type { Sessions } from '../auth/sessions.js';
import { assertDomainTag } from '../crypto/maker-challenge.js';
import type { VerifyPool } from '../crypto/verify-pool.js';
import type { RateLimiter } from '../lib/rate-limit.js';
import { LogCounts } from '../lib/log-counts.js';
import type { ServerToMakerMessage } from '../contract/mm.js';
import { MakerAuthenticator } from './authenticator.js';
import { makerAddressOf, type Connection, type MakerId, type UserData } from './connection.js';
import { MessageDispatch, type MakerDispatcher } from './dispatch.js';
import { fillBucket, type FrameRate } from './frame-rate.js';
import { Heartbeat } from './heartbeat.js';
import { registerGatewayMetrics } from './metrics.js';
import { MAX_DETACHED_STREAMS, MAX_MAKER_FRAME_BYTES } from '../contract/maker-protocol.js';
import type { MakerRegistry } from './registry.js';
import { MakerStreams } from './resume.js';
import { MakerSender, replayDeadlineOf } from './sender.js';
import { HARD_BACKPRESSURE_MARGIN_BYTES } from './socket-writer.js';
import type { MakerStats } from './stats.js';
import { ALWAYS_REPLAY, NEVER_REPLAY, bodyOf } from './stream.js';
import { UpgradeGate } from './upgrade.js';

export type { MakerId, MakerDispatcher };

/** uWS's largest idle timeout, s (its timer wheel: 240 ticks of 4 s). */
const UWS_MAX_IDLE_TIMEOUT_S = 960;

/**
 * The sockets' uWS idle timeout, s. Not for liveness (the heartbeat closes a silent maker, with its reason),
 * but uWS also keeps a socket it has ended only for its idle timeout's margin (uWS WebSocketContextData,
 * calculateIdleTimeoutCompnents; WebSocket.h end()): 4 s at 0, then cut without a close frame. A maker
 * closed SLOW_CONSUMER gets the 1013 only after reading everything queued before it, so one that read again
 * a little late heard a bare 1006 (test/mm/gateway.test.ts). At 960 the margin is 16 s, and the idle cut
 * itself (960 s without a frame from the maker) never comes first: a live maker pongs every heartbeat.
 * With heartbeats more than 480 s apart (half of it, so that a late pong still counts), 0: uWS's own idle
 * timer stays off and the heartbeat alone decides liveness.
 */
export function makerIdleTimeoutS(heartbeatMs: number): number {
  return 2 * heartbeatMs <= UWS_MAX_IDLE_TIMEOUT_S * 1000 ? UWS_MAX_IDLE_TIMEOUT_S : 0;
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
    | 'mmMaxSocketsPerMaker'
    | 'mmFramesPerS'
    | 'mmFrameBurst'
    | 'mmRefusalLogIntervalMs'
    | 'cluster'
    | 'mmReplayMs'
    | 'mmReplayMaxMessages'
  >;
  /** "Now" for every decision of the gateway, and the timers of its deadlines: auth, session, heartbeat. */
  clock: TimerClock;
  log: Logger;
  registry: Pick<MakerRegistry, 'has'>;
  sessions: Pick<Sessions, 'issueMaker' | 'revoke' | 'resolve'>;
  verifyPool: Pick<VerifyPool, 'recoverPersonalSigner'>;
  /** A cluster's: awaited just before a socket is told it is authenticated (ShardPool.announceMakers). */
  beforeAuthenticated?: () => Promise<void>;
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
  /**
   * When the frames queued for the sockets in a loop turn are written (socket-writer.ts): setImmediate unless
   * given. A test on a manual clock, whose sockets are stand-ins, writes them at once.
   */
  endOfTurn?: (flush: () => void) => void;
}

export class MakerGateway {
  readonly #deps: MakerGatewayDeps;
  readonly #all = new Set<Connection>();
  readonly #authenticated = new Map<MakerId, Connection>();
  /** Every authenticated connection's stream, and those of closed ones still held for a resume (resume.ts). */
  readonly #streams: MakerStreams;
  /** Refused upgrades and sockets closed before auth, logged as counts per interval (log-counts.ts). */
  readonly #refusals: LogCounts;
  readonly #sender: MakerSender;
  readonly #auth: MakerAuthenticator;
  readonly #heartbeat: Heartbeat;
  readonly #upgrades: UpgradeGate;
  readonly #frameRate: FrameRate;
  /** Attached to its app (attach): once per gateway. */
  #isAttached = false;
  #isClosing = false;

  constructor(deps: MakerGatewayDeps) {
    assertDomainTag(deps.config.mmDomainTag);
    this.#deps = deps;
    const { config, clock, log } = deps;
    this.#streams = new MakerStreams({
      replayMs: config.mmReplayMs,
      maxMessages: config.mmReplayMaxMessages,
      maxDetached: MAX_DETACHED_STREAMS,
    });
    this.#refusals = new LogCounts(log, 'maker sockets refused or closed before authentication', config.mmRefusalLogIntervalMs);
    const metrics =
      deps.metrics === undefined
        ? null
        : registerGatewayMetrics(deps.metrics, { connected: () => this.connectedCount, pending: () => this.#auth.pending.count });
    const sender = new MakerSender({
      clock,
      log,
      metrics,
      refusals: this.#refusals,
      softLimitBytes: config.mmMaxBufferedBytes,
      endOfTurn: deps.endOfTurn,
    });
    this.#sender = sender;
    this.#frameRate = { perMs: config.mmFramesPerS / 1000, burst: config.mmFrameBurst };
    this.#auth = new MakerAuthenticator({
      config,
      maxPendingAuth: deps.maxPendingAuth,
      clock,
      log,
      registry: deps.registry,
      sessions: deps.sessions,
      verifyPool: deps.verifyPool,
      ...(deps.beforeAuthenticated === undefined ? {} : { beforeAuthenticated: deps.beforeAuthenticated }),
      metrics,
      sender,
      authenticated: this.#authenticated,
      streams: this.#streams,
    });
    this.#heartbeat = new Heartbeat({
      intervalMs: config.mmHeartbeatMs,
      clock,
      authenticated: this.#authenticated,
      streams: this.#streams,
      sender,
    });
    this.#upgrades = new UpgradeGate({
      clock,
      rateLimiter: deps.rateLimiter,
      pending: this.#auth.pending,
      evictOldestIdle: () => this.#auth.evictOldestIdle(),
      isClosing: () => this.#isClosing,
      refusals: this.#refusals,
    });
  }

  /**
   * Returns the socket behavior to register with `app.ws(MAKER_WS_PATH, gateway.attach(dispatcher))`, once
   * per gateway, and starts the heartbeat. The dispatcher (the desk) comes here rather than to the
   * constructor because it sends through this gateway: built first, the gateway is handed its dispatcher
   * when it starts taking sockets, so no socket ever exists without one.
   */
  attach(dispatcher: MakerDispatcher): WebSocketBehavior<UserData> {
    if (this.#isAttached) throw new Error('MakerGateway.attach called twice'); // a wiring bug
    this.#isAttached = true;
    this.#heartbeat.start();
    const upgrades = this.#upgrades;
    const { clock, log } = this.#deps;
    const dispatch = new MessageDispatch({
      clock,
      log,
      dispatcher,
      streams: this.#streams,
      sender: this.#sender,
      authenticator: this.#auth,
      frameRate: this.#frameRate,
    });
    return {
      maxPayloadLength: MAX_MAKER_FRAME_BYTES,
      // Liveness is our JSON heartbeat (interface.md), not uWS's idle timer or protocol pings.
      idleTimeout: makerIdleTimeoutS(this.#deps.config.mmHeartbeatMs),
      sendPingsAutomatically: false,
      compression: uWS.DISABLED,
      maxBackpressure: this.#deps.config.mmMaxBufferedBytes + HARD_BACKPRESSURE_MARGIN_BYTES,
      closeOnBackpressureLimit: 1,
      upgrade: (res, req, context) => upgrades.upgrade(res, req, context),
      open: (ws) => this.#onOpen(ws),
      message: (ws, frame, isBinary) => dispatch.onFrame(ws.getUserData().conn, frame, isBinary),
      close: (ws, code) => this.#onClose(ws.getUserData().conn, code, dispatcher),
    };
  }

  /**
   * Sends one message to every authenticated maker; returns how many it went to. Serialized and encoded
   * once, into the streams' shared arena; each stream keeps only its place and each socket is queued a
   * reference to those bytes behind its own seq (socket-writer.ts), so this is a loop of sends, not one uWS
   * publish, but no per-socket copy is made before uWS's own.
   */
  broadcast(message: ServerToMakerMessage): number {
    if (this.#authenticated.size === 0) return 0;
    const body = bodyOf(JSON.stringify(message));
    const deadlineMs = replayDeadlineOf(message);
    const nowMs = this.#deps.clock.nowMs();
    const stats = message.type === 'rfq' ? this.#deps.stats : undefined;
    const shared = this.#streams.share(body);
    const writer = this.#sender.writer;
    let count = 0;
    for (const conn of this.#authenticated.values()) {
      const auth = conn.auth;
      if (conn.isSlow || auth.phase !== 'authenticated') continue;
      count++;
      stats?.count(auth.address, 'rfqsReceived', nowMs);
      writer.queueStamped(conn, auth.stream.stream.appendShared(shared, nowMs, deadlineMs), shared);
    }
    return count;
  }

  /** Sends to one connection; false if it is gone (or is being closed as a slow consumer). */
  send(makerId: MakerId, message: ServerToMakerMessage): boolean {
    const conn = this.#authenticated.get(makerId);
    return conn !== undefined && this.#sender.send(conn, message);
  }

  /**
   * Frames already serialized (by an RFQ shard) to one connection, queued for the end of the turn
   * (socket-writer.ts) from their bytes in its stream; false when it is gone or too far behind. The frames at
   * `unreplayed` (ascending indexes) are held never to be replayed by a resume.
   */
  sendFrames(makerId: MakerId, frames: readonly string[], unreplayed: readonly number[] | null = null): boolean {
    // The stream, not the connection: a closed connection's frames are kept for its resume, and a resumed
    // one's go to the connection that resumed it (resume.ts).
    const slot = this.#streams.of(makerId);
    if (slot === undefined) return false;
    const nowMs = this.#deps.clock.nowMs();
    const { stream, conn } = slot;
    const writer = this.#sender.writer;
    let next = 0; // into unreplayed
    for (let i = 0; i < frames.length; i++) {
      const isUnreplayed = unreplayed !== null && unreplayed[next] === i;
      if (isUnreplayed) next++;
      const body = stream.appendOwn(bodyOf(frames[i]!), nowMs, isUnreplayed ? NEVER_REPLAY : ALWAYS_REPLAY);
      if (conn !== null) writer.queueStamped(conn, stream.lastSeq, body);
    }
    return conn !== null && !writer.isSlow(conn);
  }

  /** The connection ids of `address`'s authenticated connections. */
  makerIdsOf(address: string): MakerId[] {
    const ids: MakerId[] = [];
    for (const [makerId, conn] of this.#authenticated) if (makerAddressOf(conn) === address) ids.push(makerId);
    return ids;
  }

  /** The address behind a connection id, live or held for a resume. */
  addressOf(makerId: MakerId): string | null {
    return this.#streams.of(makerId)?.stream.address ?? null;
  }

  /** Sends to every authenticated connection of `address` (protection_tripped). */
  sendToAddress(address: string, message: ServerToMakerMessage): void {
    for (const conn of this.#authenticated.values()) if (makerAddressOf(conn) === address) this.#sender.send(conn, message);
  }

  /** Authenticated connections, less any being closed as a slow consumer. */
  connectedMakerIds(): MakerId[] {
    const ids: MakerId[] = [];
    for (const [makerId, conn] of this.#authenticated) if (!conn.isSlow) ids.push(makerId);
    return ids;
  }

  /** Any authenticated connection (a slow one being closed included): one size read, asked several times a second. */
  get hasAuthenticated(): boolean {
    return this.#authenticated.size > 0;
  }

  get connectedCount(): number {
    let count = 0;
    for (const conn of this.#authenticated.values()) if (!conn.isSlow) count++;
    return count;
  }

  /** Sockets connected and not yet authenticated. */
  get pendingCount(): number {
    return this.#auth.pending.count;
  }

  /** Authenticated connections of one maker address. */
  connectionsOf(address: string): number {
    let count = 0;
    for (const conn of this.#authenticated.values()) if (makerAddressOf(conn) === address) count++;
    return count;
  }

  /** Closes every connection of `address` (maker removed from the registry); returns how many. */
  disconnectAddress(address: string): number {
    let closed = 0;
    for (const conn of [...this.#all]) {
      if (makerAddressOf(conn) !== address || conn.isClosed) continue;
      this.#sender.fail(conn, 'MAKER_REMOVED');
      closed++;
    }
    return closed;
  }

  /** Closes every socket (service shutdown) and refuses new ones. */
  close(): void {
    this.#isClosing = true;
    this.#refusals.flush();
    this.#heartbeat.stop();
    for (const conn of [...this.#all]) this.#sender.close(conn, 'SHUTDOWN');
  }

  // --- connection lifecycle ----------------------------------------------------------------------------

  #onOpen(ws: WebSocket<UserData>): void {
    const conn = ws.getUserData().conn;
    conn.ws = ws;
    fillBucket(conn, this.#frameRate, this.#deps.clock.nowMs());
    this.#all.add(conn);
    if (this.#isClosing) return this.#sender.close(conn, 'SHUTDOWN');
    this.#auth.start(conn);
  }

  #onClose(conn: Connection, code: number, dispatcher: MakerDispatcher): void {
    conn.isClosed = true;
    this.#all.delete(conn);
    this.#auth.end(conn);
    const auth = conn.auth;
    if (auth.phase !== 'authenticated') return;
    const { makerId, address } = auth;
    this.#authenticated.delete(makerId);
    this.#streams.detach(auth.stream, this.#deps.clock.nowMs());
    this.#deps.log.info({ connId: conn.connId, makerId, address, code }, 'maker disconnected');
    dispatcher.onMakerDisconnected(makerId, address);
  }
}
