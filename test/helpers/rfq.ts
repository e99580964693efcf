// Arrange helpers for RFQ tests: markets, request bodies, signed orders (signed by ethers, the independent
// signer), quoting makers, and the money invariant.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { HDNodeWallet, Wallet } from 'ethers';
import { encodeOrder, oddsToE4 } from '../../src/rfq/codec.js';
import { client } from './http.js';
import type { ConnectedMaker } from './makers.js';
import type { TestServer } from './server.js';
import { credit, loginWallet, type TestUser } from './users.js';

export interface LegBody {
  market_id: number;
  direction: 'up' | 'down';
}

/** A fresh OPEN mention market (closes in an hour unless told otherwise). */
export async function openMarket(server: TestServer, bettingClosesAtMs = Date.now() + 3_600_000): Promise<number> {
  const result = await client(server.baseUrl, server.adminToken).post('/v1/admin/mention-markets', {
    name: `market ${randomUUID().slice(0, 8)}`,
    source_kind: 'test',
    source_event_id: randomUUID(),
    source_market_id: randomUUID(),
    betting_closes_at_ms: bettingClosesAtMs,
  });
  assert.equal(result.status, 201, JSON.stringify(result.body));
  return result.body.market_id as number;
}

/** A logged-in taker credited with `fundsMicros`, an open market to bet on, and the taker's API client. */
export async function fundedTaker(server: TestServer, fundsMicros: number) {
  const user = await loginWallet(server);
  await credit(server, user.address, fundsMicros);
  const market = await openMarket(server);
  return { user, market, api: client(server.baseUrl, user.token) };
}

export async function resolveMarket(server: TestServer, marketId: number, outcome: 'YES' | 'NO' | 'VOID') {
  const result = await client(server.baseUrl, server.adminToken).post(`/v1/admin/markets/${marketId}/resolve`, { outcome });
  assert.equal(result.status, 200, JSON.stringify(result.body));
}

export function unsignedBody(legs: LegBody[], overrides: Record<string, unknown> = {}) {
  return { wager_micros: 2_000_000, min_odds: 1.5, legs, shield_on: false, idempotency_key: randomUUID(), ...overrides };
}

export interface OrderFields {
  wager_micros: number;
  min_odds: number;
  legs: LegBody[];
  nonce: number;
  expires_at_ms: number;
  order_type?: 1 | 2;
  shield_on: boolean;
}

/** The order body of POST /v1/rfq, signed over its binary bytes with EIP-191 by `wallet`. */
export async function signedOrder(wallet: HDNodeWallet | Wallet, fields: OrderFields, user = wallet.address) {
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
  const isAnswered = () => maker.socket.received.some((m) => m.type === 'quote_reject' && m.quote_id === probeId);
  const startMs = Date.now();
  while (!isAnswered()) {
    assert.ok(Date.now() - startMs < 5_000, 'the probe quote was not answered');
    await new Promise((r) => setTimeout(r, 5));
  }
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
        maker.send({ type: 'last_look_response', request_id: message.request_id, quote_id: message.quote_id, accept: policy.lastLookAnswer });
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
  const result = await client(server.baseUrl, user.token).get('/v1/user/balance');
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
  assert.ok(b.available >= 0n && b.reserved >= 0n && b.atRisk >= 0n, `negative balance ${JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
  assert.equal(b.available + b.reserved + b.atRisk, netMicros);
  return b;
}
