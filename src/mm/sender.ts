// Main thread, for the maker gateway (gateway.ts) and its parts. The one place a message is written to a maker
// socket and the one place a socket is closed: a message after auth_result is numbered and held for a resume
// (stream.ts), an `error` is built from the error table (protocol.ts), and a close is counted, logged and
// preceded by the frames still queued for the socket (socket-writer.ts).
//
// Cost per message: one JSON.stringify and, after auth, the stream's UTF-8 copy, which is also what the
// socket writes (socket-writer.ts). Every write is queued and flushed at the end of the loop turn.
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { LogCounts } from '../lib/log-counts.js';
import type { ServerToMakerMessage } from '../contract/mm.js';
import { makerAddressOf, type Connection } from './connection.js';
import type { GatewayMetrics } from './metrics.js';
import { CLOSE, MAKER_ERRORS, makerError, type CloseCause, type MakerErrorCode } from '../contract/maker-protocol.js';
import { SocketWriter } from './socket-writer.js';
import { ALWAYS_REPLAY, NEVER_REPLAY, bodyOf } from './stream.js';

export interface MakerSenderDeps {
  clock: Clock;
  log: Logger;
  metrics: GatewayMetrics | null;
  /** Closes before auth, counted for the periodic summary (anyone can cause them at will). */
  refusals: LogCounts;
  /** The per-socket send-buffer limit (config.mmMaxBufferedBytes). */
  softLimitBytes: number;
  /** When the frames queued in a loop turn are written (SocketWriter; setImmediate unless given). */
  endOfTurn?: ((flush: () => void) => void) | undefined;
}

export class MakerSender {
  /** Writes frames in seq order under the send-buffer limit; a socket past it is closed as SLOW_CONSUMER. */
  readonly writer: SocketWriter;

  constructor(private readonly deps: MakerSenderDeps) {
    this.writer = new SocketWriter(deps.softLimitBytes, (conn) => this.close(conn, 'SLOW_CONSUMER'), deps.endOfTurn);
  }

  /** False when the socket is gone or too far behind. */
  send(conn: Connection, message: ServerToMakerMessage): boolean {
    if (conn.isClosed || conn.ws === null) return false;
    const serialized = JSON.stringify(message);
    // After auth_result every message is numbered and held for a resume (stream.ts); before it, none is.
    const auth = conn.auth;
    if (auth.phase !== 'authenticated') return this.writer.write(conn, serialized);
    const stream = auth.stream.stream;
    const body = stream.appendOwn(bodyOf(serialized), this.deps.clock.nowMs(), replayDeadlineOf(message));
    return this.writer.writeStamped(conn, stream.lastSeq, body);
  }

  /** The `error` of `code` (the socket stays open unless the caller closes it). */
  sendError(conn: Connection, code: MakerErrorCode, requestId?: string, quoteId?: string): void {
    this.send(conn, makerError(code, requestId, quoteId));
  }

  /** error message with the code, then close with it as the reason (the `closes: true` codes). */
  fail(conn: Connection, cause: CloseCause & MakerErrorCode): void {
    this.sendError(conn, cause);
    this.close(conn, cause);
  }

  close(conn: Connection, cause: CloseCause): void {
    if (conn.isClosed || conn.ws === null) return;
    const { code, reason } = CLOSE[cause];
    const { log, metrics, refusals } = this.deps;
    metrics?.closedTotal.inc({ reason });
    const auth = conn.auth;
    if (auth.phase === 'authenticated') {
      if (cause !== 'SHUTDOWN' && cause !== 'AUTH_EXPIRED')
        log.info({ connId: conn.connId, makerId: auth.makerId, address: auth.address, reason }, 'closing maker socket');
    } else if (cause !== 'SHUTDOWN') {
      // Before auth anyone can cause a close at will (a bad signature, silence, eviction): counted, and
      // logged as one summary line per interval; each at debug level.
      refusals.count(reason);
      log.debug({ connId: conn.connId, address: makerAddressOf(conn), remote: conn.remote, reason }, 'closing maker socket before auth');
    }
    // Frames queued for a socket too slow to read them are only in its stream (held for a resume); for any
    // other close they go out before the close frame.
    if (cause === 'SLOW_CONSUMER') this.writer.drop(conn);
    else this.writer.flush(conn);
    if (conn.isClosed || conn.ws === null) return;
    conn.ws.end(code, reason); // runs the gateway's close handler synchronously
  }
}

/**
 * Whether a resume replays a message (stream.ts): an rfq until its quote deadline, liveness and stream
 * control never (a stale heartbeat, AUTH_EXPIRED or closing error would mislead the new socket), nor a last
 * look (the drop that makes a resume ended it as a reject: confirming it would be for a fill that cannot
 * happen), the rest always.
 */
export function replayDeadlineOf(message: ServerToMakerMessage): number {
  switch (message.type) {
    case 'rfq':
      return message.quote_deadline_ms;
    case 'error': // one that closed the old socket (HEARTBEAT_TIMEOUT...) is about that socket, not the stream
      return (MAKER_ERRORS as Record<string, { closes: boolean } | undefined>)[message.code]?.closes === true
        ? NEVER_REPLAY
        : ALWAYS_REPLAY;
    case 'last_look':
    case 'heartbeat':
    case 'AUTH_EXPIRED':
    case 'resumed':
    case 'resume_failed':
      return NEVER_REPLAY;
    default:
      return ALWAYS_REPLAY;
  }
}
