// Main thread (recovery runs on the verify pool). Sign-In with Ethereum (EIP-4361) for users, contract
// section 3: a single-use nonce bound to an address, a message the user signs with personal-sign, and a login
// that checks domain, chain, nonce, expiry and signer. A nonce is consumed by its first use, good or bad
// (a malformed signature included), so a captured message cannot be tried twice. A login the verify pool
// cannot take is no use: 503 OVERLOADED spends nothing (contract section 2, "nothing was accepted"), so the
// same signed message can be sent again. Expired nonces are deleted by an expiry sweep (sessions.ts).
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { ApiError, overloaded } from '../errors.js';
import type { Store } from '../store/db.js';
import { parseAddress, toChecksumAddress } from '../crypto/address.js';
import { parseSignatureHex } from '../crypto/signature.js';
import { isPoolOverloaded, type VerifyPool } from '../crypto/verify-pool.js';
import { ExpirySweep, type ExpirySweepOptions, type SweepBatchResult } from './expiry-sweep.js';
import { buildSiweMessage, parseSiweMessage, type SiweFields } from './siwe.js';

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
/** Contract section 3: the login signature is `0x` + 130 hex (65 bytes); unlike the maker socket's (section 7), `0x` is required. */
const LOGIN_SIGNATURE_RE = /^0x[0-9a-fA-F]{130}$/;

export class WalletLogin {
  readonly #sweep: ExpirySweep;

  /** Starts the expiry sweep of the login nonces (first batch at once, then periodically). */
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Pick<Config, 'siwe' | 'loginNonceTtlMs'>,
    private readonly verifyPool: VerifyPool,
    sweepOptions: ExpirySweepOptions = {},
  ) {
    // Nothing to forget after a batch: nonces are never cached in memory.
    this.#sweep = new ExpirySweep(store, 'loginNonces', clock, () => {}, sweepOptions);
    this.#sweep.start();
  }

  /** One bounded batch of the nonce expiry sweep, now (the timer runs them on its own; tests call this). */
  sweepExpiredBatch(): Promise<SweepBatchResult> {
    return this.#sweep.sweepBatch();
  }

  /** Stops the periodic sweep; call before closing the store. */
  stopSweeping(): void {
    this.#sweep.stop();
  }

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

  /**
   * Returns the verified wallet (lowercase) or throws 400/401/503. Order of the checks: a message that is not
   * ours names no nonce (400 VALIDATION_FAILED, nothing spent); a malformed signature spends the nonce it
   * names (400 INVALID_SIGNATURE); then the nonce and the message's fields, each failure spending the nonce
   * (401); then recovery, and only once the pool has answered is the nonce spent, so an overloaded pool
   * (503) leaves it for the retry.
   */
  async verify(message: string, signatureText: string): Promise<string> {
    const fields = parseSiweMessage(message);
    if (fields === null) {
      throw new ApiError('VALIDATION_FAILED', undefined, [
        { path: '/message', message: 'not a Sign-In with Ethereum message as this service issues them' },
      ]);
    }
    const signature = LOGIN_SIGNATURE_RE.test(signatureText) ? parseSignatureHex(signatureText) : null;
    if (signature === null) {
      await this.consumeNonce(fields.nonce);
      throw new ApiError('INVALID_SIGNATURE', 'signature is not 0x + 130 hex digits (65 bytes)');
    }
    // A read, not yet the consumption: see above. The record never changes, only whether it exists.
    const record = this.nonces.get(fields.nonce);
    if (record === undefined) throw unauthenticated('unknown or already used nonce');
    const refusal = this.refuseFields(fields, record);
    if (refusal !== null) {
      await this.consumeNonce(fields.nonce);
      throw refusal;
    }
    const recovered = await this.verifyPool.recoverPersonalSigner(new TextEncoder().encode(message), signature).catch((err: unknown) => {
      if (isPoolOverloaded(err)) throw overloaded();
      throw err;
    });
    // Another attempt with this nonce may have spent it while this one was recovered: the first use wins.
    if ((await this.consumeNonce(fields.nonce)) === undefined) throw unauthenticated('unknown or already used nonce');
    if (!recovered.ok) throw new ApiError('INVALID_SIGNATURE');
    if (recovered.address !== record.address) throw unauthenticated('signature is not from the message address');
    return record.address;
  }

  /** The 401 for the first of nonce expiry, domain, URI, chain, address and message expiry that fails; else null. */
  private refuseFields(fields: SiweFields, record: LoginNonceRecord): ApiError | null {
    const nowMs = this.clock.nowMs();
    if (record.expiresAtMs <= nowMs) return unauthenticated('login nonce expired');
    if (fields.domain !== this.config.siwe.domain) return unauthenticated('message domain is not this service');
    if (fields.uri !== this.config.siwe.uri) return unauthenticated('message URI is not this service');
    if (fields.chainId !== this.config.siwe.chainId) return unauthenticated('message chain id is not this service');
    if (parseAddress(fields.address) !== record.address) return unauthenticated('message address is not the challenged address');
    const expiresAtMs = fields.expirationTime === undefined ? NaN : Date.parse(fields.expirationTime);
    if (!(expiresAtMs > nowMs)) return unauthenticated('message expired');
    if (!(Date.parse(fields.issuedAt) <= nowMs + ISSUED_AT_SKEW_MS)) return unauthenticated('message issued in the future');
    return null;
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
