// Maker SDK, in the maker's process. The client's own errors: one table of codes and texts, and the factories
// that build each (nothing else in the SDK writes an error's text). The server's `error` codes are another
// table, contract/maker-protocol.ts MAKER_ERRORS, surfaced as `server_error` events.

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

/** Each error the client raises, by what went wrong. */
export const clientErrors = {
  closedBeforeAuth: () => new MakerClientError('CLOSED', 'client closed before it authenticated'),
  closed: () => new MakerClientError('CLOSED', 'client is closed'),
  notAuthenticated: () => new MakerClientError('NOT_CONNECTED', 'not authenticated; wait for the authenticated event'),
  noSession: () => new MakerClientError('NOT_CONNECTED', 'no session yet; wait for the authenticated event'),
  /** The first connect() failed for good: the server refused the signature (`authFailure`), or the socket closed. */
  stopped: (authFailure: string | null, code: number, reason: string) =>
    authFailure === null
      ? new MakerClientError('CLOSED', `socket closed (${code} ${reason})`)
      : new MakerClientError('AUTH_FAILED', `authentication refused: ${authFailure}`),
  // Caller mistakes, caught before anything is sent: the standard error types, as for any bad argument.
  signerChoice: () => new TypeError('give exactly one of privateKey and signer'),
  badPrivateKey: () => new TypeError('privateKey must be a valid secp256k1 key: 0x + 64 hex, or 32 bytes'),
  /** A challenge whose nonce is not 32 bytes: not from a parlayd server. */
  badNonce: () => new TypeError('challenge nonce must be 64 hex chars'),
  badOdds: (odds: number) => new RangeError(`odds must be > 1 with at most 4 decimals, got ${odds}`),
  badMaxWager: (maxWagerMicros: string) => new RangeError(`maxWagerMicros must be a positive integer, got ${maxWagerMicros}`),
  noWebSocket: () => new Error('no WebSocket implementation: install the `ws` package or pass options.WebSocket'),
} as const;
