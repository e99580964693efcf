// Main thread. The dashboard's live feed: a WebSocket on which the page sends the admin token as
// its first message (never in the URL, which proxies and access logs keep), then receives the recent frames
// and one frame a second. Frames are derived from prom-client registries (sample.ts, frame.ts): this
// process's, or in a cluster every front process's, added up (cluster/dashboard-samples.ts), each from the
// processes that answered both readings, so one that missed a tick or came new is not read as a counter's
// fall or jump. They are read only while someone watches, once a second whatever the number of viewers.
//
// Bounds: viewers watching <= MAX_DASHBOARD_SOCKETS (only the admin's token gets a socket there); sockets
// awaiting their token <= MAX_PENDING_VIEWERS in all, MAX_PENDING_PER_ADDRESS from one address and
// MAX_PENDING_PER_NETWORK from one network, each for AUTH_DEADLINE_MS at most; when every such place is taken
// the longest waiting is closed (AUTH_EVICTED) for the newcomer, so anyone holding them cannot lock the
// operator out (the book and the rule are the maker gateway's, mm/pending-auth.ts).
import uWS, { type HttpResponse, type WebSocket, type WebSocketBehavior } from 'uWebSockets.js';
import type { Logger } from 'pino';
import { authorize } from '../http/bearer.js';
import type { TokenResolver } from '../contract/principal.js';
import { anonymousKey, type RateLimiter } from '../lib/rate-limit.js';
import { callerNetwork, callerWideNetwork } from '../lib/caller-network.js';
import { PendingAuth, type PendingSocket } from '../mm/pending-auth.js';
import { isApiError, type ErrorCode } from '../lib/errors.js';
import { deriveFrame, type Frame } from './frame.js';
import { mergeSamples, type ProcessSamples, type SampleSource } from './sample.js';

export const DASHBOARD_WS_PATH = '/v1/admin/dashboard/ws';
/** Viewers at once: a dashboard is for operators, a handful of tabs; past it an upgrade is 503. */
export const MAX_DASHBOARD_SOCKETS = 32;
/** Sockets awaiting their token at once; past it the longest waiting is evicted for a newcomer. */
export const MAX_PENDING_VIEWERS = 32;
/** Of those, from one address (an IPv6 /64) and one network (an IPv4 /24, an IPv6 /48): a few tabs. */
export const MAX_PENDING_PER_ADDRESS = 4;
export const MAX_PENDING_PER_NETWORK = 8;
/** A socket that has not sent its token by then is closed. */
export const AUTH_DEADLINE_MS = 10_000;
export const FRAME_INTERVAL_MS = 1_000;
/** Frames kept for a page that opens: five minutes at one a second (~1 KB each). */
export const HISTORY_FRAMES = 300;
/** The only message a page sends is `{"type":"auth","token":...}`; a bearer is at most 512 characters. */
const MAX_INBOUND_BYTES = 1_024;
/** A viewer this far behind skips frames (each is whole in itself) instead of growing the buffer. */
const MAX_BUFFERED_BYTES = 1 << 20;

/** Close codes in the application range (RFC 6455 section 7.4.2), named after the HTTP refusals. */
export const FEED_CLOSE = {
  UNAUTHENTICATED: 4401,
  FORBIDDEN: 4403,
  RATE_LIMITED: 4429,
  AUTH_TIMEOUT: 4408,
  /** Every place for a socket awaiting its token was taken, and this one waited longest (503: try again). */
  AUTH_EVICTED: 4503,
  /** Its token was good, but MAX_DASHBOARD_SOCKETS viewers watch already (it waited while they came): try again. */
  VIEWERS_FULL: 4504,
  GOING_AWAY: 1001,
} as const;

export type FeedMessage =
  | { type: 'auth_result'; ok: true }
  | { type: 'auth_result'; ok: false; code: ErrorCode }
  | { type: 'history'; frames: Frame[] }
  | { type: 'frame'; frame: Frame };

class Viewer implements PendingSocket {
  isAuthenticated = false;
  isOpen = true;
  deadline: NodeJS.Timeout | null = null;
  /** Set when the socket opens: what the eviction closes. */
  ws: WebSocket<Viewer> | null = null;
  constructor(
    readonly rateLimitKey: string,
    readonly remoteNetwork: string,
    readonly remoteWideNetwork: string,
  ) {}

  /**
   * The token is checked in the one call that reads it: a pending socket has sent nothing yet. A field, not
   * a getter: uWS copies the user data's own fields onto the socket (getUserData is that copy).
   */
  readonly isIdleWhilePending = true;
}

