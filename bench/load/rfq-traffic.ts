// Load generator, main thread. The RFQ requests a scenario sends, prepared before its clock starts:
// unsigned bodies (fresh idempotency keys) and signed orders (signed here, since signing is the client's
// cost, not the service's), spread round-robin over several users so every shard gets work (takers are
// sharded by user id).
import { randomUUID } from 'node:crypto';
import type { Pool } from 'undici';
import { encodeOrder } from '../../src/contract/order-codec.js';
import type { BenchUser } from './fixtures.js';
import { send } from './http-client.js';
import { encodeRequest, type RawHttpPool } from './raw-http.js';
import { personalSign, signatureBase64 } from './sign.js';

export const WAGER_MICROS = 1_000_000;
/** Plenty for every RFQ a full run sends at WAGER_MICROS each (a million of them per user). */
export const CREDIT_MICROS = 1_000_000_000_000;
const MIN_ODDS = 1.5;
const LEGS_PER_RFQ = 3;

export interface PreparedRfq {
  path: string;
  headers: Record<string, string>;
  body: string;
}

function legsFor(i: number, marketIds: readonly number[]) {
  const legs = [];
  for (let k = 0; k < LEGS_PER_RFQ; k++) {
    legs.push({ market_id: marketIds[(i + k) % marketIds.length]!, direction: (i + k) % 2 === 0 ? 'up' : 'down' });
  }
  return legs;
}

function headersOf(user: BenchUser): Record<string, string> {
  return { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' };
}

/** `count` unsigned RFQ requests; waitMs > 0 holds each answer until the RFQ is terminal. */
export function prepareUnsigned(users: readonly BenchUser[], marketIds: readonly number[], count: number, waitMs: number): PreparedRfq[] {
  const out: PreparedRfq[] = [];
  const path = waitMs > 0 ? `/v1/rfq/unsigned?wait_ms=${waitMs}` : '/v1/rfq/unsigned';
  const headers = users.map(headersOf);
  for (let i = 0; i < count; i++) {
    const body = {
      wager_micros: WAGER_MICROS,
      min_odds: MIN_ODDS,
      legs: legsFor(i, marketIds),
      shield_on: false,
      idempotency_key: randomUUID(),
    };
    out.push({ path, headers: headers[i % users.length]!, body: JSON.stringify(body) });
  }
  return out;
}

/** Per-user nonce counters, so every signed order in a run has a fresh (wallet, nonce) replay key. */
export class NonceSource {
  readonly #next = new Map<string, number>();
  take(address: string): number {
    const nonce = this.#next.get(address) ?? 1;
    this.#next.set(address, nonce + 1);
    return nonce;
  }
}

/** `count` signed orders, signed now (before the measured run). */
export function prepareSigned(
  users: readonly BenchUser[],
  marketIds: readonly number[],
  count: number,
  waitMs: number,
  nonces: NonceSource,
  expiresAtMs: number,
): PreparedRfq[] {
  const out: PreparedRfq[] = [];
  const path = waitMs > 0 ? `/v1/rfq?wait_ms=${waitMs}` : '/v1/rfq';
  const headers = users.map(headersOf);
  for (let i = 0; i < count; i++) {
    const user = users[i % users.length]!;
    const legs = legsFor(i, marketIds);
    const nonce = nonces.take(user.address);
    const bytes = encodeOrder({
      user: user.address,
      wagerMicros: WAGER_MICROS,
      minOddsE4: MIN_ODDS * 10_000,
      nonce,
      expiresAtMs,
      orderType: 2,
      shieldOn: false,
      legs: legs.map((l) => ({ marketId: l.market_id, direction: l.direction as 'up' | 'down' })),
    });
    const order = {
      user: user.address,
      wager_micros: WAGER_MICROS,
      min_odds: MIN_ODDS,
      legs,
      nonce,
      expires_at_ms: expiresAtMs,
      order_type: 2,
      shield_on: false,
      signature: signatureBase64(personalSign(user.privateKey, bytes)),
    };
    out.push({ path, headers: headers[i % users.length]!, body: JSON.stringify({ order }) });
  }
  return out;
}

export interface RfqAnswer {
  status: number;
  text: string;
}

export function postRfq(pool: Pool, rfq: PreparedRfq): Promise<RfqAnswer> {
  return send(pool, 'POST', rfq.path, rfq.headers, rfq.body);
}

/** The RFQs as request bytes for a RawHttpPool, encoded before a step's clock starts. */
export function encodeRfqs(port: number, rfqs: readonly PreparedRfq[]): Buffer[] {
  return rfqs.map((rfq) => encodeRequest(port, 'POST', rfq.path, rfq.headers, rfq.body));
}

export async function postRfqRaw(pool: RawHttpPool, request: Buffer): Promise<RfqAnswer> {
  const { status, body } = await pool.request(request);
  return { status, text: body.toString('utf8') };
}

/** A new RFQ answered with its terminal result `status` (wait_ms held it). */
let reportedMismatches = 0;

/** True when the answer is 201 with that status; the first few other answers are printed (to see why). */
export function isTerminalWith(answer: RfqAnswer, status: string): boolean {
  const isExpected = answer.status === 201 && answer.text.includes(`"status":"${status}"`);
  if (!isExpected && reportedMismatches++ < 3) console.error(`unexpected RFQ answer: ${answer.status} ${answer.text.slice(0, 300)}`);
  return isExpected;
}

export function requestIdOf(answer: RfqAnswer): string {
  return (JSON.parse(answer.text) as { request_id: string }).request_id;
}
