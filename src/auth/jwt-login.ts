// Main thread. Identity-provider login (contract section 3): an ES256 or EdDSA id_token verified against the
// JWKS file configured by path (read again when it changes, jwks-file.ts), with iss, aud, sub, exp, iat and
// the embedded wallet claim required.
import { errors as joseErrors, jwtVerify } from 'jose';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import { ApiError, errors } from '../lib/errors.js';
import { parseAddress } from '../crypto/address.js';
import { JwksFile } from './jwks-file.js';

/**
 * How far `iat` may be ahead of our clock: the provider's clock and ours drift a little, and a token minted
 * at once must not bounce off that drift. Beyond it the token was minted by a clock that is wrong, or
 * minted ahead of time to outlive the maximum age; either way it is refused.
 */
export const IAT_FUTURE_SKEW_MS = 60_000;

export class JwtLogin {
  private readonly keys: JwksFile | null;

  constructor(
    private readonly config: Config['jwt'],
    private readonly clock: Clock,
    log: Logger,
  ) {
    // Read at start: a missing or malformed JWKS file stops the service with a clear error.
    this.keys = config === null ? null : new JwksFile(config.jwksFile, log, clock.nowMs());
  }

  /** Returns the verified wallet (lowercase) or throws 401. */
  async verify(idToken: string): Promise<string> {
    if (this.config === null || this.keys === null) {
      throw errors.idpLoginNotConfigured();
    }
    const nowMs = this.clock.nowMs();
    try {
      const { payload, protectedHeader } = await jwtVerify(idToken, await this.keys.current(nowMs), {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: ['ES256', 'EdDSA'],
        requiredClaims: ['iss', 'aud', 'sub', 'exp', 'iat', 'wallet'],
        currentDate: new Date(nowMs),
      });
      // RFC 7519 section 5.1: typ is optional, and when present says "JWT". Another type (an access token,
      // "at+jwt", or a logout token) signed by the same provider is not an id_token.
      if (protectedHeader.typ !== undefined && protectedHeader.typ.toLowerCase() !== 'jwt') {
        throw errors.idTokenNotJwt();
      }
      // jose has checked that iat is a number; its unit is seconds.
      const issuedAtMs = payload.iat! * 1000;
      if (nowMs - issuedAtMs > this.config.maxAgeMs) throw errors.idTokenTooOld();
      if (issuedAtMs - nowMs > IAT_FUTURE_SKEW_MS) throw errors.idTokenFromFuture();
      const wallet = parseAddress(payload['wallet']);
      if (wallet === null) throw errors.idTokenWalletNotAddress();
      return wallet;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (err instanceof joseErrors.JOSEError) throw errors.idTokenRejected(err.code);
      throw err;
    }
  }
}
