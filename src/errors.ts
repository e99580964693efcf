// The contract's error table (contract section 2): every code a client can see, its HTTP status and its
// default message. Nothing else in the service invents an error code; handlers throw `apiError(...)`.

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

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
