// Maker SDK: a typed client of the parlayd market-maker socket (docs/maker-protocol.md). Runs in the maker's
// process, on its event loop. It connects, signs the challenge, answers heartbeats, reconnects with
// exponential backoff (and jitter) on a drop or AUTH_EXPIRED, and surfaces RFQs as events; the maker answers
// with quote() / decline() and confirms last looks through a callback. This class holds the connection and
// its life (open, drop, reconnect); its parts: events.ts (listeners), quoting.ts (what a maker sends),
// resume.ts (the stream's seq), auth.ts (the challenge's answer), reconnect.ts (backoff), socket.ts (the
// WebSocket), options.ts, errors.ts, maker-http.ts (the maker's HTTP routes).
import type {
  AuthChallengeMessage,
  AuthFailureReason,
  LastLookMessage,
  MakerToServerMessage,
  ServerToMakerMessage,
} from '../contract/mm.js';
import { authResponse, stopsClient } from './auth.js';
import { clientErrors } from './errors.js';
import { ClientEvents, type Listener, type MakerClientEvents } from './events.js';
import {
  httpBaseOf,
  makerRequest,
  type ProtectionLimitsBody,
  type ProtectionView,
  type StandingQuote,
  type StatsView,
} from './maker-http.js';
import { DEFAULT_DOMAIN_TAG, type MakerClientOptions } from './options.js';
import { QuoteIds, quoteMessage, type QuoteOptions } from './quoting.js';
import { backoffDelayMs, reconnectPolicyOf, type ReconnectOptions } from './reconnect.js';
import { StreamPosition } from './resume.js';
import { privateKeySigner, type MakerSigner } from './signer.js';
import { CLOSED, OPEN, defaultWebSocket, dropDeadSocket, toSocketUrl, type SocketLike } from './socket.js';

/** How long close() waits for the server's close frame before it drops the socket (terminate, where there is one). */
const CLOSE_GRACE_MS = 1_000;
const DEFAULT_SERVER_SILENCE_MS = 50_000;

export class MakerClient {
  readonly #url: string;
  readonly #signer: MakerSigner;
  readonly #domainTag: string;
  readonly #options: MakerClientOptions;
  readonly #reconnect: Required<ReconnectOptions> | null;
  readonly #events = new ClientEvents();
  readonly #stream = new StreamPosition();
  readonly #quoteIds = new QuoteIds();
  #socket: SocketLike | null = null;
  #isAuthenticated = false;
  #isClosedByUser = false;
  #stopReason: AuthFailureReason | null = null;
  /** Failed attempts since the link last held: reset by the first heartbeat of an authenticated socket. */
  #attempt = 0;
  /**
   * Between a resume sent and its answer: what arrives then is the lost socket's frames replayed. Its last
   * look among them is dead (the drop counted it as a reject), so it is not passed on.
   */
  #isReplaying = false;
  #reconnectImmediately = false;
  #reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  #silenceTimer: ReturnType<typeof setTimeout> | null = null;
  #session: MakerClientEvents['authenticated'] | null = null;
  #firstAuth: { resolve: () => void; reject: (err: Error) => void; promise: Promise<void> } | null = null;

  constructor(options: MakerClientOptions) {
    if ((options.privateKey === undefined) === (options.signer === undefined)) throw clientErrors.signerChoice();
    this.#options = options;
    this.#signer = options.signer ?? privateKeySigner(options.privateKey!);
    this.#domainTag = options.domainTag ?? DEFAULT_DOMAIN_TAG;
    this.#url = toSocketUrl(options.url);
    this.#reconnect = reconnectPolicyOf(options.reconnect);
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
    return this.#stream.lastSeq;
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
    this.#firstAuth?.reject(clientErrors.closedBeforeAuth());
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
    return this.#events.on(event, listener);
  }

  off<K extends keyof MakerClientEvents>(event: K, listener: Listener<K>): void {
    this.#events.off(event, listener);
  }

  /** The next `event`, as a promise. */
  once<K extends keyof MakerClientEvents>(event: K): Promise<MakerClientEvents[K]> {
    return this.#events.once(event);
  }

