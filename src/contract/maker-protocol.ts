// The maker socket's constants (contract section 7, docs/maker-protocol.md): where it lives, why the server
// closes a socket (close code + reason text, both visible to the maker), and the `error` codes: the one table
// of them, with the factories that build each `error` message from it (nothing else writes an error's text).
// The message shapes themselves are the typebox schemas in contract/mm.ts. Pure; imported by the gateway, the
// RFQ engine, the SDK and the tests.
import type { ErrorMessage } from './mm.js';

export const MAKER_WS_PATH = '/v1/mm/ws';

/**
 * Streams of closed connections held for a resume at once, service-wide (resume.ts); past it the oldest is
 * dropped. Each is held PARLAYD_MM_REPLAY_MS at most anyway: this only bounds a reconnect storm.
 */
export const MAX_DETACHED_STREAMS = 4096;

/** Largest frame a maker may send (16 KiB); a bigger one closes the socket at once (uWS, code 1006). */
export const MAX_MAKER_FRAME_BYTES = 16 * 1024;

/** Heartbeats sent in a row without a pong before the socket is closed (interface.md "Limits"). */
export const MAX_UNANSWERED_HEARTBEATS = 3;

/**
 * Why the server closed a socket. `code` is the WebSocket close code, `reason` the close frame's text
 * (also the code of the auth_result or error message sent just before, when there is one).
 * 1008 = policy violation (the maker broke a rule), 1013 = try again later (server-side limit),
 * 1001 = going away (service shutdown), 1011 = unexpected server condition.
 */
export const CLOSE = {
  AUTH_TIMEOUT: { code: 1008, reason: 'AUTH_TIMEOUT' },
  CHALLENGE_EXPIRED: { code: 1008, reason: 'CHALLENGE_EXPIRED' },
  INVALID_SIGNATURE: { code: 1008, reason: 'INVALID_SIGNATURE' },
  UNKNOWN_MAKER: { code: 1008, reason: 'UNKNOWN_MAKER' },
  MALFORMED: { code: 1008, reason: 'MALFORMED' },
  NOT_AUTHENTICATED: { code: 1008, reason: 'NOT_AUTHENTICATED' },
  HEARTBEAT_TIMEOUT: { code: 1008, reason: 'HEARTBEAT_TIMEOUT' },
  AUTH_EXPIRED: { code: 1008, reason: 'AUTH_EXPIRED' },
  MAKER_REMOVED: { code: 1008, reason: 'MAKER_REMOVED' },
  /** The maker resumed this socket's stream on another socket: it had given this one up. */
  RESUMED_ELSEWHERE: { code: 1008, reason: 'RESUMED_ELSEWHERE' },
  /**
   * The maker already has PARLAYD_MM_MAX_SOCKETS_PER_MAKER sockets authenticated. 1008, not 1013: a rule
   * of the maker's own making (its other sockets hold the places), which waiting does not lift; closing one does.
   */
  TOO_MANY_SOCKETS: { code: 1008, reason: 'TOO_MANY_SOCKETS' },
  /** More frames than PARLAYD_MM_FRAMES_PER_S / PARLAYD_MM_FRAME_BURST allow (frame-rate.ts). */
  RATE_LIMITED: { code: 1008, reason: 'RATE_LIMITED' },
  SLOW_CONSUMER: { code: 1013, reason: 'SLOW_CONSUMER' },
  OVERLOADED: { code: 1013, reason: 'OVERLOADED' },
  AUTH_EVICTED: { code: 1013, reason: 'AUTH_EVICTED' },
  SHUTDOWN: { code: 1001, reason: 'SHUTDOWN' },
  INTERNAL: { code: 1011, reason: 'INTERNAL' },
} as const satisfies Record<string, { code: number; reason: string }>;
export type CloseCause = keyof typeof CLOSE;

/**
 * Codes of the `error` message. `closes: true` codes are followed by a close with the same reason text;
 * the others leave the socket open (contract section 7).
 */
export const MAKER_ERRORS = {
  INVALID_JSON: { closes: false, message: 'frame is not a JSON object in a UTF-8 text frame' },
  UNKNOWN_TYPE: { closes: false, message: 'type is missing or not a maker message type' },
  /** A message of a known type says which (validationFailedError): `quote failed validation`. */
  VALIDATION_FAILED: { closes: false, message: failedValidationText('message') },
  ALREADY_AUTHENTICATED: { closes: false, message: 'this connection is already authenticated' },
  AUTH_IN_PROGRESS: { closes: false, message: 'the auth_response of this connection is being verified' },
  LAST_LOOK_NOT_PENDING: {
    closes: false,
    message: 'no last look is pending for this quote: it was answered, ran out, or was never offered',
  },
  QUOTE_NOT_FOUND: { closes: false, message: 'no standing quote with this id: unknown, already ended, or already selected for a fill' },
  NOT_AUTHENTICATED: { closes: true, message: 'only auth_response is accepted before authentication' },
  RATE_LIMITED: { closes: true, message: 'this socket sent frames faster than the service takes them; reconnect and send fewer' },
  TOO_MANY_SOCKETS: {
    closes: true,
    message: 'this maker has as many sockets authenticated as it may have at once; close one before opening another',
  },
  AUTH_TIMEOUT: { closes: true, message: 'authentication was not completed in time' },
  HEARTBEAT_TIMEOUT: { closes: true, message: 'heartbeats were not answered with pong' },
  MAKER_REMOVED: { closes: true, message: 'this maker was removed from the registry' },
  OVERLOADED: { closes: true, message: 'the service is overloaded; reconnect after a short delay' },
  AUTH_EVICTED: {
    closes: true,
    message:
      'too many sockets are awaiting authentication: this one, the longest waiting, made room for a new one; reconnect and answer the challenge at once',
  },
} as const satisfies Record<string, { closes: boolean; message: string }>;
export type MakerErrorCode = keyof typeof MAKER_ERRORS;

/** A field error of VALIDATION_FAILED: where in the message, and what is wrong there. */
export interface MakerErrorDetail {
  path: string;
  message: string;
}

/**
 * The `error` message of `code`, with the table's text, naming the offending message's ids when it had them
 * (so a bot can tell which quote failed). Fields in wire order: type, code, message, request_id, quote_id.
 */
export function makerError(code: MakerErrorCode, requestId?: string, quoteId?: string): ErrorMessage {
  const error: ErrorMessage = { type: 'error', code, message: MAKER_ERRORS[code].message };
  if (requestId !== undefined) error.request_id = requestId;
  if (quoteId !== undefined) error.quote_id = quoteId;
  return error;
}

/**
 * VALIDATION_FAILED for a message of a known `type`: the text names the type (`quote failed validation`), the
 * details say where. Fields in wire order: type, code, message, details, request_id, quote_id.
 */
export function validationFailedError(
  messageType: string,
  details: MakerErrorDetail[],
  requestId?: string,
  quoteId?: string,
): ErrorMessage {
  const error: ErrorMessage = { type: 'error', code: 'VALIDATION_FAILED', message: failedValidationText(messageType), details };
  if (requestId !== undefined) error.request_id = requestId;
  if (quoteId !== undefined) error.quote_id = quoteId;
  return error;
}

function failedValidationText(messageType: string): string {
  return `${messageType} failed validation`;
}
