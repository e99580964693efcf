// Main thread, for the maker gateway (gateway.ts). Every frame a maker sends lands here, in the uWS callback
// that read it: before auth it goes to the authenticator; after, it is decoded and validated (inbound.ts) and
// handed to the RFQ engine's dispatcher in the same call (no extra hop), or answered here: pong, resume
// (docs/maker-protocol.md section 3.5) and the `error` of a message that cannot be taken.
//
// Cost per quote: a clock read and a token bucket (frame-rate.ts), then either the hot form read from its
// bytes (hot-frames.ts) or a decode and a compiled schema check, and one call; nothing else is allocated here.
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { hashToken } from '../auth/sessions.js';
import type { DeclineMessage, LastLookResponseMessage, MakerToServerMessage, QuoteCancelMessage, QuoteMessage } from '../contract/mm.js';
import type { ResumeMessage } from '../contract/mm-stream.js';
import type { MakerAuthenticator } from './authenticator.js';
import { makerAddressOf, type Authenticated, type Connection, type MakerId } from './connection.js';
import { takeFrameToken, type FrameRate } from './frame-rate.js';
import { HotFrameReader } from './hot-frames.js';
import { decodeFrame, isMakerMessage, makerMessageError } from './inbound.js';
import type { MakerStreams } from './resume.js';
import type { MakerSender } from './sender.js';

/**
 * The RFQ engine's side. Every method is called synchronously from the uWS callback that caused it (no
 * extra hop), on the main thread. Messages are already validated (once: nothing downstream checks them
 * again); quote.last_look is always set (default false). onMakerDisconnected is called once for every
 * authenticated connection that closes, whatever the reason (including a close caused by send/broadcast,
 * which is reported right after that call returns).
 */
export interface MakerDispatcher {
  onQuote(makerId: MakerId, address: string, msg: QuoteMessage): void;
  onDecline(makerId: MakerId, address: string, msg: DeclineMessage): void;
  onQuoteCancel(makerId: MakerId, address: string, msg: QuoteCancelMessage): void;
  onLastLookResponse(makerId: MakerId, address: string, msg: LastLookResponseMessage): void;
  /** quote_cancel_all: every standing quote of the maker's address. */
  onQuoteCancelAll(makerId: MakerId, address: string): void;
  onProtectionReset(makerId: MakerId, address: string): void;
  /**
   * A resume replayed these rfqs on `makerId`'s connection: it may now quote them (it joins their audience).
   * Called before the replayed frames are written, so a quote on them can only come after.
   */
  onRfqsReplayed(makerId: MakerId, requestIds: string[]): void;
  onMakerDisconnected(makerId: MakerId, address: string): void;
}

export interface MessageDispatchDeps {
  clock: Clock;
  log: Logger;
  streams: Pick<MakerStreams, 'attachedConnOf' | 'resume'>;
  sender: MakerSender;
  authenticator: Pick<MakerAuthenticator, 'onMessage'>;
  /** Each socket's inbound frame rate (frame-rate.ts). */
  frameRate: FrameRate;
  /** Where the messages about RFQs go: the desk (desk.ts), in front of the RFQ engine. */
  dispatcher: MakerDispatcher;
}

/** The start of a serialized rfq's body (stream.ts bodyOf): how a replay finds the rfqs among its frames. */
const RFQ_BODY_PREFIX = '"type":"rfq",';

export class MessageDispatch {
  readonly #hot = new HotFrameReader();

  constructor(private readonly deps: MessageDispatchDeps) {}

