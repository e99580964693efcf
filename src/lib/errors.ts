// The contract's error table (contract section 2): every code a client can see, its HTTP status and its
// default message, and beside it the message factories (`errors.*`): every message more specific than a
// code's default is worded here, once, so the wording a client sees cannot drift between two call sites.
// Nothing else in the service invents an error code or a message; handlers throw `errors.x(...)`, or
// `new ApiError(code)` for a code's default message.

export const ERROR_TABLE = {
  INVALID_JSON: { status: 400, message: 'request body is not valid JSON' },
  VALIDATION_FAILED: { status: 400, message: 'request failed validation' },
  INVALID_SIGNATURE: { status: 400, message: 'signature is malformed, unrecoverable or high-s' },
  ORDER_EXPIRED: { status: 400, message: 'order expires_at_ms has passed' },
  UNAUTHENTICATED: { status: 401, message: 'missing, unknown, expired or revoked bearer token' },
  SIGNER_MISMATCH: { status: 403, message: 'signer does not match the order user or the session wallet' },
  FORBIDDEN: { status: 403, message: 'this token may not use this route' },
  NOT_FOUND: { status: 404, message: 'no such route' },
  RFQ_NOT_FOUND: { status: 404, message: 'no such RFQ' },
  WITHDRAWAL_NOT_FOUND: { status: 404, message: 'no such withdrawal' },
  CONTEST_NOT_FOUND: { status: 404, message: 'no such contest' },
  MARKET_NOT_FOUND: { status: 404, message: 'no such market' },
  MAKER_NOT_FOUND: { status: 404, message: 'no such market maker' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'method not allowed on this path' },
  IDEMPOTENCY_CONFLICT: { status: 409, message: 'idempotency key reused with different content' },
  RFQ_NOT_CANCELLABLE: { status: 409, message: 'RFQ is finalizing or terminal' },
  CONTEST_FULL: { status: 409, message: 'contest entry_cap reached' },
  MARKET_ALREADY_RESOLVED: { status: 409, message: 'market already resolved with another outcome' },
  WITHDRAWAL_FINAL: { status: 409, message: 'the withdrawal was already completed or failed' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'request body exceeds 64 KiB' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'request body must be application/json' },
  MARKET_NOT_OPEN: { status: 422, message: 'market is not open for betting' },
  DUPLICATE_MARKET: { status: 422, message: 'the same market appears twice' },
  WAGER_OUT_OF_RANGE: { status: 422, message: 'wager outside the configured range' },
  INSUFFICIENT_BALANCE: { status: 422, message: 'available balance is too low' },
  CONTEST_CLOSED: { status: 422, message: 'contest is not accepting entries' },
  INVALID_PICKS: { status: 422, message: 'picks break the contest bet_type rules' },
  ENTRY_NOT_FOUND: { status: 422, message: 'no such entry to continue' },
  ENTRY_ELIMINATED: { status: 422, message: 'entry has been eliminated' },
  RATE_LIMITED: { status: 429, message: 'rate limit exceeded' },
  OVERLOADED: { status: 503, message: 'service is overloaded, nothing was accepted' },
  INTERNAL: { status: 500, message: 'internal error' },
  // Per-report codes of a 200 answer's `rejected` list (contract section 12), never a response status of
  // their own: one bad report in a batch is refused alone. The status is what the report would get alone.
  ORACLE_SIGNER_UNKNOWN: { status: 403, message: 'report signer is not a configured oracle address' },
  ORACLE_CONFLICT: { status: 409, message: 'another price was already reported for this asset and ts_ms' },
  ORACLE_OUT_OF_ORDER: { status: 409, message: 'ts_ms is before the latest accepted report of this asset, whose prices are final' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** The SIWE login refusals (401 UNAUTHENTICATED), named for the check that failed (auth/wallet-login.ts). */
const SIWE_REFUSALS = {
  nonceUnknownOrUsed: 'unknown or already used nonce',
  nonceExpired: 'login nonce expired',
  domainMismatch: 'message domain is not this service',
  uriMismatch: 'message URI is not this service',
  chainMismatch: 'message chain id is not this service',
  addressNotChallenged: 'message address is not the challenged address',
  messageExpired: 'message expired',
  issuedInFuture: 'message issued in the future',
  signerNotMessageAddress: 'signature is not from the message address',
} as const;
export type SiweRefusal = keyof typeof SIWE_REFUSALS;

/** One field failing a rule no schema states (a checksum, a reach): 400 VALIDATION_FAILED naming the field. */
function fieldError(path: string, message: string): ApiError {
  return new ApiError('VALIDATION_FAILED', undefined, [{ path, message }]);
}

/**
 * The message factories, grouped by area and named for what they say. Each returns a fresh ApiError (a
 * stack per throw: a shared instance would carry the stack of its first use). A code whose default message says it all needs no factory: `new ApiError(code)`.
 */
export const errors = {
  // -- Any route: addresses, framing, tokens, overload with a reason.
  /** An address field that parses but fails its EIP-55 checksum (admin, money and maker routes, orders). */
  badChecksum: (path: string) => fieldError(path, 'bad EIP-55 checksum'),
  /** An address field that is not an address at all, or fails its checksum (login challenge). */
  notAnAddress: (path: string) => fieldError(path, 'not an address, or bad EIP-55 checksum'),
  /** A header that makes the body's length ambiguous (http/framing.ts); the detail says which rule. */
  badFraming: (header: string, message: string) => fieldError(`/headers/${header}`, message),
  /** A cursor that this route did not issue, or not in its canonical form (contract/paging.ts). */
  cursorNotOfRoute: () => fieldError('/cursor', 'cursor is not a next_cursor of this route'),
  cursorOfOtherFilter: () => fieldError('/cursor', 'cursor was issued for another filter of this route'),
  /** A cursor of this route and filter whose HMAC does not verify: issued to another caller, or altered. */
  cursorOfOtherCaller: () => fieldError('/cursor', 'cursor was issued to another caller, or altered'),
  tokenKindForbidden: (kind: string) => new ApiError('FORBIDDEN', `${kind} tokens may not use this route`),
  /** A 500's message names the request id, so an operator finds the logged cause from a client's report. */
  internal: (requestId: string) => new ApiError('INTERNAL', `internal error (request ${requestId})`),

  // -- Login (auth/): identity-provider tokens, SIWE, makers on the user route.
  idpLoginNotConfigured: () => new ApiError('UNAUTHENTICATED', 'identity-provider login is not configured'),
  idTokenNotJwt: () => new ApiError('UNAUTHENTICATED', 'id_token typ header is not JWT'),
  idTokenTooOld: () => new ApiError('UNAUTHENTICATED', 'id_token is older than the maximum age'),
  idTokenFromFuture: () => new ApiError('UNAUTHENTICATED', 'id_token iat is in the future'),
  idTokenWalletNotAddress: () => new ApiError('UNAUTHENTICATED', 'id_token wallet claim is not an address'),
  /** `joseCode` is jose's error code (ERR_JWT_EXPIRED, ...): a fixed set, never token content. */
  idTokenRejected: (joseCode: string) => new ApiError('UNAUTHENTICATED', `id_token rejected: ${joseCode}`),
  siweMessageNotOurs: () => fieldError('/message', 'not a Sign-In with Ethereum message as this service issues them'),
  siweSignatureNotHex: () => new ApiError('INVALID_SIGNATURE', 'signature is not 0x + 130 hex digits (65 bytes)'),
  siweRefused: (reason: SiweRefusal) => new ApiError('UNAUTHENTICATED', SIWE_REFUSALS[reason]),
  makerMustUseSocket: () => new ApiError('FORBIDDEN', 'a registered market maker logs in over the maker socket, not as a user'),

  // -- Maker registry and socket admission (http/routes/mm.ts, mm/gateway.ts).
  makerRegistryFull: () => new ApiError('VALIDATION_FAILED', 'the maker registry is full'),
  makerAuthPendingFull: () => new ApiError('OVERLOADED', 'too many maker sockets awaiting authentication'),
  makerAuthPendingFromAddress: () => new ApiError('RATE_LIMITED', 'too many maker sockets awaiting authentication from this address'),
  makerAuthPendingFromNetwork: () => new ApiError('RATE_LIMITED', 'too many maker sockets awaiting authentication from this network'),

  // -- Markets (markets/, RFQ legs, contest markets and picks).
  marketNotFound: (marketId: number) => new ApiError('MARKET_NOT_FOUND', `market ${marketId} does not exist`),
  /** Not OPEN, or OPEN but past its betting close (markets/market-table.ts isOpenForBetting). */
  marketNotOpen: (marketId: number) => new ApiError('MARKET_NOT_OPEN', `market ${marketId} is not open for betting`),
  noPriceMarket: (asset: string, durationSecs: number) =>
    new ApiError('MARKET_NOT_FOUND', `no price market for ${asset} over ${durationSecs}s`),
  priceWindowTooFarBack: (windowsBack: number) =>
    new ApiError(
      'MARKET_NOT_FOUND',
      `no market for that window: a past window is created on lookup only up to ${windowsBack} windows back`,
    ),
  priceWindowTooFarAhead: (windowsAhead: number) => fieldError('/at_ms', `at most ${windowsAhead} windows after the current one`),

  // -- RFQs (rfq/): signatures, legs, wager, shard limits.
  orderSignatureNotBase64: () => new ApiError('INVALID_SIGNATURE', 'signature is not base64 of 65 bytes'),
  /** `reason` is the recovery's fixed reason (crypto/recover.ts), e.g. high-s. */
  orderSignatureRejected: (reason: string) => new ApiError('INVALID_SIGNATURE', `signature rejected: ${reason}`),
  signerNotOrderUser: () => new ApiError('SIGNER_MISMATCH', 'signature is not from order.user'),
  orderUserNotSessionWallet: () => new ApiError('SIGNER_MISMATCH', 'order.user is not the session wallet'),
  /** min_odds must fit the signed order's u32 of odds × 10000 and round to more than 0 (contract/order-codec.ts). */
  oddsNotSignable: (path: string) => fieldError(path, 'must be a positive multiplier that fits the signing format'),
  duplicateLeg: (marketId: number) => new ApiError('DUPLICATE_MARKET', `market ${marketId} appears twice`),
  wagerOutOfRange: (minMicros: number, maxMicros: number) =>
    new ApiError('WAGER_OUT_OF_RANGE', `wager must be within ${minMicros}..${maxMicros} micros`),
  /** Without Retry-After: the shard throws it, the shard pool turns OVERLOADED into `overloaded()`. */
  shardAtActiveLimit: () => new ApiError('OVERLOADED', 'shard is at its active RFQ limit'),
  /**
   * A cluster's shard node that holds the caller's partition is gone (cluster/shard-transport.ts): 503 as
   * an overload is, since the contract has one 503. What it decided before stays decided: a create retried
   * with its replay key finds its RFQ.
   */
  shardUnreachable: () =>
    new ApiError('OVERLOADED', 'the node that holds this account is not reachable; try again', undefined, { 'Retry-After': '1' }),

  /** A cluster's gateway could not reach its coordinator (cluster/coordinator-link.ts): nothing was done there that it knows of. */
  coordinatorUnreachable: () =>
    new ApiError('OVERLOADED', 'the coordinator is not reachable from this gateway; try again', undefined, { 'Retry-After': '1' }),

  // -- Contests (contests/contests.ts, contests/rules.ts).
  contestNotOpen: (status: string) => new ApiError('CONTEST_CLOSED', `contest is ${status}`),
  contestSettling: (kind: 'void' | 'resolve') =>
    new ApiError('CONTEST_CLOSED', `contest is being ${kind === 'void' ? 'voided' : 'resolved'}`),
  contestEntryNotOpenYet: () => new ApiError('CONTEST_CLOSED', 'contest entry has not opened yet'),
  contestBettingClosed: () => new ApiError('CONTEST_CLOSED', 'contest betting has closed'),
  contestResolvedCannotVoid: () => new ApiError('CONTEST_CLOSED', 'contest is resolved and can no longer be voided'),
  contestResolvingCannotVoid: () => new ApiError('CONTEST_CLOSED', 'contest is being resolved and can no longer be voided'),
  contestFull: () => new ApiError('CONTEST_FULL'),
  duplicatePick: (marketId: number) => new ApiError('DUPLICATE_MARKET', `market ${marketId} is picked twice in this entry`),
  pickNotInContest: (marketId: number) => new ApiError('INVALID_PICKS', `market ${marketId} is not a market of this contest`),
  wrongPickCount: (required: number, picked: number) =>
    new ApiError('INVALID_PICKS', `exactly ${required} picks are required, got ${picked}`),
  wrongCategoryPickCount: (category: string, required: number, picked: number) =>
    new ApiError('INVALID_PICKS', `exactly ${required} picks are required in category "${category}", got ${picked}`),
  entryNotContinuable: (gameType: string) => new ApiError('ENTRY_NOT_FOUND', `${gameType} entries cannot be continued; omit entry_index`),
  entryNotFound: (entryIndex: number) => new ApiError('ENTRY_NOT_FOUND', `you have no entry ${entryIndex} in this contest`),
  entryEliminated: () => new ApiError('ENTRY_ELIMINATED'),
  prizePoolUnfunded: () => new ApiError('INSUFFICIENT_BALANCE', 'the protocol account cannot fund this prize pool'),
} as const;

export interface ErrorDetail {
  path: string;
  message: string;
}

/** A contract error: thrown by handlers, turned into `{code, message, details?}` by the HTTP layer. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: readonly ErrorDetail[] | undefined;
  /** Extra response headers, e.g. Retry-After on 429/503. */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: ErrorCode, message?: string, details?: readonly ErrorDetail[], headers?: Record<string, string>) {
    super(message ?? ERROR_TABLE[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_TABLE[code].status;
    this.details = details;
    this.headers = headers;
  }

  toBody(): { code: ErrorCode; message: string; details?: readonly ErrorDetail[] } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

export function apiError(code: ErrorCode, message?: string, details?: readonly ErrorDetail[]): ApiError {
  return new ApiError(code, message, details);
}

export function validationError(details: readonly ErrorDetail[]): ApiError {
  return new ApiError('VALIDATION_FAILED', undefined, details);
}

/** 429 with Retry-After: the caller is over its rate limit; nothing was done. */
export function rateLimited(retryAfterS: number): ApiError {
  return new ApiError('RATE_LIMITED', undefined, undefined, { 'Retry-After': String(retryAfterS) });
}

/** 503 with Retry-After: an internal queue is full and nothing was accepted. */
export function overloaded(retryAfterS = 1): ApiError {
  return new ApiError('OVERLOADED', undefined, undefined, { 'Retry-After': String(retryAfterS) });
}

/**
 * `waiting` as it settles, or 503 OVERLOADED once `timeoutMs` passes first: what a caller gets instead of a
 * request held open while something it waits for cannot move (a read barrier, the shards' settling, when
 * LMDB cannot commit).
 */
export async function overloadedAfter<T>(waiting: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(overloaded()), timeoutMs);
  });
  try {
    return await Promise.race([waiting, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
