// Main thread. Admission of new RFQs (contract section 6, step 1): everything that needs no state a shard
// owns — schema (the route), signature and signer (on the verify pool, never here), expiry, legs exist and
// are OPEN, no duplicate market, wager range. The first of those checks that fails is not thrown here but
// carried to the owning shard as the create's `refusal`: only the shard knows whether the request is a replay
// (then it answers 200 whatever the refusal, contract section 6), and it alone decides the balance, mints the
// id and reserves the wager in the durable write that creates the RFQ. A failure leaves nothing behind.
import { hash } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import { ApiError, errors, overloaded } from '../lib/errors.js';
import { parseAddress } from '../crypto/address.js';
import { parseSignatureBase64 } from '../crypto/signature.js';
import { isPoolOverloaded, type VerifyPool } from '../crypto/verify-pool.js';
import type { UserPrincipal } from '../contract/principal.js';
import { isOpenForBetting } from '../markets/market-table.js';
import type { Markets } from '../markets/markets.js';
import { TOLERANCE_BPS, type PreferencesStore } from '../preferences/preferences.js';
import type { UserRecord } from '../records/users.js';
import { DEFAULT_ORDER_TYPE, type Order, type UnsignedRfqRequest, type Leg } from '../contract/rfq.js';
import { canonicalUuid } from '../contract/common.js';
import { encodeOrder, oddsToE4, type SignableOrder } from '../contract/order-codec.js';
import type { CreateCommand, Refusal } from './messages.js';
import { signedReplayKey, unsignedReplayKey, type RfqLeg } from '../records/rfqs.js';
import type { RfqMetrics } from './metrics.js';

export type { CreateCommand } from './messages.js';

export interface AdmissionDeps {
  config: Pick<Config, 'wagerMinMicros' | 'wagerMaxMicros'>;
  clock: Clock;
  markets: Pick<Markets, 'get'>;
  /** A user's tier (a cluster's gateway reads it from its copy of the user's session). */
  users: { get(userId: string): Pick<UserRecord, 'tier'> | undefined };
  preferences: Pick<PreferencesStore, 'get'>;
  verifyPool: VerifyPool;
  metrics: RfqMetrics;
}

export class Admission {
  constructor(private readonly deps: AdmissionDeps) {}

  unsigned(principal: UserPrincipal, body: UnsignedRfqRequest): CreateCommand {
    const minOddsE4 = requireOddsE4(body.min_odds, '/min_odds');
    const orderType = body.order_type ?? DEFAULT_ORDER_TYPE;
    const legs = toLegs(body.legs);
    const replayKey = unsignedReplayKey(principal.userId, canonicalUuid(body.idempotency_key));
    const contentHash = sha256Hex(
      JSON.stringify([body.wager_micros, minOddsE4, orderType, body.shield_on, legs.map((l) => [l.marketId, l.direction])]),
    );
    // Snapshotted now: a later change of preferences never touches this RFQ (contract sections 6 and 9).
    const preferences = this.deps.preferences.get(principal.userId);
    return this.admit(principal, {
      rfqKind: 'unsigned',
      replayKey,
      contentHash,
      legs,
      wagerMicros: body.wager_micros,
      minOddsE4,
      toleranceBps: TOLERANCE_BPS[preferences.quote_tolerance],
      orderType,
      isShielded: body.shield_on || preferences.anonymous_mode_enabled,
      expiresAtMs: 0,
    });
  }

  async signed(principal: UserPrincipal, order: Order): Promise<CreateCommand> {
    // The order's fields first (contract section 6: schema, then the signature): a bad address or odds is
    // VALIDATION_FAILED at its path whatever the signature holds.
    const signable = toSignableOrder(order);
    const signature = parseSignatureBase64(order.signature);
    if (signature === null) throw errors.orderSignatureNotBase64();
    const { user, minOddsE4, orderType, legs } = signable;
    const bytes = encodeOrder(signable);
    const startNs = process.hrtime.bigint();
    const recovered = await this.deps.verifyPool.recoverPersonalSigner(bytes, signature).catch((err: unknown) => {
      if (isPoolOverloaded(err)) throw overloaded();
      throw err;
    });
    this.deps.metrics.verifySeconds.observe(Number(process.hrtime.bigint() - startNs) / 1e9);
    if (!recovered.ok) throw errors.orderSignatureRejected(recovered.reason);
    if (recovered.address !== user) throw errors.signerNotOrderUser();
    if (user !== principal.wallet) throw errors.orderUserNotSessionWallet();
    return this.admit(principal, {
      rfqKind: 'signed',
      replayKey: signedReplayKey(user, order.nonce),
      // The signed bytes are the order: same (wallet, nonce) with other bytes is a conflict.
      contentHash: sha256Hex(bytes),
      legs,
      wagerMicros: order.wager_micros,
      minOddsE4,
      toleranceBps: 0,
      orderType,
      // The user's anonymous mode applies to signed orders too (contract section 6, Shield).
      isShielded: order.shield_on || this.deps.preferences.get(principal.userId).anonymous_mode_enabled,
      expiresAtMs: order.expires_at_ms,
    });
  }

