// Maker SDK, in the maker's process. The client's events and their listeners. A listener that throws is the
// maker's bug: it is reported (client_error, or thrown on a fresh microtask) and the other listeners still run,
// but it never reaches the socket: a throw must not close the connection and withdraw every standing quote
// (docs/maker-protocol.md, section 8).
import type {
  AuthExpiredMessage,
  AuthFailureReason,
  ErrorMessage,
  LastLookMessage,
  QuoteAckMessage,
  QuoteRejectMessage,
  RfqMessage,
  RfqResultMessage,
} from '../contract/mm.js';
import type {
  ProtectionResetOkMessage,
  ProtectionTrippedMessage,
  QuoteCancelledMessage,
  QuotesCancelledMessage,
  ResumeFailedMessage,
  ResumedMessage,
} from '../contract/mm-stream.js';

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
export type Listener<K extends keyof MakerClientEvents> = (event: MakerClientEvents[K]) => void;

export class ClientEvents {
  readonly #listeners = new Map<keyof MakerClientEvents, Set<(event: never) => void>>();

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

  /** Calls every listener of `event`; one that throws is reported, and the others still run. */
  emit<K extends keyof MakerClientEvents>(event: K, payload: MakerClientEvents[K]): void {
    for (const listener of [...(this.#listeners.get(event) ?? [])]) {
      try {
        (listener as Listener<K>)(payload);
      } catch (error) {
        if (event === 'client_error') {
          queueMicrotask(() => {
            throw error;
          });
        } else {
          this.reportError(error);
        }
      }
    }
  }

  /** A client_error event, or, without a listener, a throw on a fresh microtask (uncaught: never swallowed). */
  reportError(error: unknown): void {
    if ((this.#listeners.get('client_error')?.size ?? 0) > 0) return this.emit('client_error', { error });
    queueMicrotask(() => {
      throw error;
    });
  }
}
