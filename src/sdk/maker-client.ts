// Maker SDK: a typed client of the parlayd market-maker socket (docs/maker-protocol.md). Runs in the maker's
// process, on its event loop. It connects, signs the challenge, answers heartbeats, reconnects with
// exponential backoff (and jitter) on a drop or AUTH_EXPIRED, and surfaces RFQs as events; the maker answers
// with quote() / decline() and confirms last looks through a callback.
import { isQuoteOdds, type AuthChallengeMessage, type AuthExpiredMessage, type AuthFailureReason, type ErrorMessage, type LastLookMessage, type MakerToServerMessage, type QuoteAckMessage, type QuoteRejectMessage, type RfqMessage, type RfqResultMessage, type ServerToMakerMessage } from '../schemas/mm.js';
import type {
  ProtectionResetOkMessage,
  ProtectionTrippedMessage,
  QuoteCancelledMessage,
  QuotesCancelledMessage,
  ResumeFailedMessage,
  ResumedMessage,
} from '../schemas/mm-stream.js';
import { MAKER_WS_PATH } from '../mm/protocol.js';
import { httpBaseOf, makerRequest, type ProtectionLimitsBody, type ProtectionView, type StandingQuote, type StatsView } from './maker-http.js';
import { makerChallengeBytes, privateKeySigner, type MakerSigner } from './signer.js';

export const DEFAULT_DOMAIN_TAG = 'parlayd:mm:ws-auth:v1:localhost.dev';

/** The subset of the WHATWG WebSocket the client uses; the `ws` package and Node 22's global both fit. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /** Destroys the connection without the close handshake (the `ws` package has it; a browser WebSocket does not). */
  terminate?(): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
export type SocketConstructor = new (url: string) => SocketLike;

export interface ReconnectOptions {
  /** First delay after a drop, ms (default 250). AUTH_EXPIRED reconnects at once. */
  initialDelayMs?: number;
  /** Cap of the delay, ms (default 30 000). */
  maxDelayMs?: number;
  /** Growth per failed attempt (default 2). */
  factor?: number;
  /** +/- this fraction of random spread, so a fleet does not reconnect in lockstep (default 0.2). */
  jitter?: number;
}

export interface MakerClientOptions {
  /** Base URL of the service (`ws://host:port`, `http://host:port`) or the full socket URL ending in /v1/mm/ws. */
  url: string;
  /** The maker's key (`0x` + 64 hex). Give this or `signer`. */
  privateKey?: string | Uint8Array;
  /** Any personal-sign signer, e.g. an ethers Wallet. */
  signer?: MakerSigner;
  /** The service's 35-byte domain tag (default parlayd:mm:ws-auth:v1:localhost.dev). */
  domainTag?: string;
  /** Called for each last_look; resolve true to confirm the fill. Without it every last look is confirmed. */
  onLastLook?: (message: LastLookMessage) => boolean | Promise<boolean>;
  /** false: never reconnect. */
  reconnect?: ReconnectOptions | false;
  /** Keep reconnecting after INVALID_SIGNATURE / UNKNOWN_MAKER / MALFORMED (default false: they stop the client). */
  retryOnAuthFailure?: boolean;
  /**
   * Silence from the server for this long means a dead link: the socket is dropped and reopened at once
   * (default 50 000; the server sends a heartbeat every 15 s).
   */
  serverSilenceMs?: number;
  /** false: never ask a new socket to replay what the lost one missed (default: resume, section 3.5). */
  resume?: boolean;
  /** WebSocket implementation (default: global WebSocket, else the `ws` package). */
  WebSocket?: SocketConstructor;
}

export interface MakerClientEvents {
  authenticated: { address: string; sessionToken: string; expiresAtMs: number };
  rfq: RfqMessage;
  quote_ack: QuoteAckMessage;
  quote_reject: QuoteRejectMessage;
  last_look: LastLookMessage;
  rfq_result: RfqResultMessage;
  /** An `error` message from the server (a refused message; see docs/maker-protocol.md). */
  server_error: ErrorMessage;
  auth_failed: { reason: AuthFailureReason };
  session_expired: AuthExpiredMessage;
  disconnected: { code: number; reason: string; willReconnect: boolean; reconnectInMs: number | null };
  /** A resume on a new socket replayed `replayed` messages of the lost one (they came just before, as events). */
  resumed: ResumedMessage;
  /** The lost socket's messages could not be replayed: re-pull your state (GET /v1/mm/quotes). */
  resume_failed: ResumeFailedMessage;
  quote_cancelled: QuoteCancelledMessage;
  quotes_cancelled: QuotesCancelledMessage;
  protection_tripped: ProtectionTrippedMessage;
  protection_reset_ok: ProtectionResetOkMessage;
  /** The signer or the onLastLook callback threw. Without a listener the error is rethrown (uncaught). */
  client_error: { error: unknown };
}
type Listener<K extends keyof MakerClientEvents> = (event: MakerClientEvents[K]) => void;

