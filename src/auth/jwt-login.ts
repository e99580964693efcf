// Main thread. Identity-provider login (contract section 3): an ES256 or EdDSA id_token verified against the
// JWKS file configured by path, with iss, aud, sub, exp and the embedded wallet claim required.
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet } from 'jose';
import { ConfigError, type Config } from '../config.js';
import { ApiError } from '../errors.js';
import { parseAddress } from '../crypto/address.js';

export class JwtLogin {
  private readonly keySet: ReturnType<typeof createLocalJWKSet> | null;

  constructor(private readonly config: Config['jwt']) {
    // Read once at start: a missing or malformed JWKS file stops the service with a clear error.
    this.keySet = config === null ? null : readKeySet(config.jwksFile);
  }

  /** Returns the verified wallet (lowercase) or throws 401. */
  async verify(idToken: string): Promise<string> {
    if (this.config === null || this.keySet === null) {
      throw new ApiError('UNAUTHENTICATED', 'identity-provider login is not configured');
    }
    try {
      const { payload } = await jwtVerify(idToken, this.keySet, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: ['ES256', 'EdDSA'],
        requiredClaims: ['iss', 'aud', 'sub', 'exp', 'wallet'],
      });
      const wallet = parseAddress(payload['wallet']);
      if (wallet === null) throw new ApiError('UNAUTHENTICATED', 'id_token wallet claim is not an address');
      return wallet;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (err instanceof joseErrors.JOSEError) throw new ApiError('UNAUTHENTICATED', `id_token rejected: ${err.code}`);
      throw err;
    }
  }
}

function readKeySet(jwksFile: string): ReturnType<typeof createLocalJWKSet> {
  try {
    return createLocalJWKSet(JSON.parse(readFileSync(jwksFile, 'utf8')) as JSONWebKeySet);
  } catch (err) {
    throw new ConfigError(`PARLAYD_JWKS_FILE=${JSON.stringify(jwksFile)} is not a readable JWKS file: ${(err as Error).message}`);
  }
}
