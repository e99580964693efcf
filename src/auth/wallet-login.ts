// Main thread (recovery runs on the verify pool). Sign-In with Ethereum (EIP-4361) for users, contract
// section 3: a single-use nonce bound to an address, a message the user signs with personal-sign, and a login
// that checks domain, chain, nonce, expiry and signer. A nonce is consumed by its first use, good or bad
// (a malformed signature included), so a captured message cannot be tried twice. A login the verify pool
// cannot take is no use: 503 OVERLOADED spends nothing (contract section 2, "nothing was accepted"), so the
// same signed message can be sent again.
//
// Challenges are stateless (login-nonce.ts: the nonce is a MAC over address and expiry), so the anonymous
// challenge route writes nothing. What is written is the record of a *used* nonce, from its first use until
// its expiry (then the expiry sweep deletes it): at most MAX_USED_LOGIN_NONCES at once; past that a login is
// refused 503 OVERLOADED, spending nothing, rather than grow the store. So that one caller cannot fill that
// bound for everyone, each caller IP and network may hold only a share of it (nonce-spenders.ts): past its
// share a login is 429 RATE_LIMITED, spending nothing.
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import { ApiError, errors, overloaded, rateLimited } from '../lib/errors.js';
import type { Store } from '../store/db.js';
import { parseAddress, toChecksumAddress } from '../crypto/address.js';
import { parseSignatureHex } from '../crypto/signature.js';
import { loadOrCreateNonceKey, makeNonce, readNonce, type IssuedNonce } from './login-nonce.js';
import { isPoolOverloaded, type VerifyPool } from '../crypto/verify-pool.js';
import { ExpirySweep, type ExpirySweepOptions, type SweepBatchResult } from './expiry-sweep.js';
import { buildSiweMessage, parseSiweMessage, type SiweFields } from './siwe.js';
import { table } from '../store/records.js';
import { NonceSpenders, type CallerNetworks } from './nonce-spenders.js';

/**
 * Used login nonces kept at once (one LMDB record each, ~120 bytes: ~12 MB at the bound). Each lives one
 * nonce lifetime (5 min by default), so the bound is ~333 login attempts a second sustained, service-wide:
 * far above the auth routes' per-IP limit (config PARLAYD_AUTH_RATE_LIMIT_PER_S, 20/s). Past it a login is
 * 503 OVERLOADED with nothing spent.
 */
