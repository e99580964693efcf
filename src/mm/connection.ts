// Main thread. The state of one maker socket, owned by the gateway (gateway.ts) and held by uWS as the
// socket's user data. Plain data: every decision about it is made in the gateway and its parts.
import type { WebSocket } from 'uWebSockets.js';
import type { Timer } from '../lib/clock.js';
import type { Challenge } from './handshake.js';
import type { ArenaBytes } from './byte-arena.js';
import type { MakerStream } from './stream.js';

/** One per authenticated connection (a maker address may hold several connections). */
export type MakerId = string;

/**
 * Where a socket is in its authentication (interface.md "Market-maker WebSocket flow", contract section 7).
 * Each phase holds exactly what is true in it, and a transition (authenticator.ts) replaces it as a whole:
 * opening -> awaiting_response -> verifying -> authenticated, or a close from any of them.
 */
export type AuthState = Opening | AwaitingResponse | Verifying | Authenticated;

/** Upgraded, not yet opened (or closed at its open: shutdown, no pending place): it holds nothing yet. */
export interface Opening {
  readonly phase: 'opening';
}

/** Sent its challenge; waiting for the one auth_response it may answer with. */
export interface AwaitingResponse {
  readonly phase: 'awaiting_response';
  /**
   * Used once: a good auth_response moves the socket on to verifying, which holds no challenge, and a bad
   * one closes it at once.
   */
  readonly challenge: Challenge;
  /** The auth deadline, on the gateway's clock; cleared when the socket leaves the pending set. */
  readonly authTimer: Timer;
}

/** Its auth_response passed the checks; the signature is being recovered, then the session made durable. */
export interface Verifying {
  readonly phase: 'verifying';
  /** The address the auth_response claims (not yet proven). */
  readonly address: string;
  /** The same deadline as while awaiting the response: it still runs. */
  readonly authTimer: Timer;
}

/** The final phase: the maker proved its address and holds a session. */
export interface Authenticated {
  readonly phase: 'authenticated';
  readonly makerId: MakerId;
  readonly address: string;
  /** Opened right after the successful auth_result: from then on every message is numbered (resume.ts). */
  readonly stream: StreamSlot;
  /** The session's expiry, on the gateway's clock; cleared when the socket closes. */
  readonly sessionTimer: Timer;
}

/** Shared by every socket not yet opened: a phase with no fields needs no object of its own. */
const OPENING: Opening = { phase: 'opening' };

/** Per-connection state; uWS holds it as the socket's user data. */
export class Connection {
  ws: WebSocket<UserData> | null = null;
  auth: AuthState = OPENING;
  isClosed = false;
  /** Over the send-buffer limit: nothing more is sent; the close (SLOW_CONSUMER) is queued. */
  isSlow = false;
  unansweredHeartbeats = 0;
  /** Its inbound frame bucket (frame-rate.ts): filled when the socket opens. */
  frameTokens = 0;
  frameTokensAtMs = 0;
  /**
   * Frames not yet written, in the order they were queued (seq order): written together, corked, at the end
   * of the loop turn (socket-writer.ts), or before a close.
   */
  pending: QueuedFrame[] = [];
  /** pending[i]'s seq, when it is a numbered body (not text). */
  pendingSeqs: number[] = [];
  /** Not yet sent its auth_response (pending-auth.ts: the one an eviction may close). */
  get isIdleWhilePending(): boolean {
    return this.auth.phase === 'awaiting_response';
  }

  constructor(
    readonly connId: number,
    readonly remote: string,
    /** What the per-IP limit on sockets waiting for auth counts it under (lib/caller-network.ts). */
    readonly remoteNetwork: string,
    /** What the per-network (IPv4 /24, IPv6 /48) limit counts it under (callerWideNetwork). */
    readonly remoteWideNetwork: string,
  ) {}
}

/** The maker address the socket answered its challenge with (proven once authenticated); null before. */
export function makerAddressOf(conn: Connection): string | null {
  const auth = conn.auth;
  return auth.phase === 'verifying' || auth.phase === 'authenticated' ? auth.address : null;
}

export interface UserData {
  conn: Connection;
}

export interface StreamSlot {
  readonly stream: MakerStream;
  /** The live connection writing this stream, or null once its socket closed (detached). */
  conn: Connection | null;
  detachedAtMs: number;
  /** Connection ids whose frames land in this stream: its own, then those of the streams it resumed. */
  readonly makerIds: MakerId[];
}

/** A queued frame: the text as written (before auth, or a replay), or a numbered body's bytes. */
export type QueuedFrame = string | ArenaBytes;
