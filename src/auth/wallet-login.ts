// Main thread (recovery runs on the verify pool). Sign-In with Ethereum (EIP-4361) for users, contract
// section 3: a single-use nonce bound to an address, a message the user signs with personal-sign, and a login
// that checks domain, chain, nonce, expiry and signer. A nonce is consumed by its first use, good or bad, so
// a captured message cannot be tried twice.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import type { Store } from '../store/db.js';
import { parseAddress, toChecksumAddress } from '../crypto/address.js';
import { parseSignatureHex } from '../crypto/signature.js';
import type { VerifyPool } from '../crypto/verify-pool.js';
import { buildSiweMessage, parseSiweMessage } from './siwe.js';

interface LoginNonceRecord {
  address: string;
  expiresAtMs: number;
}

export interface WalletChallenge {
  message: string;
  nonce: string;
  expiresAtMs: number;
}

const STATEMENT = 'Sign in to parlayd.';
/** Clock skew tolerated on the message's Issued At, so a client clock slightly ahead is not refused. */
const ISSUED_AT_SKEW_MS = 60_000;

export class WalletLogin {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Pick<Config, 'siwe' | 'loginNonceTtlMs'>,
    private readonly verifyPool: VerifyPool,
  ) {}

  private get nonces() {
    return this.store.db<LoginNonceRecord>('loginNonces');
  }

  async challenge(addressInput: string): Promise<WalletChallenge> {
    const address = parseAddress(addressInput);
    if (address === null) throw invalidAddress();
    const nonce = randomBytes(16).toString('hex');
    const nowMs = this.clock.nowMs();
    const expiresAtMs = nowMs + this.config.loginNonceTtlMs;
    const message = buildSiweMessage({
      domain: this.config.siwe.domain,
      address: toChecksumAddress(address),
      statement: STATEMENT,
      uri: this.config.siwe.uri,
      version: '1',
      chainId: this.config.siwe.chainId,
      nonce,
      issuedAt: new Date(nowMs).toISOString(),
      expirationTime: new Date(expiresAtMs).toISOString(),
    });
    await this.nonces.put(nonce, { address, expiresAtMs });
    return { message, nonce, expiresAtMs };
  }

  /** Returns the verified wallet (lowercase) or throws 400/401. */
  async verify(message: string, signatureHex: string): Promise<string> {
    const signature = parseSignatureHex(signatureHex);
    if (signature === null) throw new ApiError('INVALID_SIGNATURE');
    const fields = parseSiweMessage(message);
    if (fields === null) {
      throw new ApiError('VALIDATION_FAILED', undefined, [
        { path: '/message', message: 'not a Sign-In with Ethereum message as this service issues them' },
      ]);
    }
    const record = await this.consumeNonce(fields.nonce);
    const nowMs = this.clock.nowMs();
    const messageAddress = parseAddress(fields.address);
    if (record === undefined) throw unauthenticated('unknown or already used nonce');
    if (record.expiresAtMs <= nowMs) throw unauthenticated('login nonce expired');
    if (fields.domain !== this.config.siwe.domain) throw unauthenticated('message domain is not this service');
    if (fields.uri !== this.config.siwe.uri) throw unauthenticated('message URI is not this service');
    if (fields.chainId !== this.config.siwe.chainId) throw unauthenticated('message chain id is not this service');
    if (messageAddress !== record.address) throw unauthenticated('message address is not the challenged address');
    const expiresAtMs = fields.expirationTime === undefined ? NaN : Date.parse(fields.expirationTime);
    if (!(expiresAtMs > nowMs)) throw unauthenticated('message expired');
    if (!(Date.parse(fields.issuedAt) <= nowMs + ISSUED_AT_SKEW_MS)) throw unauthenticated('message issued in the future');
    const recovered = await this.verifyPool.recoverPersonalSigner(new TextEncoder().encode(message), signature);
    if (!recovered.ok) throw new ApiError('INVALID_SIGNATURE');
    if (recovered.address !== record.address) throw unauthenticated('signature is not from the message address');
    return record.address;
  }

  /** Removes the nonce in the same transaction that reads it: of two racing logins only one sees it. */
  private consumeNonce(nonce: string): Promise<LoginNonceRecord | undefined> {
    return this.store.transact(() => {
      const record = this.nonces.get(nonce);
      if (record !== undefined) void this.nonces.remove(nonce);
      return record;
    });
  }
}

function unauthenticated(reason: string): ApiError {
  return new ApiError('UNAUTHENTICATED', reason);
}

function invalidAddress(): ApiError {
  return new ApiError('VALIDATION_FAILED', undefined, [{ path: '/address', message: 'not an address, or bad EIP-55 checksum' }]);
}