export const MAX_USED_LOGIN_NONCES = 100_000;

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
  readonly #nonceKey: Buffer;
  /** Records in `loginNonces` (used nonces, and at the first start after the upgrade, issued ones of old). */
  #usedCount: number;
  readonly #spenders: NonceSpenders;

  /** Starts the expiry sweep of the login nonces (first batch at once, then periodically). */
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Pick<Config, 'siwe' | 'loginNonceTtlMs' | 'loginNoncesPerIp' | 'loginNoncesPerNetwork'>,
    private readonly verifyPool: VerifyPool,
    sweepOptions: ExpirySweepOptions = {},
    /** MAX_USED_LOGIN_NONCES unless given (tests fill a small bound). */
    private readonly maxUsedNonces = MAX_USED_LOGIN_NONCES,
  ) {
    this.#nonceKey = loadOrCreateNonceKey(store);
    this.#usedCount = this.nonces.getCount();
    this.#spenders = new NonceSpenders({
      maxPerIp: config.loginNoncesPerIp,
      maxPerNetwork: config.loginNoncesPerNetwork,
      maxKeys: maxUsedNonces,
    });
    this.#sweep = new ExpirySweep(store, 'loginNonces', clock, (keys) => (this.#usedCount -= keys.length), sweepOptions);
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
    return table(this.store, 'loginNonces');
  }

  /** No write: the nonce proves itself at login (login-nonce.ts). */
  challenge(addressInput: string): WalletChallenge {
    const address = parseAddress(addressInput);
    if (address === null) throw invalidAddress();
    const nowMs = this.clock.nowMs();
    const expiresAtMs = nowMs + this.config.loginNonceTtlMs;
    const nonce = makeNonce(this.#nonceKey, address, expiresAtMs);
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
    return { message, nonce, expiresAtMs };
  }

  /**
   * Returns the verified wallet (lowercase) or throws 400/401/503. Order of the checks: a message that is not
   * ours names no nonce (400 VALIDATION_FAILED, nothing spent); a malformed signature spends the nonce it
   * names (400 INVALID_SIGNATURE); then the nonce and the message's fields, each failure spending the nonce
   * (401); then recovery, and only once the pool has answered is the nonce spent, so an overloaded pool
   * (503) leaves it for the retry. `caller`: the networks the nonce is charged to (429 past their share,
   * nothing spent); null for a caller not counted (an in-process one).
   */
  async verify(message: string, signatureText: string, caller: CallerNetworks | null = null): Promise<string> {
    // Before anything is done for it; checked again where the nonce is spent, as another login may have
    // taken the caller's last place meanwhile.
    const callerRetryAfterS = caller === null ? 0 : this.#spenders.retryAfterS(caller, this.clock.nowMs());
    if (callerRetryAfterS > 0) throw rateLimited(callerRetryAfterS);
    // A login is new work that writes (the nonce, a session, maybe a user): with the store past the room new
    // work may use it is 503 before the nonce is spent, so the retry once there is room finds it unused.
    this.store.assertRoom();
    const fields = parseSiweMessage(message);
    if (fields === null) {
      throw errors.siweMessageNotOurs();
    }
    const address = parseAddress(fields.address);
    const issued = readNonce(this.#nonceKey, fields.nonce, address);
    const signature = LOGIN_SIGNATURE_RE.test(signatureText) ? parseSignatureHex(signatureText) : null;
    if (signature === null) {
      if (issued !== null && !this.hasExpired(issued)) await this.consumeNonce(fields.nonce, issued.expiresAtMs, caller);
      throw errors.siweSignatureNotHex();
    }
    // A read, not yet the consumption: see above.
    if (issued === null || this.nonces.get(fields.nonce) !== undefined) throw errors.siweRefused('nonceUnknownOrUsed');
    const refusal = this.refuseFields(fields, issued);
    if (refusal !== null) {
      // An expired nonce needs no record to be refused: every later login naming it fails the same check.
      if (!this.hasExpired(issued)) await this.consumeNonce(fields.nonce, issued.expiresAtMs, caller);
      throw refusal;
    }
    // A login: the pool's bounded login share (verify-pool.ts), so logins cannot starve signed orders.
    const recovered = await this.verifyPool
      .recoverPersonalSigner(new TextEncoder().encode(message), signature, 'login')
      .catch((err: unknown) => {
        if (isPoolOverloaded(err)) throw overloaded();
        throw err;
      });
    // Another attempt with this nonce may have spent it while this one was recovered: the first use wins.
    if (!(await this.consumeNonce(fields.nonce, issued.expiresAtMs, caller))) throw errors.siweRefused('nonceUnknownOrUsed');
    if (!recovered.ok) throw new ApiError('INVALID_SIGNATURE');
    if (recovered.address !== address) throw errors.siweRefused('signerNotMessageAddress');
    return recovered.address;
  }

  private hasExpired(nonce: IssuedNonce): boolean {
    return nonce.expiresAtMs <= this.clock.nowMs();
  }

  /** The 401 for the first of nonce expiry, domain, URI, chain, address and message expiry that fails; else null. */
  private refuseFields(fields: SiweFields, nonce: IssuedNonce): ApiError | null {
    const nowMs = this.clock.nowMs();
    if (this.hasExpired(nonce)) return errors.siweRefused('nonceExpired');
    if (fields.domain !== this.config.siwe.domain) return errors.siweRefused('domainMismatch');
    if (fields.uri !== this.config.siwe.uri) return errors.siweRefused('uriMismatch');
    if (fields.chainId !== this.config.siwe.chainId) return errors.siweRefused('chainMismatch');
    if (!nonce.isForAddress) return errors.siweRefused('addressNotChallenged');
    const expiresAtMs = fields.expirationTime === undefined ? NaN : Date.parse(fields.expirationTime);
    if (!(expiresAtMs > nowMs)) return errors.siweRefused('messageExpired');
    if (!(Date.parse(fields.issuedAt) <= nowMs + ISSUED_AT_SKEW_MS)) return errors.siweRefused('issuedInFuture');
    return null;
  }

  /**
   * Records the nonce as used, in the transaction that checks it was not: of two racing logins only one
   * spends it (true); the other finds it used (false). Recorded even when it has just expired: two logins
   * that both passed the expiry check a moment before must still not both win (the sweep deletes the
   * record at its next pass). 503 OVERLOADED, nothing recorded, when the bound of used nonces is held; 429
   * RATE_LIMITED, nothing recorded, when the caller's share of it is.
   */
  private async consumeNonce(nonce: string, expiresAtMs: number, caller: CallerNetworks | null): Promise<boolean> {
    let retryAfterS = 0;
    let isCounted = false;
    let outcome: 'used' | 'full' | 'caller-full' | 'spent';
    try {
      outcome = await this.store.transact(() => {
        if (this.nonces.get(nonce) !== undefined) return 'used';
        if (this.#usedCount >= this.maxUsedNonces) return 'full';
        const nowMs = this.clock.nowMs();
        if (caller !== null && (retryAfterS = this.#spenders.retryAfterS(caller, nowMs)) > 0) return 'caller-full';
        void this.nonces.put(nonce, { expiresAtMs });
        // Counted now, so that logins racing in the same commit see each other against the bounds.
        this.#usedCount++;
        if (caller !== null) this.#spenders.record(caller, expiresAtMs, nowMs);
        isCounted = true;
        return 'spent';
      });
    } catch (error) {
      // The commit failed (a full disk): the nonce was not kept, so it must not count either, or every
      // failed login of the episode would hold a place of the bound until a restart.
      if (isCounted) {
        this.#usedCount--;
        if (caller !== null) this.#spenders.forget(caller, expiresAtMs);
      }
      throw error;
    }
    if (outcome === 'full') throw overloaded();
    if (outcome === 'caller-full') throw rateLimited(retryAfterS);
    return outcome === 'spent';
  }
}

function invalidAddress(): ApiError {
  return errors.notAnAddress('/address');
}