  /** uWS's `message` handler, for the socket's connection. */
  onFrame(conn: Connection, frame: ArrayBuffer, isBinary: boolean): void {
    if (conn.isClosed) return;
    // First, before any parse: a flood costs a bucket check per frame, then its socket.
    if (!takeFrameToken(conn, this.deps.frameRate, this.deps.clock.nowMs())) return this.deps.sender.fail(conn, 'RATE_LIMITED');
    // One phase check per frame: before auth every frame is the authenticator's; after, the narrowed `auth`
    // carries the maker's id and address on, so nothing reads the phase again.
    const auth = conn.auth;
    if (auth.phase !== 'authenticated') return this.deps.authenticator.onMessage(conn, decodeFrame(frame, isBinary));
    // A decline or quote in the SDK's exact form is read straight from its bytes (hot-frames.ts); any other
    // frame, and any bad one, goes the general way: decode, parse, the compiled schema, its documented error.
    const hot = isBinary ? null : this.#hot.read(frame);
    if (hot !== null) return this.#dispatch(conn, auth, hot);
    const value = decodeFrame(frame, isBinary);
    const sender = this.deps.sender;
    if (value === null) return sender.sendError(conn, 'INVALID_JSON');
    if (!isMakerMessage(value)) return void sender.send(conn, makerMessageError(value));
    this.#dispatch(conn, auth, value);
  }

  /** A message that passed its schema, from an authenticated connection: answered here or handed on. */
  #dispatch(conn: Connection, auth: Authenticated, msg: MakerToServerMessage): void {
    const sender = this.deps.sender;
    const { makerId, address } = auth;
    if (msg.type === 'pong') {
      conn.unansweredHeartbeats = 0;
      return;
    }
    if (msg.type === 'auth_response') return sender.sendError(conn, 'ALREADY_AUTHENTICATED');
    if (msg.type === 'resume') return this.#resume(conn, auth, msg);
    const dispatcher = this.deps.dispatcher;
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

  /**
   * `resume` (docs/maker-protocol.md section 3.5): the named session must be one this connection's address
   * held, and its stream still kept. Only the token's key names the stream: this connection has authenticated
   * its address with a signature of its own, so the old session need not be live, and a renewal (AUTH_EXPIRED:
   * the old session has just expired) resumes like any drop. A stream still attached to a socket the maker
   * gave up (half-open, not yet noticed here) is closed first, which withdraws its quotes as any disconnect
   * does, then resumed; another address's socket is never closed.
   */
  #resume(conn: Connection, auth: Authenticated, msg: ResumeMessage): void {
    const { sender, streams } = this.deps;
    const slot = auth.stream;
    const sessionKey = hashToken(msg.session_token);
    const nowMs = this.deps.clock.nowMs();
    const stale = streams.attachedConnOf(sessionKey);
    if (stale !== null && stale !== conn && makerAddressOf(stale) === auth.address) sender.close(stale, 'RESUMED_ELSEWHERE');
    // The address check of a detached stream is the resume's own (resume.ts): another's is UNKNOWN_SESSION.
    const decision = streams.resume(slot, sessionKey, msg.last_seq, nowMs);
    if (!decision.ok) return void sender.send(conn, { type: 'resume_failed', reason: decision.reason, oldest_seq: decision.oldestSeq });
    const requestIds: string[] = [];
    for (const body of decision.bodies) {
      if (body.startsWith(RFQ_BODY_PREFIX)) requestIds.push((JSON.parse('{' + body) as { request_id: string }).request_id);
    }
    if (requestIds.length > 0) this.deps.dispatcher.onRfqsReplayed(auth.makerId, requestIds);
    // Each under the deadline it was held under: an rfq replayed now is not replayed again past its quote deadline.
    decision.bodies.forEach((body, i) => sender.writer.write(conn, slot.stream.append(body, nowMs, decision.deadlinesMs[i]!)));
    this.deps.log.info({ connId: conn.connId, makerId: auth.makerId, replayed: decision.bodies.length }, 'maker stream resumed');
    sender.send(conn, { type: 'resumed', replayed: decision.bodies.length, next_seq: slot.stream.nextSeq + 1 });
  }
}

function assertNever(value: never): never {
  throw new TypeError(`unhandled maker message ${JSON.stringify(value)}`);
}
