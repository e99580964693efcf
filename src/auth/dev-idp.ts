// A development identity provider (contract section 3): key pairs for the JWKS file that
// PARLAYD_JWKS_FILE points at, and id_tokens signed with them. Used by scripts/dev-idp-keys.ts,
// scripts/mint-id-token.ts and the end-to-end tests; never by the running service, which only verifies
// (auth/jwt-login.ts). Runs on whichever thread calls it; no state beyond the files it is told to write.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

/** The algorithms parlayd accepts for id_tokens. */
export type DevIdpAlg = 'ES256' | 'EdDSA';

export interface DevIdpKey {
  kid: string;
  alg: DevIdpAlg;
  /** Public JWK with kid, alg and use: what goes into jwks.json. */
  publicJwk: JWK;
  /** Private JWK with kid and alg: what goes into private-key.json. Never give it to the service. */
  privateJwk: JWK;
}

export const JWKS_FILE_NAME = 'jwks.json';
export const PRIVATE_KEY_FILE_NAME = 'private-key.json';
export const DEFAULT_DEV_ISSUER = 'http://localhost/dev-idp';
export const DEFAULT_DEV_AUDIENCE = 'parlayd';

export function isDevIdpAlg(alg: unknown): alg is DevIdpAlg {
  return alg === 'ES256' || alg === 'EdDSA';
}

/** A fresh key pair; the kid is random unless given (tests reuse a kid to sign with a key the JWKS lacks). */
export async function generateDevIdpKey(
  alg: DevIdpAlg,
  kid = `dev-${alg.toLowerCase()}-${randomBytes(6).toString('hex')}`,
): Promise<DevIdpKey> {
  const options = alg === 'EdDSA' ? { crv: 'Ed25519', extractable: true } : { extractable: true };
  const { publicKey, privateKey } = await generateKeyPair(alg, options);
  return {
    kid,
    alg,
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' },
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg },
  };
}

export interface WrittenDevIdp {
  jwksFile: string;
  privateKeyFile: string;
  keys: DevIdpKey[];
}

/**
 * Writes `jwks.json` (public keys) and `private-key.json` (private keys, mode 0600) into `dir`, creating it.
 * Both files are JWK sets `{keys: [...]}`; the first key is the one scripts sign with by default.
 */
export async function writeDevIdpKeys(dir: string, algs: readonly DevIdpAlg[] = ['ES256', 'EdDSA']): Promise<WrittenDevIdp> {
  if (algs.length === 0) throw new RangeError('writeDevIdpKeys: at least one algorithm');
  const keys: DevIdpKey[] = [];
  for (const alg of algs) keys.push(await generateDevIdpKey(alg));
  mkdirSync(dir, { recursive: true });
  const jwksFile = join(dir, JWKS_FILE_NAME);
  const privateKeyFile = join(dir, PRIVATE_KEY_FILE_NAME);
  writeFileSync(jwksFile, JSON.stringify({ keys: keys.map((k) => k.publicJwk) }, null, 2) + '\n');
  writeFileSync(privateKeyFile, JSON.stringify({ keys: keys.map((k) => k.privateJwk) }, null, 2) + '\n', { mode: 0o600 });
  return { jwksFile, privateKeyFile, keys };
}

/** The private keys `writeDevIdpKeys` wrote into `dir`, in file order. */
export function readDevIdpPrivateKeys(dir: string): Array<Pick<DevIdpKey, 'kid' | 'alg' | 'privateJwk'>> {
  const parsed = JSON.parse(readFileSync(join(dir, PRIVATE_KEY_FILE_NAME), 'utf8')) as { keys?: unknown };
  if (!Array.isArray(parsed.keys)) throw new TypeError(`${PRIVATE_KEY_FILE_NAME}: not a JWK set`);
  return parsed.keys.map((jwk: JWK) => {
    const alg = jwk.alg;
    if (typeof jwk.kid !== 'string' || !isDevIdpAlg(alg) || jwk.d === undefined) {
      throw new TypeError(`${PRIVATE_KEY_FILE_NAME}: every key needs kid, alg (ES256 or EdDSA) and its private part`);
    }
    return { kid: jwk.kid, alg, privateJwk: jwk };
  });
}

export interface MintIdTokenInput {
  privateJwk: JWK;
  kid: string;
  alg: DevIdpAlg;
  issuer: string;
  audience: string;
  sub: string;
  /** The user's embedded wallet address (the `wallet` claim parlayd requires). */
  wallet: string;
  /** Lifetime from now in seconds; negative mints a token that has already expired. */
  expiresInS: number;
}

/** An id_token as an identity provider would issue it: iss, aud, sub, iat, exp and wallet. */
export async function mintIdToken(input: MintIdTokenInput): Promise<string> {
  if (!Number.isSafeInteger(input.expiresInS)) throw new RangeError('mintIdToken: expiresInS must be an integer');
  const key = await importJWK(input.privateJwk, input.alg);
  const nowS = Math.floor(Date.now() / 1000);
  const expiresAtS = nowS + input.expiresInS;
  return (
    new SignJWT({ wallet: input.wallet })
      .setProtectedHeader({ alg: input.alg, kid: input.kid, typ: 'JWT' })
      .setIssuer(input.issuer)
      .setAudience(input.audience)
      .setSubject(input.sub)
      // An already-expired token was also issued before it expired, as a real one would have been.
      .setIssuedAt(Math.min(nowS, expiresAtS - 1))
      .setExpirationTime(expiresAtS)
      .sign(key)
  );
}
