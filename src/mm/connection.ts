// Main thread. The state of one maker socket, owned by the gateway (gateway.ts) and held by uWS as the
// socket's user data. Plain data: every decision about it is made in the gateway and its parts.
import type { WebSocket } from 'uWebSockets.js';
import type { Timer } from '../lib/clock.js';
import type { Challenge } from './handshake.js';
import type { ArenaBytes } from './byte-arena.js';
import type { MakerStream } from './stream.js';

/** One per authenticated connection (a maker address may hold several connections). */
export type MakerId = string;

export type Phase = 'awaiting_response' | 'verifying' | 'authenticated';

/** Per-connection state; uWS holds it as the socket's user data. */
export class Connection {
  ws: WebSocket<UserData> | null = null;
  phase: Phase = 'awaiting_response';
  isClosed = false;
  /** Over the send-buffer limit: nothing more is sent; the close (SLOW_CONSUMER) is queued. */
  isSlow = false;
  /** Single use: taken by the first auth_response, good or bad. */
  challenge: Challenge | null = null;
  makerId: MakerId | null = null;
  address: string | null = null;
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
  /** Set right after the successful auth_result: from then on every message is numbered (resume.ts). */
  stream: StreamSlot | null = null;
  /** The auth deadline, on the gateway's clock; cleared when the socket leaves the pending set. */
  authTimer: Timer | null = null;
  /** The session's expiry, on the gateway's clock; cleared when the socket closes. */
  sessionTimer: Timer | null = null;
  /** Not yet sent its auth_response (pending-auth.ts: the one an eviction may close). */
  get isIdleWhilePending(): boolean {
    return this.phase === 'awaiting_response';
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
