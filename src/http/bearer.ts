// Main thread. Resolves `Authorization: Bearer <token>` into a principal and applies the route's auth mode
// (contract sections 2 and 3): missing/unknown/expired → 401 UNAUTHENTICATED, wrong kind → 403 FORBIDDEN.
import { BEARER_TOKEN_CHARS, BEARER_TOKEN_MAX_CHARS } from '../config/config.js';
import { ApiError, errors } from '../lib/errors.js';
import type { Principal, TokenResolver } from '../contract/principal.js';
import type { AuthMode } from './route.js';

// RFC 9110 section 11.1: the scheme name is case-insensitive ("bearer x" is the same credential).
const BEARER = new RegExp(`^Bearer ([${BEARER_TOKEN_CHARS}]{1,${BEARER_TOKEN_MAX_CHARS}})$`, 'i');

export function parseBearer(header: string): string | null {
  if (header === '') return null;
  const m = BEARER.exec(header);
  return m === null ? null : m[1]!;
}

/** Returns the principal the route's handler gets, or throws the contract error. */
export function authorize(mode: AuthMode, header: string, tokens: TokenResolver): Principal | null {
  if (mode === 'none') return null;
  if (header === '' && mode === 'optional-user') return null;
  const token = parseBearer(header);
  const principal = token === null ? null : tokens.resolve(token);
  if (principal === null) throw new ApiError('UNAUTHENTICATED');
  const wanted = mode === 'optional-user' ? 'user' : mode;
  if (principal.kind !== wanted) throw errors.tokenKindForbidden(principal.kind);
  return principal;
}