export interface QuoteOptions {
  /** Decimal payout multiplier, > 1, at most 4 decimals. */
  odds: number;
  /** Largest wager this price is good for, micros. */
  maxWagerMicros: bigint | number | string;
  /** Ask for a last look before a fill (answered by onLastLook). */
  lastLook?: boolean;
  /** Your own id (1..64 chars); generated when omitted. */
  quoteId?: string;
}

/** Thrown by quote()/decline()/cancelQuote() when there is no authenticated socket to send on. */
export class MakerClientError extends Error {
  constructor(
    readonly code: 'NOT_CONNECTED' | 'CLOSED' | 'AUTH_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'MakerClientError';
  }
}

const OPEN = 1;
const CLOSED = 3;
/** How long close() waits for the server's close frame before it drops the socket (terminate, where there is one). */
const CLOSE_GRACE_MS = 1_000;
const PERMANENT_AUTH_FAILURES: ReadonlySet<AuthFailureReason> = new Set(['INVALID_SIGNATURE', 'UNKNOWN_MAKER', 'MALFORMED']);

/** Delay before reconnect attempt `attempt` (0-based): capped exponential with +/- jitter. Pure. */
export function backoffDelayMs(attempt: number, options: Required<ReconnectOptions>, random: () => number = Math.random): number {
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** attempt);
  const spread = base * options.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(base + spread));
}

export class MakerClient {
  readonly #url: string;
  readonly #signer: MakerSigner;
  readonly #domainTag: string;
  readonly #options: MakerClientOptions;
  readonly #reconnect: Required<ReconnectOptions> | null;
  readonly #listeners = new Map<keyof MakerClientEvents, Set<(event: never) => void>>();
  #socket: SocketLike | null = null;
  #isAuthenticated = false;
  #isClosedByUser = false;
  #stopReason: AuthFailureReason | null = null;
  #attempt = 0;
  #reconnectImmediately = false;
  #reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  #silenceTimer: ReturnType<typeof setTimeout> | null = null;
  #session: MakerClientEvents['authenticated'] | null = null;
  /** The last seq read on the current socket (0 before any); what a resume names with its session. */
  #lastSeq = 0;
  #quoteSeq = 0;
  #firstAuth: { resolve: () => void; reject: (err: Error) => void; promise: Promise<void> } | null = null;

  constructor(options: MakerClientOptions) {
    if ((options.privateKey === undefined) === (options.signer === undefined)) {
      throw new TypeError('give exactly one of privateKey and signer');
    }
    this.#options = options;
    this.#signer = options.signer ?? privateKeySigner(options.privateKey!);
    this.#domainTag = options.domainTag ?? DEFAULT_DOMAIN_TAG;
    this.#url = toSocketUrl(options.url);
    this.#reconnect =
      options.reconnect === false
        ? null
        : { initialDelayMs: 250, maxDelayMs: 30_000, factor: 2, jitter: 0.2, ...options.reconnect };
  }

  /** The signer's address as given (EIP-55 or lowercase). */
  get address(): string {
    return this.#signer.address;
  }

  get isAuthenticated(): boolean {
    return this.#isAuthenticated;
  }

  /** The last seq read on the current socket's stream (0 before any). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** The current bearer session for maker HTTP routes (`Authorization: Bearer <token>`), or null. */
  get session(): MakerClientEvents['authenticated'] | null {
    return this.#session;
  }