  /** Quotes an rfq; returns the quote_id (answered by a quote_ack or quote_reject event). */
  quote(requestId: string, options: QuoteOptions): string {
    const message = quoteMessage(requestId, options, this.#quoteIds);
    this.#send(message);
    return message.quote_id;
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
    if (session === null) return Promise.reject(clientErrors.noSession());
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
        this.#events.reportError(error);
      });
    };
    socket.onclose = (event) => this.#onClose(socket, event.code, event.reason);
    socket.onerror = () => {}; // always followed by onclose, which decides
  }

  async #onMessage(socket: SocketLike, message: ServerToMakerMessage): Promise<void> {
    if (!this.#stream.accept(message)) return; // a repeat of a seq already read
    const events = this.#events;
    switch (message.type) {
      case 'auth_challenge':
        return this.#answerChallenge(socket, message);
      case 'auth_result':
        if (message.success) {
          const resume = this.#stream.onAuthenticated(
            this.#session?.sessionToken ?? null,
            message.session_token,
            this.#options.resume !== false,
          );
          if (resume !== null) this.#sendOn(socket, resume);
          this.#isReplaying = resume !== null;
          this.#isAuthenticated = true;
          this.#session = { address: this.#signer.address, sessionToken: message.session_token, expiresAtMs: message.expires_at_ms };
          events.emit('authenticated', this.#session);
          this.#firstAuth?.resolve();
        } else {
          if (stopsClient(message.reason, this.#options)) this.#stopReason = message.reason;
          events.emit('auth_failed', { reason: message.reason });
        }
        return;
      case 'heartbeat':
        // The link has held past its authentication: the backoff starts over. Reset at auth instead, a server
        // that closes each socket right after it (RATE_LIMITED, SLOW_CONSUMER) was reconnected to for ever at
        // the first delay.
        this.#attempt = 0;
        return this.#sendOn(socket, { type: 'pong', ts: message.ts });
      case 'AUTH_EXPIRED':
        this.#reconnectImmediately = true;
        return events.emit('session_expired', message);
      case 'last_look':
        // Replayed by a resume: offered to the lost socket, and ended as a reject when it dropped. Confirming
        // it (or a handler hedging for it) would be for a fill that cannot happen; its rfq_result follows.
        if (this.#isReplaying) return;
        events.emit('last_look', message);
        return this.#answerLastLook(socket, message);
      case 'rfq':
        return events.emit('rfq', message);
      case 'quote_ack':
        return events.emit('quote_ack', message);
      case 'quote_reject':
        return events.emit('quote_reject', message);
      case 'rfq_result':
        return events.emit('rfq_result', message);
      case 'error':
        return events.emit('server_error', message);
      case 'resumed':
        this.#isReplaying = false;
        return events.emit('resumed', message);
      case 'resume_failed':
        this.#isReplaying = false;
        return events.emit('resume_failed', message);
      case 'quote_cancelled':
        return events.emit('quote_cancelled', message);
      case 'quotes_cancelled':
        return events.emit('quotes_cancelled', message);
      case 'protection_tripped':
        return events.emit('protection_tripped', message);
      case 'protection_reset_ok':
        return events.emit('protection_reset_ok', message);
      default:
        return; // a message type newer than this SDK: ignored, as the protocol allows
    }
  }

  async #answerChallenge(socket: SocketLike, challenge: AuthChallengeMessage): Promise<void> {
    this.#sendOn(socket, await authResponse(this.#signer, this.#domainTag, challenge));
  }

  async #answerLastLook(socket: SocketLike, message: LastLookMessage): Promise<void> {
    let accept = true;
    if (this.#options.onLastLook !== undefined) {
      try {
        accept = await this.#options.onLastLook(message);
      } catch (error) {
        accept = false; // a failing callback must never confirm a fill
        this.#events.reportError(error);
      }
    }
    this.#sendOn(socket, { type: 'last_look_response', request_id: message.request_id, quote_id: message.quote_id, accept });
  }

  #onClose(socket: SocketLike, code: number, reason: string): void {
    if (this.#socket !== socket) return;
    this.#socket = null;
    this.#isAuthenticated = false;
    this.#isReplaying = false;
    this.#clearTimers();
    const stop = this.#isClosedByUser || this.#reconnect === null || this.#stopReason !== null;
    const delayMs = stop ? null : this.#reconnectImmediately ? 0 : backoffDelayMs(this.#attempt++, this.#reconnect!);
    this.#reconnectImmediately = false;
    this.#events.emit('disconnected', { code, reason, willReconnect: !stop, reconnectInMs: delayMs });
    if (delayMs === null) {
      this.#firstAuth?.reject(clientErrors.stopped(this.#stopReason, code, reason));
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
    }, this.#options.serverSilenceMs ?? DEFAULT_SERVER_SILENCE_MS);
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
    if (this.#isClosedByUser) throw clientErrors.closed();
    const socket = this.#socket;
    if (socket === null || !this.#isAuthenticated) throw clientErrors.notAuthenticated();
    this.#sendOn(socket, message);
  }

  #sendOn(socket: SocketLike, message: MakerToServerMessage): void {
    if (this.#socket === socket && socket.readyState === OPEN) socket.send(JSON.stringify(message));
  }
}