export interface DashboardFeedDeps {
  samples: SampleSource;
  tokens: TokenResolver;
  rateLimiter: RateLimiter;
  log: Logger;
}

export class DashboardFeed {
  readonly #deps: DashboardFeedDeps;
  readonly #sockets = new Set<WebSocket<Viewer>>();
  readonly #pending = new PendingAuth<Viewer>({
    maxPending: MAX_PENDING_VIEWERS,
    maxPerAddress: MAX_PENDING_PER_ADDRESS,
    maxPerNetwork: MAX_PENDING_PER_NETWORK,
  });
  readonly #history: Frame[] = [];
  #previous: { atMs: number; samples: ProcessSamples } | null = null;
  #timer: NodeJS.Timeout | null = null;
  #isSampling = false;
  #isClosing = false;

  constructor(deps: DashboardFeedDeps) {
    this.#deps = deps;
  }

  /** The socket behavior for `app.ws(DASHBOARD_WS_PATH, feed.behavior())`. */
  behavior(): WebSocketBehavior<Viewer> {
    return {
      maxPayloadLength: MAX_INBOUND_BYTES,
      idleTimeout: 60,
      compression: uWS.DISABLED,
      upgrade: (res, req, context) => {
        const remote = Buffer.from(res.getRemoteAddressAsText()).toString();
        const network = callerNetwork(remote);
        const key = anonymousKey(network);
        if (this.#isClosing || this.#viewerCount() >= MAX_DASHBOARD_SOCKETS) return refuse(res, '503 Service Unavailable');
        // An upgrade is an anonymous request: it spends a token of its network's bucket, as any other does.
        if (this.#deps.rateLimiter.take(key, Date.now()) > 0) return refuse(res, '429 Too Many Requests');
        const wideNetwork = callerWideNetwork(remote);
        // One address or network may not hold the places alone; past its share, 429 (a place frees within
        // AUTH_DEADLINE_MS). Every place taken: the longest waiting makes room, as on the maker socket.
        if (this.#pending.refusalFor(network, wideNetwork) !== null) return refuse(res, '429 Too Many Requests');
        if (this.#pending.isFull) {
          const oldest = this.#pending.oldestIdle();
          if (oldest?.ws == null) return refuse(res, '503 Service Unavailable');
          this.#end(oldest.ws, FEED_CLOSE.AUTH_EVICTED, 'AUTH_EVICTED'); // its close handler frees the place
        }
        const viewer = new Viewer(key, network, wideNetwork);
        res.upgrade(
          viewer,
          req.getHeader('sec-websocket-key'),
          req.getHeader('sec-websocket-protocol'),
          req.getHeader('sec-websocket-extensions'),
          context,
        );
      },
      open: (ws) => {
        this.#sockets.add(ws);
        const viewer = ws.getUserData();
        viewer.ws = ws;
        // The upgrade made room (uWS opens the socket inside res.upgrade).
        this.#pending.add(viewer);
        viewer.deadline = setTimeout(() => this.#end(ws, FEED_CLOSE.AUTH_TIMEOUT, 'AUTH_TIMEOUT'), AUTH_DEADLINE_MS);
      },
      message: (ws, data) => this.#onMessage(ws, Buffer.from(data).toString('utf8')),
      close: (ws) => {
        const viewer = ws.getUserData();
        viewer.isOpen = false;
        viewer.ws = null;
        if (viewer.deadline !== null) clearTimeout(viewer.deadline);
        this.#pending.remove(viewer);
        this.#sockets.delete(ws);
        if (this.#viewerCount() === 0) this.#stopSampling();
      },
    };
  }

  /** Ends every viewer's socket and the sampling: the service is stopping. */
  close(): void {
    this.#isClosing = true;
    this.#stopSampling();
    this.#deps.samples.close();
    for (const ws of [...this.#sockets]) this.#end(ws, FEED_CLOSE.GOING_AWAY, 'SERVICE_STOPPING');
  }

  /** The one message a viewer may send. Its token is checked as a bearer of an admin route would be. */
  #onMessage(ws: WebSocket<Viewer>, text: string): void {
    const viewer = ws.getUserData();
    if (viewer.isAuthenticated) return; // nothing else is asked of a page once it watches
    const token = tokenOf(text);
    const nowMs = Date.now();
    const limiter = this.#deps.rateLimiter;
    // As server.ts authorizeCharged: a locked-out network is told nothing about its guess.
    if (limiter.isEnabled && limiter.hasLockouts(nowMs) && limiter.lockoutOf(viewer.rateLimitKey, nowMs) > 0)
      return this.#refuse(ws, 'RATE_LIMITED');
    try {
      authorize('admin', token === null ? '' : `Bearer ${token}`, this.#deps.tokens);
    } catch (err) {
      if (!isApiError(err)) throw err;
      const isLimited = limiter.isEnabled && limiter.takeRefused(viewer.rateLimitKey, nowMs) > 0;
      return this.#refuse(ws, isLimited ? 'RATE_LIMITED' : err.code === 'FORBIDDEN' ? 'FORBIDDEN' : 'UNAUTHENTICATED');
    }
    // The upgrade counted the viewers watching then; those that authenticated while this one waited count now.
    if (this.#viewerCount() >= MAX_DASHBOARD_SOCKETS) return this.#end(ws, FEED_CLOSE.VIEWERS_FULL, 'VIEWERS_FULL');
    viewer.isAuthenticated = true;
    this.#pending.remove(viewer);
    if (viewer.deadline !== null) clearTimeout(viewer.deadline);
    viewer.deadline = null;
    send(ws, { type: 'auth_result', ok: true });
    send(ws, { type: 'history', frames: this.#history });
    this.#startSampling();
  }

  #refuse(ws: WebSocket<Viewer>, code: 'UNAUTHENTICATED' | 'FORBIDDEN' | 'RATE_LIMITED'): void {
    send(ws, { type: 'auth_result', ok: false, code });
    this.#end(ws, FEED_CLOSE[code], code);
  }

  #end(ws: WebSocket<Viewer>, code: number, reason: string): void {
    if (ws.getUserData().isOpen) ws.end(code, reason); // runs close() synchronously
  }

  #viewerCount(): number {
    let count = 0;
    for (const ws of this.#sockets) if (ws.getUserData().isAuthenticated) count++;
    return count;
  }

  #startSampling(): void {
    if (this.#timer !== null || this.#isClosing) return;
    void this.#tick(); // the first reading at once, so the first frame comes one interval later
    this.#timer = setInterval(() => void this.#tick(), FRAME_INTERVAL_MS);
    this.#timer.unref();
  }

  #stopSampling(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    // The next viewer starts from a fresh reading: rates across an unwatched gap would be averages of it.
    this.#previous = null;
  }

  async #tick(): Promise<void> {
    if (this.#isSampling) return; // a slow collect must not pile readings up
    this.#isSampling = true;
    try {
      const atMs = Date.now();
      const samples = await this.#deps.samples.take(atMs);
      const previous = this.#previous;
      if (this.#timer === null) return; // stopped while collecting
      this.#previous = { atMs, samples };
      if (previous === null) return;
      const both = [...samples.keys()].filter((name) => previous.samples.has(name));
      if (both.length === 0) return;
      // The processes' readings added up, each side of the interval from the same processes.
      const merged = (readings: ProcessSamples, at: number) =>
        mergeSamples(
          both.map((name) => readings.get(name)!),
          at,
        );
      const frame = deriveFrame(merged(previous.samples, previous.atMs), merged(samples, atMs), both.length);
      this.#history.push(frame);
      if (this.#history.length > HISTORY_FRAMES) this.#history.shift();
      const text = JSON.stringify({ type: 'frame', frame } satisfies FeedMessage);
      for (const ws of this.#sockets) {
        if (ws.getUserData().isAuthenticated && ws.getBufferedAmount() < MAX_BUFFERED_BYTES) ws.send(text, false);
      }
    } catch (err) {
      // A collect hook that throws is a bug in its owner; the feed says so once per tick and keeps going.
      this.#deps.log.error({ err }, 'dashboard sample failed');
    } finally {
      this.#isSampling = false;
    }
  }
}

/** The token of `{"type":"auth","token":"..."}`, or null for anything else. */
function tokenOf(text: string): string | null {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null) return null;
    const { type, token } = value as Record<string, unknown>;
    return type === 'auth' && typeof token === 'string' ? token : null;
  } catch {
    return null;
  }
}

function send(ws: WebSocket<Viewer>, message: FeedMessage): void {
  ws.send(JSON.stringify(message), false);
}

function refuse(res: HttpResponse, statusLine: string): void {
  res.cork(() => res.writeStatus(statusLine).writeHeader('Retry-After', '1').end());
}
