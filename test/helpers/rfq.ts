// Arrange helpers for RFQ tests: a funded taker, request bodies, signed orders (signed by ethers, the
// independent signer), quoting makers, and the money invariant. Markets: helpers/markets.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { HDNodeWallet, Wallet } from 'ethers';
import type { Static } from '@sinclair/typebox';
import { encodeOrder, oddsToE4 } from '../../src/contract/order-codec.js';
import type { Leg, Order } from '../../src/contract/rfq.js';
import type { BalanceResponse } from '../../src/contract/users.js';
import { client } from './http.js';
import type { ConnectedMaker } from './makers.js';
import { createMarket } from './markets.js';
import type { TestServer } from './server.js';
import { waitFor } from './wait.js';
import { credit, loginWallet, type TestUser } from './users.js';

/** A leg of an RFQ body (src/contract/rfq.ts). */
export type LegBody = Leg;

/** A logged-in taker credited with `fundsMicros`, an open market to bet on, and the taker's API client. */
export async function fundedTaker(server: TestServer, fundsMicros: number) {
  const user = await loginWallet(server);
  await credit(server, user.address, fundsMicros);
  const market = (await createMarket(server)).market_id;
  return { user, market, api: client(server.baseUrl, user.token) };
}

export function unsignedBody(legs: LegBody[], overrides: Record<string, unknown> = {}) {
  return { wager_micros: 2_000_000, min_odds: 1.5, legs, shield_on: false, idempotency_key: randomUUID(), ...overrides };
}

/** An order of POST /v1/rfq (src/contract/rfq.ts) before it is signed: without `user` and `signature`. */
export type OrderFields = Omit<Order, 'user' | 'signature'>;

/** The order body of POST /v1/rfq, signed over its binary bytes with EIP-191 by `wallet`. */
export async function signedOrder(wallet: HDNodeWallet | Wallet, fields: OrderFields, user = wallet.address): Promise<Order> {
  const bytes = encodeOrder({
    user: user.toLowerCase().startsWith('0x') ? user.toLowerCase() : `0x${user.toLowerCase()}`,
    wagerMicros: fields.wager_micros,
    minOddsE4: oddsToE4(fields.min_odds)!,
    nonce: fields.nonce,
    expiresAtMs: fields.expires_at_ms,
    orderType: fields.order_type ?? 2,
    shieldOn: fields.shield_on,
    legs: fields.legs.map((l) => ({ marketId: l.market_id, direction: l.direction })),
  });
  const signatureHex = await wallet.signMessage(bytes);
  return { ...fields, user, signature: Buffer.from(signatureHex.slice(2), 'hex').toString('base64') };
}

export interface QuotePolicy {
  odds: number;
  maxWagerMicros?: string;
  isLastLook?: boolean;
  /** What to answer a last look with; undefined = stay silent. */
  lastLookAnswer?: boolean;
  /** Decline instead of quoting. */
  isDecline?: boolean;
}

/**
 * The ids of every `rfq` the maker was sent so far. First a round trip on its socket (a quote for an id no
 * shard owns, answered by the main thread at once): frames on one socket keep their order, so every `rfq` sent
 * before now has arrived. Reads `received`, so it works beside autoQuote, which takes every message.
 */
export async function rfqIdsHeard(maker: ConnectedMaker): Promise<string[]> {
  const probeId = `probe-${randomUUID()}`;
  maker.send({ type: 'quote', request_id: 'ffffffff-0000-7000-8000-000000000000', quote_id: probeId, odds: 2, max_wager_micros: '1' });
  await waitFor(() => maker.socket.received.some((m) => m.type === 'quote_reject' && m.quote_id === probeId), {
    intervalMs: 5,
    what: 'the answer to the probe quote',
  });
  return maker.socket.received.filter((m) => m.type === 'rfq').map((m) => (m as { request_id: string }).request_id);
}

/** Makes `maker` answer every rfq it receives with `policy`, until stop() is called or its socket closes. */
export function autoQuote(maker: ConnectedMaker, policy: QuotePolicy): { stop(): void } {
  let isStopped = false;
  void (async () => {
    while (!isStopped && maker.socket.isOpen) {
      const message = await maker.socket.next(undefined, 60_000).catch(() => null);
      if (message === null || isStopped) return;
      if (message.type === 'rfq') {
        if (policy.isDecline === true) {
          maker.send({ type: 'decline', request_id: message.request_id });
          continue;
        }
        maker.send({
          type: 'quote',
          request_id: message.request_id,
          quote_id: `q-${message.request_id.slice(0, 8)}`,
          odds: policy.odds,
          max_wager_micros: policy.maxWagerMicros ?? '1000000000',
          last_look: policy.isLastLook ?? false,
        });
      } else if (message.type === 'last_look' && policy.lastLookAnswer !== undefined) {
        maker.send({
          type: 'last_look_response',
          request_id: message.request_id,
          quote_id: message.quote_id,
          accept: policy.lastLookAnswer,
        });
      }
    }
  })();
  return { stop: () => void (isStopped = true) };
}

export interface BalanceView {
  available: bigint;
  reserved: bigint;
  atRisk: bigint;
}

export async function balanceOf(server: TestServer, user: TestUser): Promise<BalanceView> {
  const result = await client(server.baseUrl, user.token).get<Static<typeof BalanceResponse>>('/v1/user/balance');
  assert.equal(result.status, 200);
  return {
    available: BigInt(result.body.available_micros),
    reserved: BigInt(result.body.reserved_micros),
    atRisk: BigInt(result.body.at_risk_micros),
  };
}

/**
 * Contract section 4: available + reserved + at_risk = credits − settled losses + wins, nothing negative.
 * `netMicros` is what the test knows the user should hold in total (credits + settled pnl).
 */
export async function assertMoneyInvariant(server: TestServer, user: TestUser, netMicros: bigint): Promise<BalanceView> {
  const b = await balanceOf(server, user);
  assert.ok(
    b.available >= 0n && b.reserved >= 0n && b.atRisk >= 0n,
    `negative balance ${JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
  );
  assert.equal(b.available + b.reserved + b.atRisk, netMicros);
  return b;
}