  private admit(
    principal: UserPrincipal,
    parts: Omit<CreateCommand, 'userId' | 'wallet' | 'tier' | 'wagerMicros' | 'admittedAtMs' | 'refusal'> & { wagerMicros: number },
  ): CreateCommand {
    // Field by field rather than `{ ...parts, ... }`: V8 keeps an object made by a leading spread and then
    // given more properties alive until a full collection (docs/performance.md, "Allocation shapes").
    return {
      rfqKind: parts.rfqKind,
      replayKey: parts.replayKey,
      contentHash: parts.contentHash,
      legs: parts.legs,
      wagerMicros: String(parts.wagerMicros),
      minOddsE4: parts.minOddsE4,
      toleranceBps: parts.toleranceBps,
      orderType: parts.orderType,
      isShielded: parts.isShielded,
      expiresAtMs: parts.expiresAtMs,
      userId: principal.userId,
      wallet: principal.wallet,
      tier: this.deps.users.get(principal.userId)?.tier ?? 0,
      admittedAtMs: this.deps.clock.nowMs(),
      refusal: this.refusalOf(parts),
    };
  }

  /** The first check that fails, in the contract's order (section 6.1: expiry before legs and wager), or null. */
  private refusalOf(parts: Pick<CreateCommand, 'rfqKind' | 'expiresAtMs' | 'legs'> & { wagerMicros: number }): Refusal | null {
    const nowMs = this.deps.clock.nowMs();
    if (parts.rfqKind === 'signed' && parts.expiresAtMs <= nowMs) return refusal(new ApiError('ORDER_EXPIRED'));
    const legRefusal = this.checkLegs(parts.legs, nowMs);
    if (legRefusal !== null) return legRefusal;
    const { wagerMinMicros, wagerMaxMicros } = this.deps.config;
    if (parts.wagerMicros < wagerMinMicros || parts.wagerMicros > wagerMaxMicros) {
      return refusal(errors.wagerOutOfRange(wagerMinMicros, wagerMaxMicros));
    }
    return null;
  }

  private checkLegs(legs: readonly RfqLeg[], nowMs: number): Refusal | null {
    const seen = new Set<number>();
    for (const leg of legs) {
      const market = this.deps.markets.get(leg.marketId);
      if (market === undefined) return refusal(errors.marketNotFound(leg.marketId));
      if (!isOpenForBetting(market, nowMs)) return refusal(errors.marketNotOpen(leg.marketId));
      if (seen.has(leg.marketId)) return refusal(errors.duplicateLeg(leg.marketId));
      seen.add(leg.marketId);
    }
    return null;
  }
}
/**
 * The fields of an order's signing bytes as admission reads them: the address made canonical (its EIP-55
 * checksum checked), min_odds made exact, FOK when order_type is omitted. VALIDATION_FAILED on a bad address
 * or odds that do not fit the signing format. The signature is not read here.
 */
export function toSignableOrder(order: Omit<Order, 'signature'>): SignableOrder & { legs: RfqLeg[] } {
  const user = parseAddress(order.user);
  if (user === null) throw errors.badChecksum('/order/user');
  return {
    user,
    wagerMicros: order.wager_micros,
    minOddsE4: requireOddsE4(order.min_odds, '/order/min_odds'),
    nonce: order.nonce,
    expiresAtMs: order.expires_at_ms,
    orderType: order.order_type ?? DEFAULT_ORDER_TYPE,
    shieldOn: order.shield_on,
    legs: toLegs(order.legs),
  };
}

function toLegs(legs: readonly Leg[]): RfqLeg[] {
  return legs.map((leg) => ({ marketId: leg.market_id, direction: leg.direction }));
}

function requireOddsE4(minOdds: number, path: string): number {
  const e4 = oddsToE4(minOdds);
  if (e4 === null || e4 === 0) throw errors.oddsNotSignable(path);
  return e4;
}

/** A refusal crosses to the shard as plain data (an Error does not survive structured clone whole). */
function refusal(err: ApiError): Refusal {
  return { code: err.code, message: err.message };
}

/** One-shot: no Hash object, whose native half every young-generation collection visits. */
function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data);
}