  /** Opens the socket; resolves once authenticated (later drops reconnect on their own). */
  connect(): Promise<void> {
    if (this.#firstAuth !== null) return this.#firstAuth.promise;
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    this.#firstAuth = { resolve, reject, promise };
    void this.#open();
    return promise;
  }

  /** Stops for good: closes the socket and never reconnects. */
  close(): void {
    this.#isClosedByUser = true;
    this.#clearTimers();
    this.#firstAuth?.reject(new MakerClientError('CLOSED', 'client closed before it authenticated'));
    const socket = this.#socket;
    if (socket === null || socket.readyState === CLOSED) return;
    // CLOSING (a close the server or the SDK began) gets the grace too: on a dead link it would never finish.
    if (socket.readyState <= OPEN) socket.close(1000, 'client closed');
    // A live server answers the close handshake within a round trip; a dead link never does, and ws would
    // hold the socket, and with it the bot's process, for its 30 s close timeout. Unref'd: it keeps nothing alive.
    if (typeof socket.terminate !== 'function') return;
    const grace = setTimeout(() => {
      if (socket.readyState !== CLOSED) socket.terminate!();
    }, CLOSE_GRACE_MS);
    (grace as { unref?: () => void }).unref?.();
  }

  on<K extends keyof MakerClientEvents>(event: K, listener: Listener<K>): () => void {
    let set = this.#listeners.get(event);
    if (set === undefined) this.#listeners.set(event, (set = new Set()));
    set.add(listener as (event: never) => void);
    return () => this.off(event, listener);
  }

  off<K extends keyof MakerClientEvents>(event: K, listener: Listener<K>): void {
    this.#listeners.get(event)?.delete(listener as (event: never) => void);
  }

  /** The next `event`, as a promise. */
  once<K extends keyof MakerClientEvents>(event: K): Promise<MakerClientEvents[K]> {
    return new Promise((resolve) => {
      const off = this.on(event, (e) => {
        off();
        resolve(e);
      });
    });
  }

  /** Quotes an rfq; returns the quote_id (answered by a quote_ack or quote_reject event). */
  quote(requestId: string, options: QuoteOptions): string {
    if (!isQuoteOdds(options.odds)) throw new RangeError(`odds must be > 1 with at most 4 decimals, got ${options.odds}`);
    const maxWagerMicros = String(options.maxWagerMicros);
    if (!/^[1-9][0-9]{0,18}$/.test(maxWagerMicros)) throw new RangeError(`maxWagerMicros must be a positive integer, got ${maxWagerMicros}`);
    const quoteId = options.quoteId ?? `q${(++this.#quoteSeq).toString(36)}-${Date.now().toString(36)}`;
    this.#send({
      type: 'quote',
      request_id: requestId,
      quote_id: quoteId,
      odds: options.odds,
      max_wager_micros: maxWagerMicros,
      last_look: options.lastLook ?? false,
    });
    return quoteId;
  }

  /** Declines an rfq (lets it close early when every maker has answered). */
  decline(requestId: string): void {
    this.#send({ type: 'decline', request_id: requestId });
  }

  /** Withdraws a quote that was not yet selected (answered by quote_cancelled, or server_error QUOTE_NOT_FOUND). */
  cancelQuote(requestId: string, quoteId: string): void {
    this.#send({ type: 'quote_cancel', request_id: requestId, quote_id: quoteId });
  }

  /** Withdraws every standing quote of this maker, on all its sockets (answered by quotes_cancelled). */
  cancelAllQuotes(): void {
    this.#send({ type: 'quote_cancel_all' });
  }

  /** Lifts a tripped protection (answered by protection_reset_ok). */
  resetProtection(): void {
    this.#send({ type: 'protection_reset' });
  }

  /** GET /v1/mm/quotes: this maker's standing quotes on all its sockets. */
  async listQuotes(): Promise<StandingQuote[]> {
    return (await this.#http<{ quotes: StandingQuote[] }>('GET', '/v1/mm/quotes')).quotes;
  }

  getProtection(): Promise<ProtectionView> {
    return this.#http('GET', '/v1/mm/protection');
  }

  /** PUT /v1/mm/protection: all four limits, each null for none. */
  setProtection(limits: ProtectionLimitsBody): Promise<ProtectionView> {
    return this.#http('PUT', '/v1/mm/protection', limits);
  }

  getStats(sinceMs?: number): Promise<StatsView> {
    return this.#http('GET', sinceMs === undefined ? '/v1/mm/stats' : `/v1/mm/stats?since_ms=${sinceMs}`);
  }

  #http<T>(method: 'GET' | 'PUT', path: string, body?: unknown): Promise<T> {
    const session = this.#session;
    if (session === null) return Promise.reject(new MakerClientError('NOT_CONNECTED', 'no session yet; wait for the authenticated event'));
    return makerRequest<T>(httpBaseOf(this.#url), session.sessionToken, method, path, body);
  }

  // --- socket lifecycle --------------------------------------------------------------------------------

  async #open(): Promise<void> {
    const Impl = this.#options.WebSocket ?? (await defaultWebSocket());
    if (this.#isClosedByUser) return;
    const socket = new Impl(this.#url);
    this.#socket = socket;
    this.#resetSilenceTimer(socket);
    socket.onmessage = (event) => {
      if (this.#socket !== socket || typeof event.data !== 'string') return;
      this.#resetSilenceTimer(socket);
      let message: ServerToMakerMessage;
      try {
        message = JSON.parse(event.data) as ServerToMakerMessage;
      } catch {
        return; // the server sends JSON only; a broken frame is a transport fault the close will report
      }
      this.#onMessage(socket, message).catch((error: unknown) => {
        // Only the signer can fail here: without a valid response this socket cannot authenticate.
        if (this.#socket === socket) socket.close(4001, 'signer failed');
        this.#reportError(error);
      });
    };
    socket.onclose = (event) => this.#onClose(socket, event.code, event.reason);
    socket.onerror = () => {}; // always followed by onclose, which decides
  }

  async #onMessage(socket: SocketLike, message: ServerToMakerMessage): Promise<void> {
    // The stream (issue 22): a seq at or below the last one read is a repeat, dropped; the rest are handed on
    // without it (events are the protocol's messages; `lastSeq` tells where the stream stands).
    const seq = (message as { seq?: number }).seq;
    if (seq !== undefined) {
      if (seq <= this.#lastSeq) return;
      this.#lastSeq = seq;
      delete (message as { seq?: number }).seq;
    }
    switch (message.type) {
      case 'auth_challenge':
        return this.#answerChallenge(socket, message);
      case 'auth_result':
        if (message.success) {
          this.#resumeOn(socket, message.session_token);
          this.#isAuthenticated = true;
          this.#attempt = 0;
          this.#session = { address: this.#signer.address, sessionToken: message.session_token, expiresAtMs: message.expires_at_ms };
          this.#emit('authenticated', this.#session);
          this.#firstAuth?.resolve();
        } else {
          if (PERMANENT_AUTH_FAILURES.has(message.reason) && this.#options.retryOnAuthFailure !== true) this.#stopReason = message.reason;
          this.#emit('auth_failed', { reason: message.reason });
        }
        return;
      case 'heartbeat':
        return this.#sendOn(socket, { type: 'pong', ts: message.ts });
      case 'AUTH_EXPIRED':
        this.#reconnectImmediately = true;
        return this.#emit('session_expired', message);
      case 'last_look':
        this.#emit('last_look', message);
        return this.#answerLastLook(socket, message);
      case 'rfq':
        return this.#emit('rfq', message);
      case 'quote_ack':
        return this.#emit('quote_ack', message);
      case 'quote_reject':
        return this.#emit('quote_reject', message);
      case 'rfq_result':
        return this.#emit('rfq_result', message);
      case 'error':
        return this.#emit('server_error', message);
      case 'resumed':
        return this.#emit('resumed', message);
      case 'resume_failed':
        return this.#emit('resume_failed', message);
      case 'quote_cancelled':
        return this.#emit('quote_cancelled', message);
      case 'quotes_cancelled':
        return this.#emit('quotes_cancelled', message);
      case 'protection_tripped':
        return this.#emit('protection_tripped', message);
      case 'protection_reset_ok':
        return this.#emit('protection_reset_ok', message);
      default:
        return; // a message type newer than this SDK: ignored, as the protocol allows
    }
  }

  /**
   * A new socket authenticated: unless resuming is off, ask for what the previous socket's stream sent after
   * the last seq read there (docs/maker-protocol.md section 3.5). This socket's own stream starts at 1.
   */
  #resumeOn(socket: SocketLike, newToken: string): void {
    const previous = this.#session;
    const lastSeq = this.#lastSeq;
    this.#lastSeq = 0;
    if (previous === null || this.#options.resume === false || previous.sessionToken === newToken) return;
    this.#sendOn(socket, { type: 'resume', session_token: previous.sessionToken, last_seq: lastSeq });
  }

  async #answerChallenge(socket: SocketLike, challenge: AuthChallengeMessage): Promise<void> {
    const signature = await this.#signer.signMessage(makerChallengeBytes(challenge, this.#domainTag));
    this.#sendOn(socket, { type: 'auth_response', address: this.#signer.address, signature });
  }

  async #answerLastLook(socket: SocketLike, message: LastLookMessage): Promise<void> {
    let accept = true;
    if (this.#options.onLastLook !== undefined) {
      try {
        accept = await this.#options.onLastLook(message);
      } catch (error) {
        accept = false; // a failing callback must never confirm a fill
        this.#reportError(error);
      }
    }
    this.#sendOn(socket, { type: 'last_look_response', request_id: message.request_id, quote_id: message.quote_id, accept });
  }

  #onClose(socket: SocketLike, code: number, reason: string): void {
    if (this.#socket !== socket) return;
    this.#socket = null;
    this.#isAuthenticated = false;
    this.#clearTimers();
    const stop = this.#isClosedByUser || this.#reconnect === null || this.#stopReason !== null;
    const delayMs = stop ? null : this.#reconnectImmediately ? 0 : backoffDelayMs(this.#attempt++, this.#reconnect!);
    this.#reconnectImmediately = false;
    this.#emit('disconnected', { code, reason, willReconnect: !stop, reconnectInMs: delayMs });
    if (delayMs === null) {
      const why = this.#stopReason === null ? `socket closed (${code} ${reason})` : `authentication refused: ${this.#stopReason}`;
      this.#firstAuth?.reject(new MakerClientError(this.#stopReason === null ? 'CLOSED' : 'AUTH_FAILED', why));
      return;
    }
    // A `disconnected` listener may have called close(): then no reconnect timer is armed (it would only keep
    // the process alive for the backoff).
    if (this.#isClosedByUser) return;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null;
      void this.#open();
    }, delayMs);
  }

  #resetSilenceTimer(socket: SocketLike): void {
    if (this.#silenceTimer !== null) clearTimeout(this.#silenceTimer);
    // A half-open TCP link never closes by itself: no heartbeat for this long means it is dead.
    this.#silenceTimer = setTimeout(() => {
      if (this.#socket === socket) this.#dropDeadLink(socket);
    }, this.#options.serverSilenceMs ?? 50_000);
  }

  /** Ends a socket whose server went silent and reconnects now, without waiting for the socket's close event. */
  #dropDeadLink(socket: SocketLike): void {
    dropDeadSocket(socket);
    // undici's WebSocket (the global one from Node 22) has no terminate() and, after close(), never reports the
    // close of a link that stays silent; ws reports it on a later turn. So the drop is handled here, and the
    // socket's own close event, whenever it comes, is ignored (#onClose skips a socket that is no longer current).
    this.#onClose(socket, 1006, 'server silent');
  }

  #clearTimers(): void {
    if (this.#reconnectTimer !== null) clearTimeout(this.#reconnectTimer);
    if (this.#silenceTimer !== null) clearTimeout(this.#silenceTimer);
    this.#reconnectTimer = null;
    this.#silenceTimer = null;
  }

  #send(message: MakerToServerMessage): void {
    if (this.#isClosedByUser) throw new MakerClientError('CLOSED', 'client is closed');
    const socket = this.#socket;
    if (socket === null || !this.#isAuthenticated) throw new MakerClientError('NOT_CONNECTED', 'not authenticated; wait for the authenticated event');
    this.#sendOn(socket, message);
  }

  #sendOn(socket: SocketLike, message: MakerToServerMessage): void {
    if (this.#socket === socket && socket.readyState === OPEN) socket.send(JSON.stringify(message));
  }

  #reportError(error: unknown): void {
    if ((this.#listeners.get('client_error')?.size ?? 0) > 0) return this.#emit('client_error', { error });
    queueMicrotask(() => {
      throw error;
    });
  }

  /**
   * Calls every listener of `event`. A listener that throws is the caller's bug: it is reported (client_error,
   * or thrown on a fresh microtask) and the others still run, but it never reaches the socket: a throw must
   * not close the connection and withdraw every standing quote (docs/maker-protocol.md, section 8).
   */
  #emit<K extends keyof MakerClientEvents>(event: K, payload: MakerClientEvents[K]): void {
    for (const listener of [...(this.#listeners.get(event) ?? [])]) {
      try {
        (listener as Listener<K>)(payload);
      } catch (error) {
        if (event === 'client_error') {
          queueMicrotask(() => {
            throw error;
          });
        } else {
          this.#reportError(error);
        }
      }
    }
  }
}

/**
 * Ends a socket whose peer has gone silent. close() starts the close handshake and keeps the TCP socket until the
 * peer answers it, which a dead link never does (ws gives up after 30 s; undici waits on); terminate() destroys
 * it at once. A browser-style WebSocket has no terminate(), so close() it is.
 */
function dropDeadSocket(socket: SocketLike): void {
  if (typeof socket.terminate === 'function') socket.terminate();
  else socket.close(4000, 'server silent');
}

/** `ws://h:p`, `http://h:p` or a full `.../v1/mm/ws` URL to the socket URL. */
export function toSocketUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol === 'http:') parsed.protocol = 'ws:';
  if (parsed.protocol === 'https:') parsed.protocol = 'wss:';
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = MAKER_WS_PATH;
  return parsed.toString();
}

async function defaultWebSocket(): Promise<SocketConstructor> {
  const global = (globalThis as { WebSocket?: unknown }).WebSocket;
  if (typeof global === 'function') return global as SocketConstructor;
  try {
    const mod = await import('ws');
    return mod.default as unknown as SocketConstructor;
  } catch {
    throw new Error('no WebSocket implementation: install the `ws` package or pass options.WebSocket');
  }
}
